"""Celery tasks for ingest: thin, idempotent, queued once the transaction commits."""

import logging

from celery import shared_task

from catalog import background
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


def queue_tag_rules(*, rule_ids: list[int] | None = None) -> None:
    background.send(reapply_tag_rules, rule_ids)


def queue_link_request(*, request_id: int) -> None:
    background.send(add_papers_by_link, request_id)
