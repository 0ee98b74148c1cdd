"""Store arXiv records in the catalog: create new papers, refresh known ones.

One call handles a batch with a fixed number of queries, whatever its size:
on PostgreSQL the rows travel by COPY into temporary tables, and set-based
INSERT ... SELECT and UPDATE ... FROM statements write them where they go.
Concurrent callers are safe: rows are claimed through unique constraints
(INSERT ... ON CONFLICT) and papers being refreshed are locked, so two
workers given the same records create each paper, author and category once
and an older version never overwrites a newer one.
"""

import datetime
import enum
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from django.db import IntegrityError, connection, transaction
from django.db.backends.utils import CursorWrapper
from django.db.models import BooleanField, Field, JSONField, Model, Q
from django.db.models.expressions import RawSQL
from django.utils import timezone
from psycopg.types.json import Jsonb

from catalog.changes import catalog_changed, papers_changed
from catalog.models import (
    Author,
    Category,
    CodeLink,
    Paper,
    PaperAuthor,
    PaperTag,
    Tag,
    free_author_slugs,
    title_key,
)
from catalog.names import normalize_name
from catalog.services import upsert_categories
from ingest.records import ArxivRecord, NameParts

if TYPE_CHECKING:
    # A model's concrete field; Field is generic in the stubs alone, not at run time.
    ConcreteField = Field[Any, Any]

# The columns arXiv owns; everything else on a paper is the curators'.
ARXIV_FIELDS = (
    "title",
    "title_key",
    "abstract",
    "author_names",
    "author_list",
    "author_slugs",
    "author_parts",
    "primary_category_id",
    "comment",
    "journal_ref",
    "doi",
    "published_at",
    "published_precision",
    "updated_at",
    "announced_at",
    "version",
)
EXTRACTED_SOURCES = (CodeLink.Source.ABSTRACT, CodeLink.Source.COMMENT)
PaperCategory = Paper.categories.through
# What a new paper row is written with; the other columns take their defaults.
NEW_PAPER_FIELDS = ("arxiv_id", *ARXIV_FIELDS, "added_at", "is_visible", "review")

# A round is repeated only for records another worker inserted meanwhile;
# the next round sees them committed, so a second retry means a bug.
MAX_ROUNDS = 3


class Outcome(enum.StrEnum):
    CREATED = "created"
    UPDATED = "updated"
    UNCHANGED = "unchanged"
    # Turned down in review: left as it is, and given no tags.
    REJECTED = "rejected"


@dataclass(frozen=True)
class StoredPaper:
    """What became of one record's paper."""

    paper_id: int
    outcome: Outcome
    previous_version: int | None = None  # the version stored before, if any
    # The paper was a listing without an arXiv id, matched by its title.
    matched_listing: bool = False
    # A paper from another source matched to the paper already stored from arXiv.
    matched_arxiv: bool = False
    tags_added: tuple[int, ...] = ()  # ids of the given tags it did not have


@dataclass
class UpsertResult:
    created: int = 0
    updated: int = 0
    unchanged: int = 0  # rejected papers included
    paper_ids: list[int] = field(default_factory=list)  # created and updated
    stored: dict[str, StoredPaper] = field(default_factory=dict)  # by arXiv id

    def __iadd__(self, other: "UpsertResult") -> "UpsertResult":
        self.created += other.created
        self.updated += other.updated
        self.unchanged += other.unchanged
        self.paper_ids += other.paper_ids
        self.stored |= other.stored
        return self


@dataclass
class _Planned:
    """What one record will be written as."""

    record: ArxivRecord
    values: dict[str, Any]  # by name: the ARXIV_FIELDS
    author_ids: list[int]
    category_ids: set[int]
    code_urls: dict[str, tuple[str, str]]  # url -> (source, kind), minus urls a curator holds
    paper_id: int | None = None  # None: a new paper, until it is inserted

    @property
    def stored_id(self) -> int:
        """The paper's id: known for every planned paper once it is stored."""
        if self.paper_id is None:
            raise ValueError(f"arXiv:{self.record.arxiv_id} is not stored yet.")
        return self.paper_id


