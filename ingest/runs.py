"""Ingest runs: a reader's batches stored through the pipeline into one IngestRun each.

A Run is one IngestRun from its start to its close by one rule: it stores a
reader's batches (ingest.pipeline), counts each as it is stored (the admin
shows a long run's counts growing), reports it (Stored), and keeps a
heartbeat. A run of a saved source first claims the source (SourceClaim), so
that no two workers run it at once, and saves what it learnt on the source
(Learnt) as it gives the claim up. A worker that dies leaves its heartbeat
behind: the next claim of the source, or the sweep beat runs every minute
(interrupt_stale_runs), marks its run interrupted and releases its claim.

The runs:
- run_source / run_query: an arXiv API query (a saved source's, or an
  operator's ad-hoc query);
- run_listing: a source's listing feeds after an announcement, the papers
  they name read by id from the API (the query when the listing is not out);
- Harvest: OAI-PMH over a period, resumable;
- SnapshotImport: arXiv's metadata snapshot file;
- adding papers by link (ingest.links) runs as a Run too.
"""

import datetime
import logging
import threading
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass, fields
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Any, TypedDict

from django.conf import settings
from django.db import DatabaseError, connections
from django.db.models import Q, QuerySet
from django.utils import timezone

from catalog.models import Paper, Tag
from ingest import announcements, arxiv_api, oai, records, snapshot
from ingest import listing as listing_feeds
from ingest.http import SourceHttp
from ingest.models import IngestRun, IngestSource, OaiHarvest
from ingest.pipeline import (
    WORKERS,
    BatchLike,
    BatchOutcome,
    analyze_filled_tables,
    stored_batches,
)
from ingest.records import ArxivRecord, Batch, Entry, RecordFilter, Skipped, SourceUnreadable

logger = logging.getLogger(__name__)

SNAPSHOT_BATCH_SIZE = 2000
# A run's error text lists at most this many skipped entries.
SKIPPED_LISTED = 50
# The most a heartbeat waits between beats; it beats more often when
# INGEST_RUN_STALE_SECONDS is short, several times within it.
HEARTBEAT_MAX_SECONDS = 60
MAX_REACHED = (
    "Stopped at the maximum of {max_results} results before reaching entries seen by the "
    "previous run, so papers in between may be missing: raise the maximum or run the "
    "source more often."
)
INTERRUPTED = (
    "Interrupted: its worker stopped (killed, or its machine went down) and wrote no "
    "heartbeat for {seconds} seconds. What it stored before stays."
)


class AlreadyRunning(Exception):
    pass


class RunStopped(Exception):
    """The run must stop here, keeping what it stored (the message says why)."""


def stale_after() -> datetime.timedelta:
    return datetime.timedelta(seconds=settings.INGEST_RUN_STALE_SECONDS)


def heartbeat_interval() -> float:
    # Several beats within the stale time, so that one slow write never makes
    # a live run look dead.
    return min(HEARTBEAT_MAX_SECONDS, settings.INGEST_RUN_STALE_SECONDS / 6)


class Heartbeat:
    """A running run's sign of life, written from a thread of its own, so that a
    run waiting on a slow arXiv (or on ANALYZE) never looks dead: its row's
    heartbeat_at and, for a run of a saved source, the source's claim."""

    def __init__(self, *, claim: "SourceClaim | None" = None) -> None:
        self.claim = claim
        self.run_id: int | None = None
        self._stopped = threading.Event()
        self._thread = threading.Thread(
            target=self._beat_until_stopped, name="ingest heartbeat", daemon=True
        )

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopped.set()
        # Not for ever: a beat waiting on a row that the caller's own transaction
        # holds ends once that commits, and then writes nothing to a closed run.
        self._thread.join(timeout=heartbeat_interval() + 5)

    def beat(self) -> None:
        now = timezone.now()
        if self.run_id is not None:
            IngestRun.objects.filter(pk=self.run_id, status=IngestRun.Status.RUNNING).update(
                heartbeat_at=now
            )
        if self.claim is not None:
            self.claim.refresh(now=now)

    def _beat_until_stopped(self) -> None:
        try:
            while not self._stopped.wait(heartbeat_interval()):
                try:
                    self.beat()
                except DatabaseError as err:
                    logger.warning("Ingest heartbeat not written, trying again: %s", err)
        finally:
            # This thread's own connection.
            connections.close_all()


