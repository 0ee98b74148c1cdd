"""Importing arXiv's metadata snapshot: one JSON object per line, about 5 GB.

The file is streamed and stored in batches of lines, so memory stays flat
however large it is; worker processes parse and store batches side by side.
Lines that cannot be read are reported with their line number and counted,
never fatal.
"""

import datetime
import email.utils
import gzip
import multiprocessing
import os
import re
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import closing
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path

import orjson
from django.db import connection, connections
from pylatexenc.latex2text import LatexNodes2Text

from catalog import arxiv_ids
from catalog.code_links import CODE_HOSTS, extract_code_urls
from ingest.models import IngestRun
from ingest.records import ArxivRecord
from ingest.tagging import apply_tag_rules
from ingest.upsert import UpsertResult, upsert_records

BATCH_SIZE = 2000
# Each worker is a parsing process plus the database backend storing its
# batches; more than a few would only queue up on the database's cores.
WORKERS = min(4, os.cpu_count() or 1)
_latex = LatexNodes2Text()


class MalformedEntry(ValueError):
    """A snapshot line or OAI record that cannot become an ArxivRecord."""


@dataclass(frozen=True)
class RecordFilter:
    """Which records to keep: by category or archive, and by first-version date."""

    categories: tuple[str, ...] = ()  # "cs.CL" or a whole archive, "cs"
    since: datetime.date | None = None
    until: datetime.date | None = None

    def matches(self, record: ArxivRecord) -> bool:
        if self.categories and not any(
            code in self.categories or code.split(".")[0] in self.categories
            for code in record.categories
        ):
            return False
        published = record.published_at.date() if record.published_at else None
        if self.since and (published is None or published < self.since):
            return False
        return not (self.until and (published is None or published > self.until))


def build_record(
    *,
    arxiv_id: str,
    version: int | None,
    title: str,
    abstract: str,
    authors: Iterable[str],
    categories: Sequence[str],
    comment: str = "",
    journal_ref: str = "",
    doi: str = "",
    published_at: datetime.datetime | None = None,
    updated_at: datetime.datetime | None = None,
) -> ArxivRecord:
    """An ArxivRecord from raw arXiv metadata, with its text tidied and code links found.

    Raises MalformedEntry when the id, title or categories are missing or wrong.
    """
    parsed = arxiv_ids.split_version(arxiv_id or "")
    if parsed is None:
        raise MalformedEntry(f"not an arXiv id: {arxiv_id!r}")
    title, abstract, comment = collapse(title), collapse(abstract), collapse(comment)
    categories = tuple(dict.fromkeys(code for code in categories if code))
    if not title:
        raise MalformedEntry(f"{parsed[0]}: no title")
    if not categories:
        raise MalformedEntry(f"{parsed[0]}: no categories")
    code_urls: dict[str, str] = {}
    for text, source in ((abstract, "abstract"), (comment, "comment")):
        if _may_hold_link(text):
            for url in extract_code_urls(text):
                code_urls.setdefault(url, source)
    return ArxivRecord(
        arxiv_id=parsed[0],
        version=version if version is not None else parsed[1],
        title=title,
        abstract=abstract,
        authors=tuple(name for name in map(plain_name, authors) if name),
        primary_category=categories[0],
        categories=categories,
        comment=comment,
        journal_ref=collapse(journal_ref),
        doi=collapse(doi),
        published_at=published_at,
        updated_at=updated_at,
        code_urls=tuple(code_urls.items()),
    )


def collapse(text: str | None) -> str:
    """Text with its line breaks and runs of spaces folded to single spaces."""
    return " ".join((text or "").split())


def _may_hold_link(text: str) -> bool:
    """False when text surely has no link: every one found has a scheme or names a
    code host. Most abstracts have neither, and this is far cheaper than looking."""
    if "://" in text:
        return True
    lowered = text.lower()
    return any(host in lowered for host in CODE_HOSTS)


def plain_name(name: str) -> str:
    """An author name with LaTeX accents turned to Unicode, as the arXiv API spells it."""
    name = collapse(name)
    if "\\" in name or "{" in name:
        name = collapse(_latex.latex_to_text(name))
    return name