def upsert_records(
    records: Sequence[ArxivRecord], *, tags: Sequence[Tag] = (), for_review: bool = False
) -> UpsertResult:
    """Create or refresh the papers for records; give every paper the tags.

    New papers are public, or with for_review wait for a curator's review.
    Papers rejected in review are left alone.
    """
    latest = _latest_per_id(records)
    result = UpsertResult()
    if not latest:
        return result
    # Authors and categories are committed on their own, so that concurrent
    # importers wait on each other's new names only for this short
    # transaction, not while the other stores its papers. Should the papers
    # then fail, the names stay, as they would for any later paper.
    with transaction.atomic():
        authors = _authors_by_key({name for r in latest for name in r.authors})
        # Sorted, so concurrent batches take unique-index locks in one order.
        categories = upsert_categories(
            sorted({code for r in latest for code in (r.primary_category, *r.categories)})
        )
    title_keys = {r.arxiv_id: title_key(r.title) for r in latest}
    with transaction.atomic():
        # Bulk writes send no model signals: cached catalog pages go stale here.
        catalog_changed()
        pending, match_titles = latest, True
        tagged_ids: list[int] = []
        for _ in range(MAX_ROUNDS):
            pending, match_titles = _upsert_round(
                pending,
                authors=authors,
                categories=categories,
                title_keys=title_keys,
                match_titles=match_titles,
                for_review=for_review,
                result=result,
                touched_ids=tagged_ids,
            )
            if not pending:
                break
        else:
            raise RuntimeError(f"{len(pending)} records kept conflicting with concurrent writes")
        if tags and tagged_ids:
            add_tags(tagged_ids, tags, result)
        # New papers came with their version from the insert.
        papers_changed(
            stored.paper_id
            for stored in result.stored.values()
            if stored.outcome == Outcome.UPDATED
            or (stored.outcome == Outcome.UNCHANGED and stored.tags_added)
        )
    return result


def add_tags(paper_ids: list[int], tags: Sequence[Tag], result: UpsertResult) -> None:
    """Give the papers the tags they lack, and note which each got."""
    new = PaperTag.objects.give(paper_ids, tags)
    added: dict[int, tuple[int, ...]] = {}
    for row in new:
        added[row.paper_id] = (*added.get(row.paper_id, ()), row.tag_id)
    for arxiv_id, stored in result.stored.items():
        if stored.paper_id in added:
            result.stored[arxiv_id] = replace(stored, tags_added=added[stored.paper_id])


def _latest_per_id(records: Sequence[ArxivRecord]) -> list[ArxivRecord]:
    newest: dict[str, ArxivRecord] = {}
    for record in records:
        held = newest.get(record.arxiv_id)
        if held is None or not _is_older(record, version=held.version, updated_at=held.updated_at):
            newest[record.arxiv_id] = record
    return [newest[arxiv_id] for arxiv_id in sorted(newest)]


def _is_older(
    record: ArxivRecord, *, version: int | None, updated_at: datetime.datetime | None
) -> bool:
    if record.version is not None and version is not None:
        return record.version < version
    # Without version numbers only the day is sure: OAI-PMH gives dates alone.
    if record.updated_at is not None and updated_at is not None:
        return _day(record.updated_at) < _day(updated_at)
    return False


def _day(moment: datetime.datetime) -> datetime.date:
    return moment.astimezone(datetime.UTC).date()


def _merged_moment(
    given: datetime.datetime | None, stored: datetime.datetime | None
) -> datetime.datetime | None:
    """The record's time; the stored one when the record gives none, or only the same day."""
    if given is None:
        return stored
    day_only = given.astimezone(datetime.UTC).time() == datetime.time(0)
    if stored is not None and day_only and _day(given) == _day(stored):
        return stored
    return given


# An author as a paper credits it: (id, name, slug).
CreditedAuthor = tuple[int, str, str]