class Awaited(TypedDict):
    """An announced paper the API has not given yet, as IngestSource.awaiting keeps it."""

    version: int | None
    kind: str  # one of listing_feeds.KINDS
    announced: str  # the listing's date, ISO
    since: str  # when it was first awaited, ISO


@dataclass
class Learnt:
    """What a source's run learnt, saved on the source as its claim is given up;
    None for what it did not learn."""

    # When the last run that read the query through to its end started.
    last_success_at: datetime.datetime | None = None
    # The date of the announcement whose listing was read.
    listed_through: datetime.date | None = None
    # The announcement whose papers the query brought while its listing was not out.
    fallback_through: datetime.date | None = None
    # The announced papers the API has not given yet (IngestSource.awaiting).
    awaiting: "dict[str, Awaited] | None" = None

    def changes(self) -> dict[str, object]:
        """The source's fields to set, by name."""
        return {
            field.name: getattr(self, field.name)
            for field in fields(self)
            if getattr(self, field.name) is not None
        }


class SourceClaim:
    """A saved source held by one worker at a time, from take() to release().

    Taken with a conditional UPDATE; kept alive by the heartbeat, which a
    claim taken over stops (hold()); given up with what the run learnt. A
    claim whose heartbeat stopped for INGEST_RUN_STALE_SECONDS belongs to a
    worker that died, and is taken over.
    """

    def __init__(self, source: IngestSource, *, token: str) -> None:
        self.source, self.token = source, token
        self.learnt = Learnt()
        self.heartbeat = Heartbeat(claim=self)

    @classmethod
    def take(cls, source: IngestSource) -> "SourceClaim":
        """The source's claim; AlreadyRunning if a live run holds it."""
        now = timezone.now()
        token = uuid.uuid4().hex
        claimed = (
            IngestSource.objects.filter(pk=source.pk)
            .filter(Q(claimed_at__isnull=True) | Q(claimed_at__lt=now - stale_after()))
            .update(claimed_at=now, claim_token=token)
        )
        if not claimed:
            raise AlreadyRunning(f"{source} is already running")
        # Runs still marked running belong to a worker that died holding the claim.
        _interrupt(
            IngestRun.objects.filter(source=source, status=IngestRun.Status.RUNNING), now=now
        )
        claim = cls(source, token=token)
        claim.heartbeat.start()
        return claim

    def refresh(self, *, now: datetime.datetime) -> bool:
        """Beat the claim; False if another worker has taken it over."""
        return bool(
            IngestSource.objects.filter(pk=self.source.pk, claim_token=self.token).update(
                claimed_at=now
            )
        )

    def hold(self) -> None:
        """Beat the claim now; RunStopped if another worker has taken it over."""
        if not self.refresh(now=timezone.now()):
            raise RunStopped("the run stalled so long that another worker took it over.")

    def release(self) -> None:
        """Give up the claim, saving what the run learnt."""
        self.heartbeat.stop()
        learnt = self.learnt.changes()
        IngestSource.objects.filter(pk=self.source.pk, claim_token=self.token).update(
            claimed_at=None, claim_token="", **learnt
        )
        for name, value in learnt.items():
            setattr(self.source, name, value)

    def __enter__(self) -> "SourceClaim":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()


@dataclass(frozen=True)
class Stored:
    """A batch as its run stored it: what a command shows of the run's progress."""

    batch: BatchLike
    outcome: BatchOutcome

    @property
    def size(self) -> int:
        """How much of the source it took up: bytes of a file, else entries."""
        return self.batch.size or self.outcome.fetched

    @property
    def skipped(self) -> Sequence[Skipped]:
        return self.outcome.skipped