def record_from_snapshot_line(line: bytes | str) -> ArxivRecord:
    try:
        entry = orjson.loads(line)
    except orjson.JSONDecodeError as err:
        raise MalformedEntry(f"not JSON: {err}") from err
    if not isinstance(entry, dict):
        raise MalformedEntry("not a JSON object")
    versions = sorted(_versions(entry.get("versions")))
    return build_record(
        arxiv_id=_text(entry, "id"),
        version=versions[-1][0] if versions else None,
        title=_text(entry, "title"),
        abstract=_text(entry, "abstract"),
        authors=_authors(entry),
        categories=_text(entry, "categories").split(),
        comment=_text(entry, "comments"),
        journal_ref=_text(entry, "journal-ref"),
        doi=_text(entry, "doi"),
        published_at=versions[0][1] if versions else None,
        updated_at=versions[-1][1] if versions else None,
    )


def _text(entry: dict, key: str) -> str:
    value = entry.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise MalformedEntry(f"{key} is not text")
    return value


def _versions(raw) -> Iterator[tuple[int, datetime.datetime]]:
    for item in raw or ():
        try:
            number = int(str(item["version"]).lstrip("v"))
            created = email.utils.parsedate_to_datetime(item["created"])
        except (KeyError, TypeError, ValueError) as err:
            raise MalformedEntry(f"unreadable version {item!r}") from err
        yield number, created.astimezone(datetime.UTC)


def _authors(entry: dict) -> list[str]:
    parsed = entry.get("authors_parsed")
    if isinstance(parsed, list) and parsed:
        return [_parsed_name(parts) for parts in parsed]
    return re.split(r",|\band\b", _text(entry, "authors"))


def _parsed_name(parts) -> str:
    """ "First Last Suffix" from the snapshot's [last, first, suffix]."""
    if not isinstance(parts, list) or not all(isinstance(part, str) for part in parts):
        raise MalformedEntry(f"unreadable author {parts!r}")
    last, first, suffix = (*parts, "", "", "")[:3]
    return " ".join(part for part in (first, last, suffix) if part)


@dataclass(frozen=True)
class SkippedLine:
    line_number: int
    reason: str


@dataclass(frozen=True)
class LineBatch:
    """Consecutive lines of the file, as read: the unit a worker parses and stores."""

    first_line_number: int
    lines: list[bytes]
    size: int  # bytes of the file (compressed, for a .gz file) they took up


@dataclass
class BatchOutcome:
    fetched: int = 0  # records that passed the filter
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    skipped: list[SkippedLine] = field(default_factory=list)


def read_batches(path: Path, *, batch_size: int) -> Iterator[LineBatch]:
    """The file's lines in batches; a .gz file is decompressed as it is read."""
    with open(path, "rb") as raw:
        is_gzip = raw.read(2) == b"\x1f\x8b"
        raw.seek(0)
        lines = gzip.GzipFile(fileobj=raw) if is_gzip else raw
        first_line_number, position = 1, 0
        while batch := list(islice(lines, batch_size)):
            now = raw.tell()
            yield LineBatch(first_line_number, batch, now - position)
            first_line_number += len(batch)
            position = now


def store_batch(
    batch: LineBatch, *, record_filter: RecordFilter, limit: int | None = None
) -> BatchOutcome:
    """Parse the batch's lines and store the records that pass the filter, at most limit."""
    outcome = BatchOutcome()
    records: list[ArxivRecord] = []
    for line_number, line in enumerate(batch.lines, start=batch.first_line_number):
        if limit is not None and len(records) >= limit:
            break
        if not line.strip():
            continue
        try:
            record = record_from_snapshot_line(line)
        except MalformedEntry as err:
            outcome.skipped.append(SkippedLine(line_number, str(err)))
            continue
        if record_filter.matches(record):
            records.append(record)
    outcome.fetched = len(records)
    if records:
        stored = upsert_records(records)
        tag_stored_papers(stored)
        outcome.created, outcome.updated = stored.created, stored.updated
        outcome.unchanged = stored.unchanged
    return outcome


