"""Ingest runs: a reader's batches fed through the pipeline into one IngestRun each.

- run_source / run_query: an arXiv API query (a saved source, claimed so no
  two workers run it at once, or an operator's ad-hoc query);
- harvest_oai: OAI-PMH over a period, resumable;
- import_snapshot: arXiv's metadata snapshot file.
"""

import datetime
import uuid
from pathlib import Path

from django.conf import settings
from django.db.models import Case, Q, Value, When
from django.utils import timezone

from catalog.progress import Progress
from ingest import arxiv_api, oai, snapshot
from ingest.http import ArxivHttp
from ingest.models import IngestRun, IngestSource, OaiHarvest
from ingest.pipeline import WORKERS, RunStopped, ingest, start_run
from ingest.records import RecordFilter, Skipped

SNAPSHOT_BATCH_SIZE = 2000
MAX_REACHED = (
    "Stopped at the maximum of {max_results} results before reaching entries seen by the "
    "previous run, so papers in between may be missing: raise the maximum or run the "
    "source more often."
)


class AlreadyRunning(Exception):
    pass


def run_source(*, source: IngestSource) -> IngestRun:
    """Run the source's query now; raise AlreadyRunning if a live run holds it."""
    token = _claim(source)
    completed = False
    try:
        run = start_run(kind=IngestRun.Kind.API, source=source, query=source.query)
        since = None
        if source.last_success_at:
            since = source.last_success_at - datetime.timedelta(
                hours=settings.ARXIV_UPDATED_LOOKBACK_HOURS
            )

        def unseen_gap(run: IngestRun, completed: bool) -> list[str]:
            if completed and since and run.fetched >= source.max_results:
                return [MAX_REACHED.format(max_results=source.max_results)]
            return []

        completed = ingest(
            run,
            arxiv_api.read_query(query=source.query, max_results=source.max_results, since=since),
            tags=list(source.tags.all()),
            after_batch=lambda batch: _refresh_claim(source, token),
            final_checks=unseen_gap,
            for_review=source.needs_review,
        )
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
    run = start_run(kind=IngestRun.Kind.API, query=query)
    ingest(run, arxiv_api.read_query(query=query, max_results=max_results))
    return run


def harvest_oai(
    *,
    from_date: datetime.date,
    until_date: datetime.date | None = None,
    set_spec: str = "",
    progress: Progress | None = None,
    on_skip=lambda skipped: None,
    http: ArxivHttp | None = None,
) -> IngestRun:
    """Harvest the records changed in the period, resuming an unfinished harvest of it.

    A resumption token the server no longer knows starts the period over, once:
    what was stored stays, and unchanged papers cost no writes.
    """
    state = (
        OaiHarvest.objects.filter(
            set_spec=set_spec, from_date=from_date, until_date=until_date, completed=False
        )
        .order_by("-started_at")
        .first()
    ) or OaiHarvest.objects.create(set_spec=set_spec, from_date=from_date, until_date=until_date)
    run = start_run(kind=IngestRun.Kind.OAI, query=str(state))

    def save_state(batch) -> None:
        state.records += batch_records(batch)
        state.resumption_token = batch.resume_from
        state.completed = not batch.resume_from
        state.save(update_fields=["records", "resumption_token", "completed", "updated_at"])

    def batches():
        try:
            yield from oai.read_records(
                from_date=from_date,
                until_date=until_date,
                set_spec=set_spec,
                resume_from=state.resumption_token,
                http=http,
            )
        except oai.ExpiredToken:
            if not state.resumption_token:
                raise
            state.resumption_token = ""
            yield from oai.read_records(
                from_date=from_date, until_date=until_date, set_spec=set_spec, http=http
            )

    ingest(run, batches(), after_batch=save_state, on_skip=on_skip, progress=progress)
    return run


def batch_records(batch) -> int:
    return sum(1 for entry in batch.entries if not isinstance(entry, Skipped))


def import_snapshot(
    *,
    path: Path,
    record_filter: RecordFilter | None = None,
    limit: int | None = None,
    batch_size: int = SNAPSHOT_BATCH_SIZE,
    workers: int = WORKERS,
    progress: Progress | None = None,
    on_skip=lambda skipped: None,
) -> IngestRun:
    """Store the snapshot's records that pass the filter; the run records the counts."""
    described = ", ".join(
        part
        for part in (
            path.name,
            record_filter and record_filter.describe(),
            limit and f"limit {limit}",
        )
        if part
    )
    run = start_run(kind=IngestRun.Kind.SNAPSHOT, query=described)
    ingest(
        run,
        snapshot.read_lines(path, batch_size=batch_size),
        record_filter=record_filter,
        limit=limit,
        workers=workers,
        progress=progress,
        on_skip=on_skip,
    )
    return run


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
        raise RunStopped("the run stalled so long that another worker took it over.")
