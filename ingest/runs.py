"""Ingest runs: a reader's batches fed through the pipeline into one IngestRun each.

- run_source / run_query: an arXiv API query (a saved source, claimed so no
  two workers run it at once, or an operator's ad-hoc query);
- run_listing: a source's listing feeds after an announcement, the papers
  they name read by id from the API (the query when the listing is not out);
- harvest_oai: OAI-PMH over a period, resumable;
- import_snapshot: arXiv's metadata snapshot file.
"""

import datetime
import logging
import uuid
from pathlib import Path

from django.conf import settings
from django.db.models import Case, Q, Value, When
from django.utils import timezone

from catalog.models import Paper
from core.progress import Progress
from ingest import announcements, arxiv_api, oai, records, snapshot
from ingest import listing as listing_feeds
from ingest.http import ArxivHttp
from ingest.models import IngestRun, IngestSource, OaiHarvest
from ingest.pipeline import SKIPPED_LISTED, WORKERS, RunStopped, finish_run, ingest, start_run
from ingest.records import ArxivRecord, Batch, RecordFilter, Skipped, SourceUnreadable

logger = logging.getLogger(__name__)

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
    state: dict = {}
    try:
        source.refresh_from_db(fields=["last_success_at"])
        run = start_run(kind=IngestRun.Kind.API, source=source, query=source.query)
        _run_query(run, source=source, token=token, state=state)
    finally:
        _release(source, token, state)
    return run


def run_listing(*, source: IngestSource, now: datetime.datetime | None = None) -> IngestRun | None:
    """Store what arXiv's latest announcement brought to the source's listing categories.

    The listing feed names the papers; the API gives them, a hundred a
    request. New papers and cross-lists are stored, new versions only of
    papers already here. Until the announcement's listing is out (arXiv
    rebuilds the feeds hours after announcing) or while it cannot be read,
    the source's query runs instead, until it brings papers submitted after
    the previous announcement (then the API has this one); past
    LISTING_LATE_MINUTES a missing listing is reported. Papers the API does
    not give yet are awaited and asked for at every check.

    Returns None when there is nothing to do. Raises AlreadyRunning if a
    live run holds the source.
    """
    now = now or timezone.now()
    announcement = announcements.latest_announcement(now)
    token = _claim(source)
    state: dict = {}
    try:
        source.refresh_from_db(
            fields=["listed_through", "fallback_through", "awaiting", "last_success_at"]
        )
        awaited, given_up = _split_awaited(source.awaiting, now=now)
        if source.listed_through and source.listed_through >= announcement.listing_date:
            if not awaited and not given_up:
                return None
            run = start_run(
                kind=IngestRun.Kind.LISTING,
                source=source,
                query=f"{source.listing_categories}: papers awaited from earlier listings",
            )
            _store_announced(
                run, source=source, wanted=awaited, given_up=given_up, token=token, state=state
            )
            return run
        categories = source.listing_category_list
        try:
            listing = listing_feeds.read_listing(categories)
            trouble = _listing_trouble(listing, announcement)
        except SourceUnreadable as err:
            listing, trouble = None, f"the listing feed could not be read: {err}"
        if listing is not None and not trouble:
            return _store_listing(
                listing, source=source, awaited=awaited, given_up=given_up, token=token, state=state
            )
        late = now >= announcement.at + datetime.timedelta(minutes=settings.LISTING_LATE_MINUTES)
        query_due = source.fallback_through != announcement.listing_date
        if not query_due and not late:
            logger.info("%s: %s; checking again later.", source, trouble)
            return None
        described = f"{source.listing_categories} listing of {announcement.listing_date}: {trouble}"
        run = start_run(
            kind=IngestRun.Kind.LISTING,
            source=source,
            query=described + ("; the query instead" if query_due else ""),
        )
        late_problems = [f"The listing is late: {trouble}."] if late else []
        if not query_due:
            finish_run(run, problems=late_problems)
            return run
        _run_query(run, source=source, token=token, state=state, problems=late_problems)
        # Done once the API has this announcement: a paper first submitted after the
        # previous announcement cannot be older news.
        previous = announcements.latest_announcement(
            announcement.at - datetime.timedelta(minutes=1)
        )
        if Paper.objects.filter(
            added_at__gte=run.started_at, published_at__gt=previous.at
        ).exists():
            state["fallback_through"] = announcement.listing_date
        return run
    finally:
        _release(source, token, state)


