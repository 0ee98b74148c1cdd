"""Background discovery: thin wrappers of discovery.neighbours and discovery.vectors."""

import logging
from typing import Any

from celery import Task, shared_task

from core import background
from core.claims import claimed
from discovery import neighbours
from discovery.vectors import VectorsFailed, VectorsUnavailable, build_vectors, refit_reason

logger = logging.getLogger(__name__)


@shared_task(
    soft_time_limit=300,
    time_limit=360,
    autoretry_for=(VectorsUnavailable,),
    retry_backoff=30,
    retry_backoff_max=1800,
    retry_jitter=True,
    max_retries=6,
)
def paper_neighbours(paper_ids: list[int]) -> dict[str, Any]:
    """Vectors and similar papers of papers that just arrived or changed, and
    their place in older papers' lists; the whole catalog refitted and rebuilt
    (refit_discovery) when they show it has moved on from the model."""
    try:
        rows = neighbours.neighbours_for(paper_ids=paper_ids)
    except VectorsFailed as exc:
        logger.error("No vectors for papers %s: %s", paper_ids, exc)
        return {"papers": paper_ids, "error": str(exc)}
    reason = refit_reason()
    if reason:
        logger.info("Refitting the vectors: %s", reason)
        background.send(refit_discovery)
    return {"papers": paper_ids, "rows": rows, "refit": reason}


@shared_task(bind=True, soft_time_limit=6 * 3600, time_limit=6 * 3600 + 60)
def refresh_discovery(self: Task[[], dict[str, Any]]) -> dict[str, Any]:
    """Nightly: refit the tf-idf model when due, embed what is missing, rebuild every neighbour.

    One delivery at a time (core.claims). Delivered again after its worker
    died, it resumes: the papers already embedded keep their vectors, and
    every neighbour is rebuilt anyway.
    """
    return _refresh(self, only_to_refit=False)


@shared_task(bind=True, soft_time_limit=6 * 3600, time_limit=6 * 3600 + 60)
def refit_discovery(self: Task[[], dict[str, Any]]) -> dict[str, Any]:
    """As refresh_discovery, queued as soon as new papers show a refit is due;
    nothing once it is done (by this delivery, an earlier one or the night's)."""
    return _refresh(self, only_to_refit=True)


def _refresh(task: Task[[], dict[str, Any]], *, only_to_refit: bool) -> dict[str, Any]:
    with claimed(task, name="refresh_discovery") as held:
        if not held:
            logger.info("Discovery is being refreshed by another delivery; leaving it to that one.")
            return {"skipped": "running elsewhere"}
        if only_to_refit and not refit_reason():
            return {"skipped": "the model fits the catalog"}
        vector_run = build_vectors(show_progress=False)
        neighbour_run = neighbours.build_all(show_progress=False)
    return {
        "fitted": vector_run.fitted,
        "vectors": vector_run.stored,
        "papers": neighbour_run.papers,
        "rows": neighbour_run.rows,
    }
