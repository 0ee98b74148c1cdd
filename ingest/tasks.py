"""Celery tasks for ingest: thin, idempotent, queued once the transaction commits."""

import logging

from celery import shared_task
from django.utils import timezone

from core import background
from ingest import links, runs, tagging
from ingest.models import IngestSource, LinkRequest

logger = logging.getLogger(__name__)


@shared_task(acks_late=True, ignore_result=True, soft_time_limit=3600, time_limit=3660)
def ingest_source(source_id: int) -> None:
    source = IngestSource.objects.filter(pk=source_id).first()
    if source is None:
        logger.warning("Ingest source %s no longer exists; nothing to run.", source_id)
        return
    try:
        runs.run_source(source=source)
    except runs.AlreadyRunning:
        logger.info("Ingest source %s is already running; leaving it to that run.", source)


@shared_task(acks_late=True, ignore_result=True, soft_time_limit=1800, time_limit=1860)
def read_source_listing(source_id: int) -> None:
    source = IngestSource.objects.filter(pk=source_id).first()
    if source is None:
        logger.warning("Ingest source %s no longer exists; no listing to read.", source_id)
        return
    try:
        runs.run_listing(source=source)
    except runs.AlreadyRunning:
        logger.info("Ingest source %s is busy; the next check reads its listing.", source)


@shared_task(ignore_result=True, soft_time_limit=60, time_limit=90)
def check_announcements() -> int:
    """Queue a listing read for every source the latest announcement has not reached.

    Beat calls this every few minutes in the hours after arXiv's 20:00 US
    Eastern announcements (the schedules registered by the migration), so a
    listing is read within minutes of coming out, and retried until it does.
    """
    due = runs.sources_due(now=timezone.now())
    for source_id in due:
        background.send(read_source_listing, source_id)
    return len(due)


@shared_task(ignore_result=True, soft_time_limit=50, time_limit=60)
def interrupt_stale_runs() -> int:
    """Mark interrupted the runs whose worker died, releasing their sources'
    claims (beat calls this every minute, on the default queue)."""
    return runs.interrupt_stale_runs()


@shared_task(acks_late=True, ignore_result=True, soft_time_limit=3600, time_limit=3660)
def reapply_tag_rules(rule_ids: list[int] | None = None) -> None:
    added = tagging.apply_tag_rules(rule_ids=rule_ids)
    logger.info("Tag rules %s added %d tags across the catalog.", rule_ids or "(all)", added)


@shared_task(acks_late=True, ignore_result=True, soft_time_limit=3600, time_limit=3660)
def add_papers_by_link(request_id: int) -> None:
    request = (
        LinkRequest.objects.select_related("run", "requested_by").filter(pk=request_id).first()
    )
    if request is None:
        logger.warning("Link request %s no longer exists; nothing to add.", request_id)
        return
    links.add_papers(request)


def queue_source_run(*, source_id: int) -> None:
    background.send(ingest_source, source_id)


def queue_listing_read(*, source_id: int) -> None:
    background.send(read_source_listing, source_id)


def queue_tag_rules(*, rule_ids: list[int] | None = None) -> None:
    background.send(reapply_tag_rules, rule_ids)


def queue_link_request(*, request_id: int) -> None:
    background.send(add_papers_by_link, request_id)