def sources_due(*, now: datetime.datetime) -> list[int]:
    """Sources whose listing the latest announcement has not reached, or that await papers."""
    listing_date = announcements.latest_announcement(now).listing_date
    return list(
        IngestSource.objects.filter(enabled=True)
        .exclude(listing_categories="")
        .filter(
            Q(listed_through__isnull=True) | Q(listed_through__lt=listing_date) | ~Q(awaiting={})
        )
        .values_list("pk", flat=True)
    )


def _listing_trouble(listing: listing_feeds.Listing, announcement) -> str:
    """What keeps the listing from being the announcement's, or ""."""
    if listing.listing_date is None:
        return "the listing feed carries no date"
    if listing.listing_date < announcement.listing_date:
        return f"the listing feed is still that of {listing.listing_date}" + (
            ", and empty" if not listing.items else ""
        )
    return ""


def _store_listing(
    listing: listing_feeds.Listing,
    *,
    source: IngestSource,
    awaited: dict[str, dict],
    given_up: dict[str, dict],
    token: str,
    state: dict,
) -> IngestRun:
    new = [a for a in listing.announced if a.is_new]
    replaced = [a for a in listing.announced if not a.is_new]
    # A new version matters only for a paper already here: it is no new paper.
    stored = set(
        Paper.objects.filter(arxiv_id__in=[a.arxiv_id for a in replaced]).values_list(
            "arxiv_id", flat=True
        )
    )
    kept = [*new, *(a for a in replaced if a.arxiv_id in stored)]
    since = timezone.now().isoformat()
    wanted = {
        **awaited,
        **{
            a.arxiv_id: {
                "version": a.version,
                "kind": a.kind,
                "announced": a.listing_date.isoformat(),
                "since": since,
            }
            for a in kept
        },
    }
    crossed = sum(a.kind == "cross" for a in new)
    run = start_run(
        kind=IngestRun.Kind.LISTING,
        source=source,
        query=(
            f"{source.listing_categories} listing of {listing.listing_date}: "
            f"{len(new) - crossed} new, {crossed} cross-listed, "
            f"{len(kept) - len(new)} new versions of papers here"
        ),
    )
    problems = []
    if not listing.announced:
        problems.append(
            "The listing announced nothing in these categories (an arXiv holiday missing "
            "from the calendar, or a quiet day)."
        )
    if listing.may_be_cut:
        problems.append(
            f"The listing has {listing.items} items, arXiv's most: some may be cut off; "
            "the query brings those on its next run."
        )
    if listing.skipped:
        problems.append(
            f"Skipped {len(listing.skipped)} unreadable listing items:\n"
            + "\n".join(map(str, listing.skipped[:SKIPPED_LISTED]))
        )
    _store_announced(
        run,
        source=source,
        wanted=wanted,
        given_up=given_up,
        token=token,
        state=state,
        problems=problems,
    )
    state["listed_through"] = listing.listing_date
    return run


