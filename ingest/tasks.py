"""Celery tasks for ingest: thin, idempotent, queued once the transaction commits."""

import logging

from celery import shared_task
from django.db import transaction

from ingest import runs, tagging
from ingest.models import IngestSource

logger = logging.getLogger(__name__)


@shared_task(acks_late=True, ignore_result=True)
def ingest_source(source_id: int) -> None:
    source = IngestSource.objects.filter(pk=source_id).first()
    if source is None:
        logger.warning("Ingest source %s no longer exists; nothing to run.", source_id)
        return
    try:
        runs.run_source(source=source)
    except runs.AlreadyRunning:
        logger.info("Ingest source %s is already running; leaving it to that run.", source)


@shared_task(acks_late=True, ignore_result=True)
def reapply_tag_rules(rule_ids: list[int] | None = None) -> None:
    added = tagging.apply_tag_rules(rule_ids=rule_ids)
    logger.info("Tag rules %s added %d tags across the catalog.", rule_ids or "(all)", added)


def queue_source_run(*, source_id: int) -> None:
    transaction.on_commit(lambda: ingest_source.delay(source_id))


def queue_tag_rules(*, rule_ids: list[int] | None = None) -> None:
    transaction.on_commit(lambda: reapply_tag_rules.delay(rule_ids))