def _authors_by_key(names: set[str]) -> dict[str, CreditedAuthor]:
    """The Author each of the names is filed under, created where missing: a
    name curators merged into another author gives that author.

    Spellings that differ only in case, spacing and accents share one Author,
    named as first stored. Like catalog.services.upsert_authors, without a
    model instance per row: a snapshot batch names some ten thousand authors.
    Rows go in sorted by key, so concurrent batches take unique-index locks in
    one order; a row lost to a slug another batch just took is tried again.
    """
    key_of: dict[str, str] = {}
    spelled: dict[str, str] = {}
    for name in sorted(names):
        if cleaned := " ".join(name.split()):
            key_of[name] = normalize_name(cleaned)
            spelled.setdefault(key_of[name], cleaned)
    fields = _fields(Author, "name", "normalized_name", "slug")
    author, columns = _table(Author), _columns(fields)
    by_key: dict[str, CreditedAuthor] = {}
    for _ in range(3):
        missing = {key: name for key, name in spelled.items() if key not in by_key}
        if not missing:
            break
        stored = dict(
            Author.objects.filter(normalized_name__in=list(missing)).values_list(
                "normalized_name", "pk"
            )
        )
        new = {key: name for key, name in missing.items() if key not in stored}
        slugs = free_author_slugs(list(new.values()))
        rows = ((name, key, slugs[name]) for key, name in new.items())
        with _staged(fields, rows) as staged, connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO {author} ({columns}) SELECT {columns} FROM {staged}"  # noqa: S608
                " WHERE true ORDER BY normalized_name ON CONFLICT DO NOTHING"
            )
        found = Author.objects.filter(normalized_name__in=list(missing)).select_related(
            "merged_into"
        )
        for row in found:
            credited = row.credited
            by_key[row.normalized_name] = (credited.pk, credited.name, credited.slug)
    return {name: by_key[key] for name, key in key_of.items()}


def _upsert_round(
    records: list[ArxivRecord],
    *,
    authors: dict[str, CreditedAuthor],
    categories: dict[str, Category],
    title_keys: dict[str, str],
    match_titles: bool,
    for_review: bool,
    result: UpsertResult,
    touched_ids: list[int],
) -> tuple[list[ArxivRecord], bool]:
    """Write what it can; return the records to try again and whether titles may match."""
    stored = _lock_stored(records, title_keys=title_keys, match_titles=match_titles)
    by_id = {p.arxiv_id: p for p in stored if p.arxiv_id}
    idless_by_key: dict[str, Paper] = {}
    for listing in stored:
        if not listing.arxiv_id:
            idless_by_key.setdefault(listing.title_key, listing)
    links = _stored_links(stored)
    stored_authors = _stored_author_ids(stored)
    stored_categories = _stored_category_ids(stored)

    new: list[_Planned] = []
    changed: list[_Planned] = []
    unchanged_ids: list[int] = []
    kept: dict[str, StoredPaper] = {}
    for record in records:
        paper = by_id.get(record.arxiv_id)
        if paper is None and idless_by_key and match_titles:
            paper = idless_by_key.pop(title_keys[record.arxiv_id], None)
        if paper is not None and paper.review == Paper.Review.REJECTED:
            kept[record.arxiv_id] = StoredPaper(paper.pk, Outcome.REJECTED, paper.version)
            continue
        planned = _plan(
            record,
            paper,
            title_key=title_keys[record.arxiv_id],
            authors=authors,
            categories=categories,
            links=links,
        )
        if paper is None:
            new.append(planned)
        elif _is_older(record, version=paper.version, updated_at=paper.updated_at) or (
            paper.arxiv_id
            and planned.values == {name: getattr(paper, name) for name in planned.values}
            and planned.author_ids == stored_authors.get(paper.pk, [])
            and planned.category_ids == stored_categories.get(paper.pk, set())
            and planned.code_urls == _extracted_links(links.get(paper.pk, []))
        ):
            unchanged_ids.append(paper.pk)
            kept[record.arxiv_id] = StoredPaper(paper.pk, Outcome.UNCHANGED, paper.version)
        else:
            changed.append(planned)
            kept[record.arxiv_id] = StoredPaper(
                paper.pk, Outcome.UPDATED, paper.version, matched_listing=not paper.arxiv_id
            )

    if changed:
        try:
            _update_papers(changed)
        except IntegrityError:
            # An id-less paper was being given an id another worker has just
            # inserted: take the round again without matching by title.
            return records, False
    created, conflicting = _insert_papers(new, for_review=for_review)
    kept |= {p.record.arxiv_id: StoredPaper(p.stored_id, Outcome.CREATED) for p in created}

    _replace_related([*created, *changed], stored_authors, stored_categories, links)
    result.created += len(created)
    result.updated += len(changed)
    result.unchanged += len(unchanged_ids) + sum(
        1 for stored in kept.values() if stored.outcome == Outcome.REJECTED
    )
    result.stored |= kept
    written_ids = [planned.stored_id for planned in (*created, *changed)]
    result.paper_ids += written_ids
    touched_ids += written_ids + unchanged_ids
    return conflicting, match_titles


