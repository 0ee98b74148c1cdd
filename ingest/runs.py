"""Running arXiv API queries into the catalog, one recorded IngestRun each."""

import datetime
import logging
import uuid
from collections.abc import Callable, Iterator, Sequence
from itertools import islice

from django.conf import settings
from django.db import transaction
from django.db.models import Case, Q, Value, When
from django.utils import timezone

from catalog.enrichment.queue import queue_enrichment
from catalog.models import Tag
from ingest.arxiv_api import FetchError, SkippedEntry, fetch_updated
from ingest.models import IngestRun, IngestSource
from ingest.records import ArxivRecord
from ingest.tagging import apply_tag_rules
from ingest.upsert import upsert_records

logger = logging.getLogger(__name__)

COUNTS = ["fetched", "created", "updated", "unchanged", "skipped"]
# The run's error text lists at most this many skipped entries.
SKIPPED_LISTED = 50
MAX_REACHED = (
    "Stopped at the maximum of {max_results} results before reaching entries seen by the "
    "previous run, so papers in between may be missing: raise the maximum or run the "
    "source more often."
)


class AlreadyRunning(Exception):
    pass


class ClaimLost(Exception):
    pass


def run_source(*, source: IngestSource) -> IngestRun:
    """Run the source's query now; raise AlreadyRunning if a live run holds it."""
    token = _claim(source)
    completed = False
    try:
        run = IngestRun.objects.create(kind=IngestRun.Kind.API, source=source, query=source.query)
        since = None
        if source.last_success_at:
            since = source.last_success_at - datetime.timedelta(
                hours=settings.ARXIV_UPDATED_LOOKBACK_HOURS
            )
        completed, problems = _ingest(
            run,
            fetch_updated(query=source.query, max_results=source.max_results, since=since),
            tags=list(source.tags.all()),
            after_batch=lambda: _refresh_claim(source, token),
        )
        if completed and since and run.fetched >= source.max_results:
            problems.append(MAX_REACHED.format(max_results=source.max_results))
        _finish(run, problems=problems)
    finally:
        # Only a run that read through to its end moves the next run's start.
        IngestSource.objects.filter(pk=source.pk, claim_token=token).update(
            claimed_at=None,
            claim_token="",
            **({"last_success_at": run.started_at} if completed else {}),
        )
    return run


def run_query(*, query: str, max_results: int) -> IngestRun:
    """Run an ad-hoc query now, for an operator trying a query before saving it."""
    run = IngestRun.objects.create(kind=IngestRun.Kind.API, query=query)
    _, problems = _ingest(run, fetch_updated(query=query, max_results=max_results), tags=[])
    _finish(run, problems=problems)
    return run


def _ingest(
    run: IngestRun,
    entries: Iterator[ArxivRecord | SkippedEntry],
    *,
    tags: Sequence[Tag],
    after_batch: Callable[[], None] = lambda: None,
) -> tuple[bool, list[str]]:
    """Store entries page by page, so a fault keeps what came before it.

    Returns whether every entry was read and what went wrong on the way.
    """
    skipped: list[SkippedEntry] = []
    problems: list[str] = []
    completed = False
    try:
        while batch := list(islice(entries, settings.ARXIV_PAGE_SIZE)):
            records = [entry for entry in batch if isinstance(entry, ArxivRecord)]
            skipped += [entry for entry in batch if isinstance(entry, SkippedEntry)]
            with transaction.atomic():
                result = upsert_records(records, tags=tags)
                apply_tag_rules(paper_ids=result.paper_ids)
                queue_enrichment(result.paper_ids)
                run.fetched += len(batch)
                run.skipped += len(batch) - len(records)
                run.created += result.created
                run.updated += result.updated
                run.unchanged += result.unchanged
                run.save(update_fields=COUNTS)
            after_batch()
        completed = True
    except FetchError as err:
        problems.append(f"Fetching stopped: {err}")
    except ClaimLost as err:
        problems.append(str(err))
    except Exception as err:
        _finish(run, problems=[f"Crashed: {err!r}"])
        raise
    if skipped:
        listed = "\n".join(map(str, skipped[:SKIPPED_LISTED]))
        more = len(skipped) - SKIPPED_LISTED
        problems.append(
            f"Skipped {len(skipped)} unreadable entries:\n{listed}"
            + (f"\n… and {more} more" if more > 0 else "")
        )
    return completed, problems


def _finish(run: IngestRun, *, problems: list[str]) -> None:
    if problems and run.fetched == run.skipped:
        run.status = IngestRun.Status.FAILED
    elif problems:
        run.status = IngestRun.Status.PARTIAL
    else:
        run.status = IngestRun.Status.SUCCEEDED
    run.error = "\n\n".join(problems)
    run.finished_at = timezone.now()
    run.save(update_fields=["status", "error", "finished_at"])
    logger.log(
        logging.WARNING if problems else logging.INFO,
        "Ingest run %s %s: %s %s",
        run.pk,
        run.status,
        {name: getattr(run, name) for name in COUNTS},
        run.error,
    )


def _claim(source: IngestSource) -> str:
    now = timezone.now()
    stale = now - datetime.timedelta(seconds=settings.INGEST_CLAIM_STALE_SECONDS)
    token = uuid.uuid4().hex
    claimed = (
        IngestSource.objects.filter(pk=source.pk)
        .filter(Q(claimed_at__isnull=True) | Q(claimed_at__lt=stale))
        .update(claimed_at=now, claim_token=token)
    )
    if not claimed:
        raise AlreadyRunning(f"{source} is already running")
    # Runs still marked running belong to a worker that died holding the claim.
    IngestRun.objects.filter(source=source, status=IngestRun.Status.RUNNING).update(
        status=Case(
            When(fetched=0, then=Value(IngestRun.Status.FAILED)),
            default=Value(IngestRun.Status.PARTIAL),
        ),
        finished_at=now,
        error="Interrupted: the worker stopped before the run finished.",
    )
    return token


def _refresh_claim(source: IngestSource, token: str) -> None:
    refreshed = IngestSource.objects.filter(pk=source.pk, claim_token=token).update(
        claimed_at=timezone.now()
    )
    if not refreshed:
        raise ClaimLost("Stopped: the run stalled so long that another worker took it over.")