def _store_announced(
    run: IngestRun,
    *,
    source: IngestSource,
    wanted: dict[str, dict],
    given_up: dict[str, dict],
    token: str,
    state: dict,
    problems: list[str] = (),
) -> None:
    """Fetch the wanted papers by id and store them; those the API does not give
    yet (absent, or an older version than announced) stay awaited."""
    returned: dict[str, int | None] = {}

    def batches():
        for batch in arxiv_api.read_ids(list(wanted)):
            entries = []
            for entry in batch.entries:
                if isinstance(entry, ArxivRecord) and entry.arxiv_id in wanted:
                    want = wanted[entry.arxiv_id]
                    returned[entry.arxiv_id] = entry.version
                    if want["kind"] in listing_feeds.NEW_KINDS:
                        listed = datetime.date.fromisoformat(want["announced"])
                        entry = records.announced(
                            entry, at=announcements.Announcement.listed_on(listed).at
                        )
                entries.append(entry)
            yield Batch(entries)

    def still_awaited() -> dict[str, dict]:
        return {
            arxiv_id: want
            for arxiv_id, want in wanted.items()
            if arxiv_id not in returned
            or (want["version"] or 0) > (returned[arxiv_id] or want["version"] or 0)
        }

    def final_checks(run: IngestRun, completed: bool) -> list[str]:
        found = list(problems)
        if missing := still_awaited():
            found.append(
                f"{len(missing)} announced papers are not in the API yet; asked for again at "
                f"the next check: {' '.join(sorted(missing)[:SKIPPED_LISTED])}"
            )
        if given_up:
            found.append(
                f"Gave up waiting for {len(given_up)} announced papers after "
                f"{settings.LISTING_AWAIT_HOURS:g} hours; the source's query brings them once "
                f"the API has them: {' '.join(sorted(given_up)[:SKIPPED_LISTED])}"
            )
        return found

    try:
        ingest(
            run,
            batches() if wanted else iter(()),
            tags=list(source.tags.all()),
            after_batch=lambda batch: _refresh_claim(source, token),
            final_checks=final_checks,
            for_review=source.needs_review,
        )
    finally:
        # Whatever happened, what did not come stays awaited: nothing is lost.
        state["awaiting"] = still_awaited()


def _split_awaited(awaiting: dict, *, now: datetime.datetime) -> tuple[dict, dict]:
    """The awaited papers still worth asking for, and those waited for too long."""
    cutoff = now - datetime.timedelta(hours=settings.LISTING_AWAIT_HOURS)
    kept, given_up = {}, {}
    for arxiv_id, want in (awaiting or {}).items():
        since = datetime.datetime.fromisoformat(want["since"])
        (given_up if since < cutoff else kept)[arxiv_id] = want
    return kept, given_up


def _run_query(
    run: IngestRun,
    *,
    source: IngestSource,
    token: str,
    state: dict,
    problems: list[str] = (),
) -> None:
    since = None
    if source.last_success_at:
        since = source.last_success_at - datetime.timedelta(
            hours=settings.ARXIV_UPDATED_LOOKBACK_HOURS
        )

    def final_checks(run: IngestRun, completed: bool) -> list[str]:
        found = list(problems)
        if completed and since and run.fetched >= source.max_results:
            found.append(MAX_REACHED.format(max_results=source.max_results))
        return found

    completed = ingest(
        run,
        arxiv_api.read_query(query=source.query, max_results=source.max_results, since=since),
        tags=list(source.tags.all()),
        after_batch=lambda batch: _refresh_claim(source, token),
        final_checks=final_checks,
        for_review=source.needs_review,
    )
    # Only a run that read through to its end moves the next run's start.
    if completed:
        state["last_success_at"] = run.started_at


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


def _release(source: IngestSource, token: str, state: dict) -> None:
    """Give up the claim, saving what the run learnt (its fields of state)."""
    IngestSource.objects.filter(pk=source.pk, claim_token=token).update(
        claimed_at=None, claim_token="", **state
    )
    for name, value in state.items():
        setattr(source, name, value)


def _refresh_claim(source: IngestSource, token: str) -> None:
    refreshed = IngestSource.objects.filter(pk=source.pk, claim_token=token).update(
        claimed_at=timezone.now()
    )
    if not refreshed:
        raise RunStopped("the run stalled so long that another worker took it over.")