def _lock_stored(
    records: list[ArxivRecord], *, title_keys: dict[str, str], match_titles: bool
) -> list[Paper]:
    wanted = _among("arxiv_id", [r.arxiv_id for r in records])
    if match_titles:
        wanted |= Q(arxiv_id__isnull=True, merged_into__isnull=True) & _among(
            "title_key", {title_keys[r.arxiv_id] for r in records}
        )
    # Ordered by id so concurrent workers lock in the same order.
    return list(
        Paper.objects.select_for_update()
        .filter(wanted)
        .only("arxiv_id", "review", "source_key", *ARXIV_FIELDS)
        .order_by("pk")
    )


def _among(field_name: str, values: Iterable[str]) -> Q:
    """The paper's field is one of values: on PostgreSQL one array parameter,
    not thousands of parameters, each costly to bind."""
    if connection.vendor != "postgresql":
        return Q(**{f"{field_name}__in": values})
    column = connection.ops.quote_name(_column(_fields(Paper, field_name)[0]))
    return Q(RawSQL(f"{column} = ANY(%s)", [list(values)], output_field=BooleanField()))  # noqa: S611


def _stored_links(papers: list[Paper]) -> dict[int, list[CodeLink]]:
    links: dict[int, list[CodeLink]] = {}
    if papers:
        for link in CodeLink.objects.filter(paper__in=papers).only(
            "paper_id", "url", "source", "kind"
        ):
            links.setdefault(link.paper_id, []).append(link)
    return links


def _stored_author_ids(papers: list[Paper]) -> dict[int, list[int]]:
    author_ids: dict[int, list[int]] = {}
    if papers:
        rows = PaperAuthor.objects.filter(paper__in=papers).order_by("paper_id", "position")
        for paper_id, author_id in rows.values_list("paper_id", "author_id"):
            author_ids.setdefault(paper_id, []).append(author_id)
    return author_ids


def _stored_category_ids(papers: list[Paper]) -> dict[int, set[int]]:
    category_ids: dict[int, set[int]] = {}
    if papers:
        rows = PaperCategory.objects.filter(paper__in=papers).values_list("paper_id", "category_id")
        for paper_id, category_id in rows:
            category_ids.setdefault(paper_id, set()).add(category_id)
    return category_ids


def _extracted_links(links: list[CodeLink]) -> dict[str, tuple[str, str]]:
    return {
        link.url: (link.source, link.kind) for link in links if link.source in EXTRACTED_SOURCES
    }


def _plan(
    record: ArxivRecord,
    paper: Paper | None,
    *,
    title_key: str,
    authors: dict[str, CreditedAuthor],
    categories: dict[str, Category],
    links: dict[int, list[CodeLink]],
) -> _Planned:
    elsewhere = paper if paper is not None and paper.source_key else None
    # Each author once, with the parts of the name first naming them.
    parts_of = dict(zip(record.authors, record.author_parts, strict=False))
    credited: dict[int, tuple[CreditedAuthor, NameParts | None]] = {}
    for name in record.authors:
        if name in authors:
            credited.setdefault(authors[name][0], (authors[name], parts_of.get(name)))
    ordered_authors = [author for author, _ in credited.values()]
    author_list = [name for _, name, _ in ordered_authors]
    author_parts = [
        [parts.family, parts.given, parts.suffix] if parts else [] for _, parts in credited.values()
    ]
    if not record.author_parts and paper is not None and paper.author_list == author_list:
        # A source that gives names whole keeps the parts another gave them.
        author_parts = paper.author_parts
    elif not record.author_parts:
        author_parts = []
    category_ids = {
        categories[code].pk for code in (record.primary_category, *record.categories) if code
    }
    kept_elsewhere = set()
    if paper is not None:
        kept_elsewhere = {
            link.url for link in links.get(paper.pk, []) if link.source not in EXTRACTED_SOURCES
        }
    values = {
        "title": record.title,
        "title_key": title_key,
        "abstract": record.abstract,
        "author_names": ", ".join(name for _, name, _ in ordered_authors),
        "author_list": author_list,
        "author_slugs": [slug for _, _, slug in ordered_authors],
        "author_parts": author_parts,
        "primary_category_id": categories[record.primary_category].pk
        if record.primary_category
        else None,
        "comment": record.comment,
        # A paper another source gave (ingest.venues) keeps its published
        # version's facts where arXiv has none.
        "journal_ref": record.journal_ref or (elsewhere.journal_ref if elsewhere else ""),
        "doi": record.doi or (elsewhere.doi if elsewhere else ""),
        # A source that leaves out a date or the version keeps what is stored.
        "published_at": _merged_moment(record.published_at, paper.published_at if paper else None),
        "published_precision": Paper.DatePrecision.DAY
        if record.published_at or paper is None
        else paper.published_precision,
        "updated_at": _merged_moment(record.updated_at, paper.updated_at if paper else None),
        # The first announcement stays: a later listing announces a new version.
        "announced_at": min(
            (m for m in (record.announced_at, paper.announced_at if paper else None) if m),
            default=None,
        ),
        "version": _merged_version(record, paper),
    }
    return _Planned(
        record=record,
        values=values,
        author_ids=[pk for pk, _, _ in ordered_authors],
        category_ids=category_ids,
        code_urls={
            url: (source, kind)
            for url, source, kind in record.code_urls
            if url not in kept_elsewhere
        },
        paper_id=paper.pk if paper else None,
    )