class Run:
    """One IngestRun, from its start to its close by one rule.

    Used as a context manager, whose end closes the run: as crashed when an
    exception leaves the block (the exception goes on). Within it, store()
    stores a reader's batches; add() counts a batch stored otherwise; stop()
    and problem() say what went wrong, for the run's status and error.
    """

    def __init__(self, row: IngestRun, *, claim: SourceClaim | None = None) -> None:
        self.row = row
        self.claim = claim
        # Whether store() read its batches to the end.
        self.completed = False
        self._stopped = ""
        self._problems: list[str] = []
        self._skipped: list[Skipped] = []  # the first SKIPPED_LISTED
        self._heartbeat = claim.heartbeat if claim is not None else Heartbeat()
        self._heartbeat.run_id = row.pk
        if claim is None:
            self._heartbeat.start()

    @classmethod
    def start(cls, *, kind: str, query: str = "", claim: SourceClaim | None = None) -> "Run":
        row = IngestRun.objects.create(
            kind=kind,
            source=claim.source if claim is not None else None,
            query=query[:1000],
            heartbeat_at=timezone.now(),
        )
        return cls(row, claim=claim)

    @classmethod
    def begin(cls, row: IngestRun) -> "Run":
        """The run of a row made beforehand (a link request's, made as it was
        asked for), as a worker begins it."""
        row.heartbeat_at = timezone.now()
        row.save(update_fields=["heartbeat_at"])
        return cls(row)

    def store(
        self,
        batches: Iterable[BatchLike],
        *,
        tags: Sequence[Tag] = (),
        record_filter: RecordFilter | None = None,
        limit: int | None = None,
        workers: int = 1,
        for_review: bool = False,
    ) -> Iterator[Stored]:
        """Store the batches, each as it arrives (at most limit records past the
        filter), yielding each once it is counted.

        A source that becomes unreadable, or a claim another worker took over,
        stops the run with what was stored before; any other error goes on to
        close the run as crashed. Bulk runs (snapshot, harvest) may store in
        worker processes and end by refreshing the planner's statistics of the
        tables they filled. With for_review, new papers wait in the review inbox.
        """
        bulk = self.row.kind in IngestRun.BULK_KINDS
        outcomes = stored_batches(
            batches,
            tags=tags,
            bulk=bulk,
            record_filter=record_filter,
            limit=limit,
            workers=workers,
            review_run=self.row if for_review else None,
        )
        try:
            # Closed at once on a failure, so that workers stop rather than store what is queued.
            with closing(outcomes):
                for batch, outcome in outcomes:
                    self.add(outcome)
                    if self.claim is not None:
                        self.claim.hold()
                    yield Stored(batch, outcome)
            self.completed = True
        except (SourceUnreadable, RunStopped) as err:
            self.stop(str(err))
        if bulk:
            analyze_filled_tables()

    def store_all(self, batches: Iterable[BatchLike], **options: Any) -> None:
        """store(), for a caller with nothing to do for each batch."""
        for _ in self.store(batches, **options):
            pass

    def add(self, outcome: BatchOutcome) -> None:
        """Count a stored batch: saved at once, with a heartbeat, so that the
        admin shows how far a long run has got."""
        self.row.add(outcome.counts)
        self.row.heartbeat_at = timezone.now()
        self.row.save(update_fields=[*IngestRun.COUNT_FIELDS, "heartbeat_at"])
        self._skipped += outcome.skipped[: SKIPPED_LISTED - len(self._skipped)]

    def stop(self, reason: str) -> None:
        """The run ends before reading its source to the end, for this reason."""
        self._stopped = reason

    def problem(self, text: str) -> None:
        """Something went wrong that the run's status and error must tell."""
        self._problems.append(text)

    def __enter__(self) -> "Run":
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if isinstance(error, GeneratorExit):
            # A caller left the batches of a SnapshotImport or Harvest unread.
            self.stop("its batches were left unread.")
            error = None
        self.close(crashed=f"{type(error).__name__}: {error}" if error is not None else "")

    def close(self, *, crashed: str = "") -> None:
        """Failed if something went wrong and nothing readable came; finished
        with errors if something went wrong; succeeded otherwise."""
        if self.claim is None:
            self._heartbeat.stop()
        else:
            self._heartbeat.run_id = None
        run = self.row
        problems = [f"Crashed: {crashed}"] if crashed else []
        if self._stopped:
            problems.append(f"Stopped: {self._stopped}")
        if run.skipped:
            listed = "\n".join(map(str, self._skipped))
            more = run.skipped - len(self._skipped)
            problems.append(
                f"Skipped {run.skipped} unreadable entries:\n{listed}"
                + (f"\n… and {more} more" if more > 0 else "")
            )
        problems += self._problems
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
            {name: getattr(run, name) for name in IngestRun.COUNT_FIELDS},
            run.error,
        )


