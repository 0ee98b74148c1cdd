"""The one way records enter the catalog, whichever reader brought them.

store_batch() writes one batch: the papers (ingest.upsert, and ingest.venues for
those of other sources), the tag rules, the papers_stored signal (enrichment
and vectors listen), the counts; the catalog cache is bumped when the batch
commits. stored_batches() feeds a
reader's batches through it, in this process or in worker processes side by
side; an ingest run (ingest.runs.Run) counts what each stored.
"""

import multiprocessing
import os
from collections import deque
from collections.abc import Generator, Iterable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol, TypedDict, Unpack

from django.db import connection, connections, transaction

from catalog.models import Author, Category, CodeLink, Paper, PaperAuthor, PaperTag, Tag
from catalog.signals import papers_stored
from ingest.models import InboxEntry, IngestRun, RunCounts
from ingest.records import ArxivRecord, Entry, RecordFilter, Skipped, VenueRecord
from ingest.tagging import apply_tag_rules
from ingest.upsert import Outcome, StoredPaper, upsert_records
from ingest.venues import upsert_venue_records

# Each worker is a parsing process plus the database backend storing its
# batches; more than a few would only queue up on the database's cores.
WORKERS = min(4, os.cpu_count() or 1)
# The tables a bulk import fills, whose planner statistics it refreshes.
FILLED_MODELS = (Paper, PaperAuthor, Author, Paper.categories.through, Category, CodeLink, PaperTag)


class BatchLike(Protocol):
    @property
    def entries(self) -> Sequence[Entry]: ...

    @property
    def size(self) -> int: ...

    @property
    def resume_from(self) -> str: ...


# Each batch with what storing it came to, as they are stored: close it on a
# failure, so that workers stop rather than store what is queued.
Outcomes = Generator[tuple[BatchLike, "BatchOutcome"], None, None]


class StoreOptions(TypedDict):
    """How stored_batches stores every batch (store_batch's options but the limit)."""

    tags: list[Tag]
    bulk: bool
    record_filter: RecordFilter | None
    review_run: IngestRun | None


@dataclass
class BatchOutcome:
    fetched: int = 0  # records kept (past the filter) and entries skipped
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    skipped: list[Skipped] = field(default_factory=list)
    paper_ids: list[int] = field(default_factory=list)  # created or changed
    # By arXiv id, or for other sources' papers by ingest.venues.record_key.
    stored: dict[str, StoredPaper] = field(default_factory=dict)

    @property
    def counts(self) -> RunCounts:
        return RunCounts(
            fetched=self.fetched,
            created=self.created,
            updated=self.updated,
            unchanged=self.unchanged,
            skipped=len(self.skipped),
        )


def store_batch(
    entries: Sequence[Entry],
    *,
    tags: Sequence[Tag] = (),
    bulk: bool = False,
    record_filter: RecordFilter | None = None,
    limit: int | None = None,
    review_run: IngestRun | None = None,
) -> BatchOutcome:
    """Store the batch's records that pass the filter (at most limit) in one transaction.

    With a review_run, new papers wait in the review inbox, noted as that run's.
    """
    records = [e for e in entries if isinstance(e, ArxivRecord)]
    if record_filter:
        records = [record for record in records if record_filter.matches(record)]
    # Other sources' papers have no arXiv categories or dates to filter by.
    others = [e for e in entries if isinstance(e, VenueRecord)]
    if limit is not None:
        records = records[:limit]
        others = others[: max(0, limit - len(records))]
    outcome = BatchOutcome(skipped=[e for e in entries if isinstance(e, Skipped)])
    with transaction.atomic():
        result = upsert_records(records, tags=tags, for_review=review_run is not None)
        result += upsert_venue_records(others, tags=tags, for_review=review_run is not None)
        if review_run is not None:
            InboxEntry.objects.bulk_create(
                InboxEntry(paper_id=stored.paper_id, source_id=review_run.source_id, run=review_run)
                for stored in result.stored.values()
                if stored.outcome == Outcome.CREATED
            )
        apply_tag_rules(paper_ids=result.paper_ids)
        if result.paper_ids:
            papers_stored.send(sender=IngestRun, paper_ids=result.paper_ids, bulk=bulk)
    outcome.fetched = len(records) + len(others) + len(outcome.skipped)
    outcome.created, outcome.updated = result.created, result.updated
    outcome.unchanged, outcome.paper_ids = result.unchanged, result.paper_ids
    outcome.stored = result.stored
    return outcome


def stored_batches(
    batches: Iterable[BatchLike],
    *,
    tags: Sequence[Tag] = (),
    bulk: bool = False,
    record_filter: RecordFilter | None = None,
    limit: int | None = None,
    workers: int = 1,
    review_run: IngestRun | None = None,
) -> Outcomes:
    """Each batch with its outcome, stored in the reader's order, at most limit
    records that pass the filter in all.

    With workers > 1, worker processes parse and store the batches side by side
    (each with its own database connection; not with a limit, or inside a
    transaction of the caller's, whose atomicity other connections would
    break). Close the iterator on a failure, so that workers stop rather than
    store what is queued.
    """
    options: StoreOptions = {
        "tags": list(tags),
        "bulk": bulk,
        "record_filter": record_filter,
        "review_run": review_run,
    }
    if workers > 1 and limit is None and not connection.in_atomic_block:
        return _store_in_workers(batches, workers=workers, **options)
    return _store_here(batches, limit=limit, **options)


def analyze_filled_tables() -> None:
    """Fresh planner statistics: until gathered, list and search pages over
    freshly imported papers run several times slower."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            tables = ", ".join(connection.ops.quote_name(m._meta.db_table) for m in FILLED_MODELS)
            cursor.execute(f"ANALYZE {tables}")
        else:
            cursor.execute("ANALYZE")


def _store_here(
    batches: Iterable[BatchLike], *, limit: int | None, **options: Unpack[StoreOptions]
) -> Outcomes:
    remaining = limit
    for batch in batches:
        outcome = store_batch(batch.entries, limit=remaining, **options)
        yield batch, outcome
        if remaining is not None:
            remaining -= outcome.fetched - len(outcome.skipped)
            if remaining <= 0:
                return


def _store_parsed(batch: BatchLike, *, tag_ids: list[int], **options: Any) -> BatchOutcome:
    """A worker's job: parse the batch and store it."""
    return store_batch(batch.entries, tags=list(Tag.objects.filter(pk__in=tag_ids)), **options)


def _store_in_workers(
    batches: Iterable[BatchLike], *, workers: int, tags: list[Tag], **options: Any
) -> Outcomes:
    """Outcomes in the reader's order, while the workers parse and store the batches ahead.

    Two workers meeting on one paper or author are kept apart by the unique
    constraints and row locks upsert_records relies on. At most two batches a
    worker are in flight, so memory stays flat.
    """
    # Forked workers must not share this process's connections: each opens its own.
    connections.close_all()
    executor = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"))
    pending: deque[tuple[BatchLike, Future[BatchOutcome]]] = deque()
    tag_ids = [tag.pk for tag in tags]
    try:
        for batch in batches:
            future = executor.submit(_store_parsed, batch, tag_ids=tag_ids, **options)
            pending.append((batch, future))
            if len(pending) >= 2 * workers:
                batch, future = pending.popleft()
                yield batch, future.result()
        while pending:
            batch, future = pending.popleft()
            yield batch, future.result()
    finally:
        executor.shutdown(cancel_futures=True)