def _merged_version(record: ArxivRecord, paper: Paper | None) -> int | None:
    if record.version is not None or paper is None:
        return record.version
    newer = (
        record.updated_at and paper.updated_at and _day(record.updated_at) > _day(paper.updated_at)
    )
    # Newer by date with no number given (OAI-PMH): the stored number is stale.
    return None if newer else paper.version


def _update_papers(changed: list[_Planned]) -> None:
    fields = _fields(Paper, "id", "arxiv_id", *ARXIV_FIELDS)
    rows = (
        (p.paper_id, p.record.arxiv_id, *(p.values[name] for name in ARXIV_FIELDS)) for p in changed
    )
    paper, quote = _table(Paper), connection.ops.quote_name
    assignments = ", ".join(f"{quote(_column(f))} = s.{quote(_column(f))}" for f in fields[1:])
    # A savepoint: the caller goes on after an IntegrityError.
    with transaction.atomic(), _staged(fields, rows) as staged, connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {paper} AS p SET {assignments} FROM {staged} s WHERE p.id = s.id"  # noqa: S608
        )


def _insert_papers(
    new: list[_Planned], *, for_review: bool
) -> tuple[list[_Planned], list[ArxivRecord]]:
    """Insert new papers; a paper another worker inserted first is left alone.

    Returns the planned papers now stored and the records whose id turned out
    to be taken, for the next round to refresh.
    """
    if not new:
        return [], []
    fields = _fields(Paper, *NEW_PAPER_FIELDS)
    review = Paper.Review.PENDING if for_review else Paper.Review.PUBLISHED
    defaults = (timezone.now(), not for_review, review.value)
    rows = ((p.record.arxiv_id, *(p.values[name] for name in ARXIV_FIELDS), *defaults) for p in new)
    paper, columns = _table(Paper), _columns(fields)
    with _staged(fields, rows) as staged, connection.cursor() as cursor:
        # In id order, so concurrent workers take the unique index's locks in one order.
        cursor.execute(
            f"INSERT INTO {paper} ({columns}) SELECT {columns} FROM {staged}"  # noqa: S608
            " WHERE true ORDER BY arxiv_id ON CONFLICT (arxiv_id) DO NOTHING"
            " RETURNING arxiv_id, id"
        )
        inserted = dict(cursor.fetchall())
    created: list[_Planned] = []
    conflicting: list[ArxivRecord] = []
    for planned in new:
        if pk := inserted.get(planned.record.arxiv_id):
            planned.paper_id = pk
            created.append(planned)
        else:
            conflicting.append(planned.record)
    return created, conflicting


