"""Background work for readers: thin wrappers of accounts.services."""

import logging
from typing import Any

from celery import Task, shared_task

from accounts import services, votes
from core.claims import claimed

logger = logging.getLogger(__name__)


@shared_task(bind=True, soft_time_limit=1800, time_limit=1860)
def send_due_digests(self: Task[[], int]) -> int:
    """Hourly. One delivery at a time (core.claims); each digest is claimed on
    its own too, so one delivered again after its worker died sends only
    those still due."""
    with claimed(self, name="send_due_digests") as held:
        if not held:
            logger.info("Digests are being sent by another delivery; leaving them to that one.")
            return 0
        return len(services.send_due_digests().sent)


@shared_task(bind=True, soft_time_limit=4 * 3600, time_limit=4 * 3600 + 60)
def refresh_recommendations(
    self: Task[[list[int] | None], dict[str, Any]], user_ids: list[int] | None = None
) -> dict[str, Any]:
    """Nightly for every reader, one delivery at a time (core.claims), each
    delivery recomputing every list whole; for one reader, unclaimed, when
    their For-you tab is first opened."""
    if user_ids is not None:
        run = services.refresh_recommendations(user_ids=user_ids)
        return {"readers": run.readers, "rows": run.rows, "seconds": round(run.seconds, 1)}
    with claimed(self, name="refresh_recommendations") as held:
        if not held:
            logger.info("For you is being refreshed by another delivery; leaving it to that one.")
            return {"skipped": "running elsewhere"}
        run = services.refresh_recommendations()
    return {"readers": run.readers, "rows": run.rows, "seconds": round(run.seconds, 1)}


@shared_task(soft_time_limit=240, time_limit=270)
def refresh_vote_counts() -> int:
    # Scheduled every five minutes (config/schedule.py), like trending; a run
    # later than that would only overlap the next.
    return votes.refresh_vote_counts()