def interrupt_stale_runs(*, now: datetime.datetime | None = None) -> int:
    """Mark interrupted every running run whose heartbeat stopped, and release
    every claim whose heartbeat stopped, so that those sources ingest again on
    their next turn. Returns how many runs were interrupted.

    A run no worker has begun (a queued link request) has no heartbeat yet and
    is left waiting.
    """
    now = now or timezone.now()
    cutoff = now - stale_after()
    interrupted = _interrupt(
        IngestRun.objects.filter(status=IngestRun.Status.RUNNING, heartbeat_at__lt=cutoff),
        now=now,
    )
    IngestSource.objects.filter(claimed_at__lt=cutoff).update(claimed_at=None, claim_token="")
    return len(interrupted)


def _interrupt(runs: QuerySet[IngestRun], *, now: datetime.datetime) -> list[int]:
    run_ids = list(runs.values_list("pk", flat=True))
    if run_ids:
        IngestRun.objects.filter(pk__in=run_ids, status=IngestRun.Status.RUNNING).update(
            status=IngestRun.Status.INTERRUPTED,
            finished_at=now,
            error=INTERRUPTED.format(seconds=settings.INGEST_RUN_STALE_SECONDS),
        )
        logger.warning("Ingest runs %s interrupted: their worker stopped.", run_ids)
    return run_ids


def run_source(*, source: IngestSource) -> IngestRun:
    """Run the source's query now; raise AlreadyRunning if a live run holds it."""
    with SourceClaim.take(source) as claim:
        source.refresh_from_db(fields=["last_success_at"])
        with Run.start(kind=IngestRun.Kind.API, query=source.query, claim=claim) as run:
            _store_query(run, claim=claim)
    return run.row


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
    with SourceClaim.take(source) as claim:
        source.refresh_from_db(
            fields=["listed_through", "fallback_through", "awaiting", "last_success_at"]
        )
        awaited, given_up = _split_awaited(source.awaiting, now=now)
        if source.listed_through and source.listed_through >= announcement.listing_date:
            if not awaited and not given_up:
                return None
            query = f"{source.listing_categories}: papers awaited from earlier listings"
            with Run.start(kind=IngestRun.Kind.LISTING, query=query, claim=claim) as run:
                _store_announced(run, claim=claim, wanted=awaited, given_up=given_up)
            return run.row
        try:
            listing = listing_feeds.read_listing(source.listing_category_list)
            trouble = _listing_trouble(listing, announcement)
        except SourceUnreadable as err:
            listing, trouble = None, f"the listing feed could not be read: {err}"
        if listing is not None and not trouble:
            return _store_listing(listing, claim=claim, awaited=awaited, given_up=given_up)
        late = now >= announcement.at + datetime.timedelta(minutes=settings.LISTING_LATE_MINUTES)
        query_due = source.fallback_through != announcement.listing_date
        if not query_due and not late:
            logger.info("%s: %s; checking again later.", source, trouble)
            return None
        described = f"{source.listing_categories} listing of {announcement.listing_date}: {trouble}"
        query = described + ("; the query instead" if query_due else "")
        with Run.start(kind=IngestRun.Kind.LISTING, query=query, claim=claim) as run:
            if late:
                run.problem(f"The listing is late: {trouble}.")
            if query_due:
                _store_query(run, claim=claim)
        # Done once the API has this announcement: a paper first submitted after the
        # previous announcement cannot be older news.
        previous = announcements.latest_announcement(
            announcement.at - datetime.timedelta(minutes=1)
        )
        if (
            query_due
            and Paper.objects.filter(
                added_at__gte=run.row.started_at, published_at__gt=previous.at
            ).exists()
        ):
            claim.learnt.fallback_through = announcement.listing_date
        return run.row


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