def _replace_related(
    written: list[_Planned],
    stored_authors: dict[int, list[int]],
    stored_categories: dict[int, set[int]],
    links: dict[int, list[CodeLink]],
) -> None:
    """Bring authors, categories and extracted code links in step with the records.

    The rows go straight in: every paper here was just inserted or is locked
    (FOR UPDATE, which also blocks others from adding rows that point to it),
    and its stale rows are gone, so nothing can collide with them.
    """
    stale_authors = {
        p.stored_id for p in written if stored_authors.get(p.stored_id, []) != p.author_ids
    }
    stale_categories = {
        p.stored_id for p in written if stored_categories.get(p.stored_id, set()) != p.category_ids
    }
    stale_link_ids: list[int] = []
    kept_urls: set[tuple[int, str]] = set()
    for p in written:
        for link in links.get(p.stored_id, []):
            if link.source not in EXTRACTED_SOURCES:
                continue
            if p.code_urls.get(link.url) == (link.source, link.kind):
                kept_urls.add((p.stored_id, link.url))
            else:
                stale_link_ids.append(link.pk)
    # Only papers that had rows need them cleared; new papers have none.
    _delete(PaperAuthor, "paper", [pk for pk in stale_authors if pk in stored_authors])
    _delete(PaperCategory, "paper", [pk for pk in stale_categories if pk in stored_categories])
    _delete(CodeLink, "id", stale_link_ids)
    _copy_into(
        PaperAuthor,
        _fields(PaperAuthor, "paper", "author", "position"),
        (
            (p.paper_id, author_id, position)
            for p in written
            if p.paper_id in stale_authors
            for position, author_id in enumerate(p.author_ids)
        ),
    )
    _copy_into(
        PaperCategory,
        _fields(PaperCategory, "paper", "category"),
        (
            (p.paper_id, category_id)
            for p in written
            if p.paper_id in stale_categories
            for category_id in sorted(p.category_ids)
        ),
    )
    now = timezone.now()
    _copy_into(
        CodeLink,
        _fields(CodeLink, "paper", "url", "kind", "source", "created_at"),
        (
            (p.paper_id, url, kind, source, now)
            for p in written
            for url, (source, kind) in p.code_urls.items()
            if (p.stored_id, url) not in kept_urls
        ),
    )


def _fields(model: type[Model], *names: str) -> "list[ConcreteField]":
    fields = []
    for name in names:
        found = model._meta.get_field(name)
        if not isinstance(found, Field):
            raise TypeError(f"{model.__name__}.{name} is no column of its table.")
        fields.append(found)
    return fields


def _column(field: "ConcreteField") -> str:
    if field.column is None:  # fields of a table all have one
        raise TypeError(f"{field} has no column.")
    return field.column


def _table(model: type[Model]) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def _columns(fields: "Sequence[ConcreteField]") -> str:
    return ", ".join(connection.ops.quote_name(_column(f)) for f in fields)


@contextmanager
def _staged(fields: "Sequence[ConcreteField]", rows: Iterable[Sequence[object]]) -> Iterator[str]:
    """A temporary table of rows, its columns named and typed like fields.

    Dropped afterwards, or by the rollback when something fails.
    """
    quote = connection.ops.quote_name
    table = quote("upsert_staged")
    columns = ", ".join(f"{quote(_column(f))} {f.db_type(connection)}" for f in fields)
    with transaction.atomic(savepoint=False), connection.cursor() as cursor:
        cursor.execute(f"CREATE TEMPORARY TABLE {table} ({columns})")
        _write_rows(cursor, table, fields, rows)
        yield table
        cursor.execute(f"DROP TABLE {table}")


def _copy_into(
    model: type[Model], fields: "Sequence[ConcreteField]", rows: Iterable[Sequence[object]]
) -> None:
    if rows := list(rows):
        with connection.cursor() as cursor:
            _write_rows(cursor, _table(model), fields, rows)


def _delete(model: type[Model], field_name: str, values: list[int]) -> None:
    """DELETE the rows whose field is one of values, in one statement.

    Not QuerySet.delete(), which goes row by row in chunks when anything
    listens for deletions, and the rows here are deleted only to be replaced.
    """
    if values:
        column = connection.ops.quote_name(_column(_fields(model, field_name)[0]))
        placeholders = ", ".join(["%s"] * len(values))
        with connection.cursor() as cursor:
            cursor.execute(
                f"DELETE FROM {_table(model)} WHERE {column} IN ({placeholders})",  # noqa: S608
                values,
            )


def _write_rows(
    cursor: CursorWrapper,
    table: str,
    fields: "Sequence[ConcreteField]",
    rows: Iterable[Sequence[object]],
) -> None:
    columns = _columns(fields)
    if connection.vendor == "postgresql":
        json_at = [n for n, f in enumerate(fields) if isinstance(f, JSONField)]
        # COPY adapts each value in C, far faster than parameters or arrays.
        with cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
            for row in rows:
                if json_at:
                    row = list(row)
                    for n in json_at:
                        row[n] = Jsonb(row[n])
                copy.write_row(row)
        return
    placeholders = ", ".join(["%s"] * len(fields))
    cursor.executemany(
        f"INSERT INTO {table} ({columns}) VALUES ({placeholders})",  # noqa: S608
        [
            [f.get_db_prep_save(value, connection) for f, value in zip(fields, row, strict=True)]
            for row in rows
        ],
    )