def import_snapshot(
    *,
    path: Path,
    record_filter: RecordFilter | None = None,
    limit: int | None = None,
    batch_size: int = BATCH_SIZE,
    workers: int = WORKERS,
    on_skip: Callable[[SkippedLine], None] = lambda skipped: None,
    on_progress: Callable[[int], None] = lambda n: None,
) -> IngestRun:
    """Store the snapshot's records that pass the filter; the run records the counts.

    fetched counts the records that passed the filter; skipped, the lines that
    could not be read. Batches are parsed and stored by that many worker
    processes, each with its own database connection; with a limit, or within
    a transaction of the caller's (whose atomicity other connections would
    break), this process does it all, in order.
    """
    record_filter = record_filter or RecordFilter()
    run = IngestRun.objects.create(
        kind=IngestRun.Kind.SNAPSHOT, query=_describe(path, record_filter, limit)
    )
    batches = read_batches(path, batch_size=batch_size)
    if workers > 1 and limit is None and not connection.in_atomic_block:
        outcomes = _store_in_workers(batches, record_filter=record_filter, workers=workers)
    else:
        outcomes = _store_here(batches, record_filter=record_filter, limit=limit)
    try:
        # Closed at once on a failure, so that workers stop rather than store what is queued.
        with closing(outcomes):
            for batch, outcome in outcomes:
                run.fetched += outcome.fetched
                run.created += outcome.created
                run.updated += outcome.updated
                run.unchanged += outcome.unchanged
                run.skipped += len(outcome.skipped)
                for skipped in outcome.skipped:
                    on_skip(skipped)
                on_progress(batch.size)
                # Saved after each batch so the admin shows how far a long import has got.
                run.save(update_fields=["fetched", "created", "updated", "unchanged", "skipped"])
    except BaseException as err:
        run.record_end(error=err)
        raise
    run.record_end()
    return run


def _store_here(
    batches: Iterable[LineBatch], *, record_filter: RecordFilter, limit: int | None
) -> Iterator[tuple[LineBatch, BatchOutcome]]:
    remaining = limit
    for batch in batches:
        outcome = store_batch(batch, record_filter=record_filter, limit=remaining)
        yield batch, outcome
        if remaining is not None:
            remaining -= outcome.fetched
            if remaining <= 0:
                return


def _store_in_workers(
    batches: Iterable[LineBatch], *, record_filter: RecordFilter, workers: int
) -> Iterator[tuple[LineBatch, BatchOutcome]]:
    """Outcomes in file order, while the workers parse and store the batches ahead.

    Two workers meeting on one paper or author are kept apart by the unique
    constraints and row locks upsert_records relies on. At most two batches a
    worker are in flight, so memory stays flat.
    """
    # Forked workers must not share this process's connections: each opens its own.
    connections.close_all()
    executor = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"))
    pending: deque[tuple[LineBatch, Future]] = deque()
    try:
        for batch in batches:
            pending.append(
                (batch, executor.submit(store_batch, batch, record_filter=record_filter))
            )
            if len(pending) >= 2 * workers:
                batch, future = pending.popleft()
                yield batch, future.result()
        while pending:
            batch, future = pending.popleft()
            yield batch, future.result()
    finally:
        executor.shutdown(cancel_futures=True)


def tag_stored_papers(stored: UpsertResult) -> None:
    """Apply the automatic tag rules to the papers just created or changed."""
    if stored.paper_ids:
        apply_tag_rules(paper_ids=stored.paper_ids)


def _describe(path: Path, record_filter: RecordFilter, limit: int | None) -> str:
    parts = [path.name]
    if record_filter.categories:
        parts.append("categories " + " ".join(record_filter.categories))
    if record_filter.since:
        parts.append(f"from {record_filter.since}")
    if record_filter.until:
        parts.append(f"until {record_filter.until}")
    if limit is not None:
        parts.append(f"limit {limit}")
    return ", ".join(parts)[:1000]