def _listing_trouble(
    listing: listing_feeds.Listing, announcement: announcements.Announcement
) -> str:
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
    claim: SourceClaim,
    awaited: dict[str, Awaited],
    given_up: dict[str, Awaited],
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
    wanted: dict[str, Awaited] = {
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
    query = (
        f"{claim.source.listing_categories} listing of {listing.listing_date}: "
        f"{len(new) - crossed} new, {crossed} cross-listed, "
        f"{len(kept) - len(new)} new versions of papers here"
    )
    with Run.start(kind=IngestRun.Kind.LISTING, query=query, claim=claim) as run:
        if not listing.announced:
            run.problem(
                "The listing announced nothing in these categories (an arXiv holiday missing "
                "from the calendar, or a quiet day)."
            )
        if listing.may_be_cut:
            run.problem(
                f"The listing has {listing.items} items, arXiv's most: some may be cut off; "
                "the query brings those on its next run."
            )
        if listing.skipped:
            run.problem(
                f"Skipped {len(listing.skipped)} unreadable listing items:\n"
                + "\n".join(map(str, listing.skipped[:SKIPPED_LISTED]))
            )
        _store_announced(run, claim=claim, wanted=wanted, given_up=given_up)
    claim.learnt.listed_through = listing.listing_date
    return run.row


def _store_announced(
    run: Run, *, claim: SourceClaim, wanted: dict[str, Awaited], given_up: dict[str, Awaited]
) -> None:
    """Fetch the wanted papers by id and store them; those the API does not give
    yet (absent, or an older version than announced) stay awaited."""
    returned: dict[str, int | None] = {}

    def batches() -> Iterator[Batch]:
        for batch in arxiv_api.read_ids(list(wanted)):
            entries: list[Entry] = []
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

    def still_awaited() -> dict[str, Awaited]:
        return {
            arxiv_id: want
            for arxiv_id, want in wanted.items()
            if arxiv_id not in returned
            or (want["version"] or 0) > (returned[arxiv_id] or want["version"] or 0)
        }

    source = claim.source
    try:
        run.store_all(
            batches() if wanted else (),
            tags=list(source.tags.all()),
            for_review=source.needs_review,
        )
    finally:
        # Whatever happened, what did not come stays awaited: nothing is lost.
        claim.learnt.awaiting = still_awaited()
    if missing := claim.learnt.awaiting:
        run.problem(
            f"{len(missing)} announced papers are not in the API yet; asked for again at "
            f"the next check: {' '.join(sorted(missing)[:SKIPPED_LISTED])}"
        )
    if given_up:
        run.problem(
            f"Gave up waiting for {len(given_up)} announced papers after "
            f"{settings.LISTING_AWAIT_HOURS:g} hours; the source's query brings them once "
            f"the API has them: {' '.join(sorted(given_up)[:SKIPPED_LISTED])}"
        )


def _split_awaited(
    awaiting: dict[str, Awaited] | None, *, now: datetime.datetime
) -> tuple[dict[str, Awaited], dict[str, Awaited]]:
    """The awaited papers still worth asking for, and those waited for too long."""
    cutoff = now - datetime.timedelta(hours=settings.LISTING_AWAIT_HOURS)
    kept: dict[str, Awaited] = {}
    given_up: dict[str, Awaited] = {}
    for arxiv_id, want in (awaiting or {}).items():
        since = datetime.datetime.fromisoformat(want["since"])
        (given_up if since < cutoff else kept)[arxiv_id] = want
    return kept, given_up


def _store_query(run: Run, *, claim: SourceClaim) -> None:
    """Store what the source's query brings, back to its last success (less the lookback)."""
    source = claim.source
    since = None
    if source.last_success_at:
        since = source.last_success_at - datetime.timedelta(
            hours=settings.ARXIV_UPDATED_LOOKBACK_HOURS
        )
    run.store_all(
        arxiv_api.read_query(query=source.query, max_results=source.max_results, since=since),
        tags=list(source.tags.all()),
        for_review=source.needs_review,
    )
    # Only a run that read through to its end moves the next run's start.
    if run.completed:
        if since and run.row.fetched >= source.max_results:
            run.problem(MAX_REACHED.format(max_results=source.max_results))
        claim.learnt.last_success_at = run.row.started_at


def run_query(*, query: str, max_results: int) -> IngestRun:
    """Run an ad-hoc query now, for an operator trying a query before saving it."""
    with Run.start(kind=IngestRun.Kind.API, query=query) as run:
        run.store_all(arxiv_api.read_query(query=query, max_results=max_results))
    return run.row


class Harvest:
    """The records changed in a period, harvested over OAI-PMH as one run, resuming
    an unfinished harvest of that period; iterating it stores each page and
    reports it (Stored), and `row` is the run's.

    A resumption token the server no longer knows starts the period over, once:
    what was stored stays, and unchanged papers cost no writes.
    """

    def __init__(
        self,
        *,
        from_date: datetime.date,
        until_date: datetime.date | None = None,
        set_spec: str = "",
        http: SourceHttp | None = None,
    ) -> None:
        self.from_date, self.until_date, self.set_spec = from_date, until_date, set_spec
        self.http = http
        self.row: IngestRun | None = None

    def __iter__(self) -> Iterator[Stored]:
        state = (
            OaiHarvest.objects.filter(
                set_spec=self.set_spec,
                from_date=self.from_date,
                until_date=self.until_date,
                completed=False,
            )
            .order_by("-started_at")
            .first()
        ) or OaiHarvest.objects.create(
            set_spec=self.set_spec, from_date=self.from_date, until_date=self.until_date
        )
        with Run.start(kind=IngestRun.Kind.OAI, query=str(state)) as run:
            self.row = run.row
            for stored in run.store(self._batches(state)):
                # Where to resume, once the page is stored.
                state.records += stored.outcome.fetched - len(stored.skipped)
                state.resumption_token = stored.batch.resume_from
                state.completed = not stored.batch.resume_from
                state.save(update_fields=["records", "resumption_token", "completed", "updated_at"])
                yield stored

    def _batches(self, state: OaiHarvest) -> Iterator[Batch]:
        read_period = partial(
            oai.read_records,
            from_date=self.from_date,
            until_date=self.until_date,
            set_spec=self.set_spec,
            http=self.http,
        )
        try:
            yield from read_period(resume_from=state.resumption_token)
        except oai.ExpiredToken:
            if not state.resumption_token:
                raise
            state.resumption_token = ""
            yield from read_period()


def harvest_oai(
    *,
    from_date: datetime.date,
    until_date: datetime.date | None = None,
    set_spec: str = "",
    http: SourceHttp | None = None,
) -> IngestRun:
    """Harvest the period (a Harvest) through to its end."""
    harvest = Harvest(from_date=from_date, until_date=until_date, set_spec=set_spec, http=http)
    for _ in harvest:
        pass
    return row_of(harvest)


class SnapshotImport:
    """arXiv's metadata snapshot file, its records that pass the filter (at most
    limit) stored as one run; iterating it stores each batch of lines and
    reports it (Stored), and `row` is the run's."""

    def __init__(
        self,
        *,
        path: Path,
        record_filter: RecordFilter | None = None,
        limit: int | None = None,
        batch_size: int = SNAPSHOT_BATCH_SIZE,
        workers: int = WORKERS,
    ) -> None:
        self.path, self.record_filter, self.limit = path, record_filter, limit
        self.batch_size, self.workers = batch_size, workers
        self.row: IngestRun | None = None

    def __iter__(self) -> Iterator[Stored]:
        described = ", ".join(
            part
            for part in (
                self.path.name,
                self.record_filter and self.record_filter.describe(),
                self.limit and f"limit {self.limit}",
            )
            if part
        )
        with Run.start(kind=IngestRun.Kind.SNAPSHOT, query=described) as run:
            self.row = run.row
            yield from run.store(
                snapshot.read_lines(self.path, batch_size=self.batch_size),
                record_filter=self.record_filter,
                limit=self.limit,
                workers=self.workers,
            )


def import_snapshot(
    *,
    path: Path,
    record_filter: RecordFilter | None = None,
    limit: int | None = None,
    batch_size: int = SNAPSHOT_BATCH_SIZE,
    workers: int = WORKERS,
) -> IngestRun:
    """Import the snapshot file (a SnapshotImport) through to its end."""
    importing = SnapshotImport(
        path=path, record_filter=record_filter, limit=limit, batch_size=batch_size, workers=workers
    )
    for _ in importing:
        pass
    return row_of(importing)


def row_of(started: Harvest | SnapshotImport) -> IngestRun:
    """The run's row of a harvest or an import, once iterating it has begun the run."""
    if started.row is None:
        raise RuntimeError("The run has not begun: iterate the harvest or import first.")
    return started.row
