"""Store arXiv records in the catalog: create new papers, refresh known ones.

One call handles a batch with a fixed number of queries, whatever its size.
Concurrent callers are safe: rows are claimed through unique constraints
(INSERT ... ON CONFLICT) and papers being refreshed are locked, so two
workers given the same records create each paper, author and category once
and an older version never overwrites a newer one.
"""

import datetime
from collections.abc import Sequence
from dataclasses import dataclass, field

from django.db import IntegrityError, connection, transaction
from django.db.models import Q
from django.utils import timezone

from catalog.models import (
    Author,
    Category,
    CodeLink,
    Paper,
    PaperAuthor,
    PaperTag,
    Tag,
    normalize_name,
    title_key,
)
from catalog.services import upsert_categories
from ingest.records import ArxivRecord

# The columns arXiv owns; everything else on a paper is the curators'.
ARXIV_FIELDS = (
    "title",
    "title_key",
    "abstract",
    "author_names",
    "primary_category_id",
    "comment",
    "journal_ref",
    "doi",
    "published_at",
    "published_precision",
    "updated_at",
    "version",
)
EXTRACTED_SOURCES = (CodeLink.Source.ABSTRACT, CodeLink.Source.COMMENT)
PaperCategory = Paper.categories.through

# A round is repeated only for records another worker inserted meanwhile;
# the next round sees them committed, so a second retry means a bug.
MAX_ROUNDS = 3


@dataclass
class UpsertResult:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    paper_ids: list[int] = field(default_factory=list)  # created and updated

    def __iadd__(self, other: "UpsertResult") -> "UpsertResult":
        self.created += other.created
        self.updated += other.updated
        self.unchanged += other.unchanged
        self.paper_ids += other.paper_ids
        return self


@dataclass
class _Planned:
    """What one record will be written as."""

    record: ArxivRecord
    values: dict
    author_ids: list[int]
    category_ids: set[int]
    code_urls: dict[str, str]  # url -> source, minus urls a curator already holds
    paper: Paper | None = None  # None: a new paper


def upsert_records(records: Sequence[ArxivRecord], *, tags: Sequence[Tag] = ()) -> UpsertResult:
    """Create or refresh the papers for records; give every paper the tags."""
    latest = _latest_per_id(records)
    result = UpsertResult()
    if not latest:
        return result
    with transaction.atomic():
        # Sorted, so concurrent batches take unique-index locks in one order.
        authors = _authors_by_key({name for r in latest for name in r.authors})
        categories = upsert_categories(
            sorted({code for r in latest for code in (r.primary_category, *r.categories)})
        )
        pending, match_titles = latest, True
        tagged_ids: list[int] = []
        for _ in range(MAX_ROUNDS):
            pending, match_titles = _upsert_round(
                pending,
                authors=authors,
                categories=categories,
                match_titles=match_titles,
                result=result,
                touched_ids=tagged_ids,
            )
            if not pending:
                break
        else:
            raise RuntimeError(f"{len(pending)} records kept conflicting with concurrent writes")
        if tags and tagged_ids:
            now = timezone.now()
            PaperTag.objects.bulk_create(
                [PaperTag(paper_id=pk, tag=tag, added_at=now) for pk in tagged_ids for tag in tags],
                ignore_conflicts=True,
            )
    return result


def _latest_per_id(records: Sequence[ArxivRecord]) -> list[ArxivRecord]:
    newest: dict[str, ArxivRecord] = {}
    for record in records:
        held = newest.get(record.arxiv_id)
        if held is None or not _is_older(record, version=held.version, updated_at=held.updated_at):
            newest[record.arxiv_id] = record
    return [newest[arxiv_id] for arxiv_id in sorted(newest)]


def _is_older(record: ArxivRecord, *, version, updated_at) -> bool:
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


def _authors_by_key(names: set[str]) -> dict[str, tuple[int, str]]:
    """(id, name) of the Author for each normalised name, created where missing.

    Like catalog.services.upsert_authors, without a model instance per row:
    a snapshot batch names some ten thousand authors. Rows go in sorted by
    key, so concurrent batches take unique-index locks in one order.
    """
    spelled: dict[str, str] = {}
    for name in sorted(names):
        if cleaned := " ".join(name.split()):
            spelled.setdefault(normalize_name(cleaned), cleaned)
    keys = sorted(spelled)
    _insert_rows(
        Author,
        [Author._meta.get_field("name"), Author._meta.get_field("normalized_name")],
        [[spelled[key], key] for key in keys],
        conflict_field="normalized_name",
    )
    rows = Author.objects.filter(normalized_name__in=keys).values_list(
        "normalized_name", "pk", "name"
    )
    return {key: (pk, name) for key, pk, name in rows}


def _upsert_round(
    records: list[ArxivRecord],
    *,
    authors: dict[str, tuple[int, str]],
    categories: dict[str, Category],
    match_titles: bool,
    result: UpsertResult,
    touched_ids: list[int],
) -> tuple[list[ArxivRecord], bool]:
    """Write what it can; return the records to try again and whether titles may match."""
    stored = _lock_stored(records, match_titles=match_titles)
    by_id = {p.arxiv_id: p for p in stored if p.arxiv_id}
    idless_by_key: dict[str, Paper] = {}
    for paper in stored:
        if not paper.arxiv_id:
            idless_by_key.setdefault(paper.title_key, paper)
    links = _stored_links(stored)
    stored_authors = _stored_author_ids(stored)
    stored_categories = _stored_category_ids(stored)

    new, changed, unchanged_ids = [], [], []
    for record in records:
        paper = by_id.get(record.arxiv_id)
        if paper is None and match_titles:
            paper = idless_by_key.pop(title_key(record.title), None)
        planned = _plan(record, paper, authors=authors, categories=categories, links=links)
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
        else:
            changed.append(planned)

    if changed:
        try:
            _update_papers(changed)
        except IntegrityError:
            # An id-less paper was being given an id another worker has just
            # inserted: take the round again without matching by title.
            return records, False
    created, conflicting = _insert_papers(new)

    _replace_related([*created, *changed], stored_authors, stored_categories, links)
    result.created += len(created)
    result.updated += len(changed)
    result.unchanged += len(unchanged_ids)
    written_ids = [planned.paper.pk for planned in (*created, *changed)]
    result.paper_ids += written_ids
    touched_ids += written_ids + unchanged_ids
    return conflicting, match_titles


def _lock_stored(records: list[ArxivRecord], *, match_titles: bool) -> list[Paper]:
    wanted = Q(arxiv_id__in=[r.arxiv_id for r in records])
    if match_titles:
        wanted |= Q(
            arxiv_id__isnull=True,
            merged_into__isnull=True,
            title_key__in={title_key(r.title) for r in records},
        )
    # Ordered by id so concurrent workers lock in the same order.
    return list(
        Paper.objects.select_for_update()
        .filter(wanted)
        .only("arxiv_id", *ARXIV_FIELDS)
        .order_by("pk")
    )


def _stored_links(papers: list[Paper]) -> dict[int, list[CodeLink]]:
    links: dict[int, list[CodeLink]] = {}
    if papers:
        for link in CodeLink.objects.filter(paper__in=papers).only("paper_id", "url", "source"):
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


def _extracted_links(links: list[CodeLink]) -> dict[str, str]:
    return {link.url: link.source for link in links if link.source in EXTRACTED_SOURCES}


def _plan(
    record: ArxivRecord,
    paper: Paper | None,
    *,
    authors: dict[str, tuple[int, str]],
    categories: dict[str, Category],
    links: dict[int, list[CodeLink]],
) -> _Planned:
    ordered_authors = list(
        {key: authors[key] for key in map(normalize_name, record.authors) if key}.values()
    )
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
        "title_key": title_key(record.title),
        "abstract": record.abstract,
        "author_names": ", ".join(name for _, name in ordered_authors),
        "primary_category_id": categories[record.primary_category].pk
        if record.primary_category
        else None,
        "comment": record.comment,
        "journal_ref": record.journal_ref,
        "doi": record.doi,
        # A source that leaves out a date or the version keeps what is stored.
        "published_at": _merged_moment(record.published_at, paper and paper.published_at),
        "published_precision": Paper.DatePrecision.DAY
        if record.published_at or paper is None
        else paper.published_precision,
        "updated_at": _merged_moment(record.updated_at, paper and paper.updated_at),
        "version": _merged_version(record, paper),
    }
    return _Planned(
        record=record,
        values=values,
        author_ids=[pk for pk, _ in ordered_authors],
        category_ids=category_ids,
        code_urls={url: src for url, src in record.code_urls if url not in kept_elsewhere},
        paper=paper,
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
    for planned in changed:
        paper = planned.paper
        for name, value in planned.values.items():
            setattr(paper, name, value)
        paper.arxiv_id = planned.record.arxiv_id
    with transaction.atomic():
        Paper.objects.bulk_update(
            [planned.paper for planned in changed], ["arxiv_id", *ARXIV_FIELDS]
        )


def _insert_papers(new: list[_Planned]) -> tuple[list[_Planned], list[ArxivRecord]]:
    """Insert new papers; a paper another worker inserted first is left alone.

    Returns the planned papers now stored and the records whose id turned out
    to be taken, for the next round to refresh.
    """
    if not new:
        return [], []
    now = timezone.now()
    papers = [
        Paper(arxiv_id=planned.record.arxiv_id, added_at=now, **planned.values) for planned in new
    ]
    fields = [f for f in Paper._meta.concrete_fields if not f.primary_key and not f.generated]
    rows = [[f.get_db_prep_save(f.pre_save(p, True), connection) for f in fields] for p in papers]
    inserted = dict(
        _insert_rows(Paper, fields, rows, conflict_field="arxiv_id", returning=("arxiv_id", "id"))
    )
    created, conflicting = [], []
    for planned, paper in zip(new, papers, strict=True):
        if paper.arxiv_id in inserted:
            paper.pk = inserted[paper.arxiv_id]
            planned.paper = paper
            created.append(planned)
        else:
            conflicting.append(planned.record)
    return created, conflicting


def _insert_rows(
    model,
    fields: list,
    rows: list[list],
    *,
    conflict_field: str | None = None,
    returning: tuple[str, ...] = (),
) -> list[tuple]:
    """INSERT plain value rows, without model instances; a conflict on conflict_field skips.

    On PostgreSQL the rows travel as one array per column (unnest), which
    keeps a batch of thousands to a handful of parameters.
    """
    if not rows:
        return []
    quote = connection.ops.quote_name
    columns = ", ".join(quote(f.column) for f in fields)
    tail = ""
    if conflict_field:
        tail = f" ON CONFLICT ({quote(model._meta.get_field(conflict_field).column)}) DO NOTHING"
    if returning:
        tail += " RETURNING " + ", ".join(quote(model._meta.get_field(n).column) for n in returning)
    table = quote(model._meta.db_table)
    found: list[tuple] = []
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            arrays = ", ".join(f"%s::{f.db_type(connection)}[]" for f in fields)
            cursor.execute(
                f"INSERT INTO {table} ({columns}) SELECT * FROM unnest({arrays}){tail}",  # noqa: S608
                [list(column) for column in zip(*rows, strict=True)],
            )
            return cursor.fetchall() if returning else []
        batch_size = connection.ops.bulk_batch_size(fields, rows)
        row = "(" + ", ".join(["%s"] * len(fields)) + ")"
        for start in range(0, len(rows), batch_size):
            chunk = rows[start : start + batch_size]
            cursor.execute(
                f"INSERT INTO {table} ({columns}) VALUES {', '.join([row] * len(chunk))}{tail}",  # noqa: S608
                [value for values in chunk for value in values],
            )
            if returning:
                found += cursor.fetchall()
    return found


def _replace_related(
    written: list[_Planned],
    stored_authors: dict[int, list[int]],
    stored_categories: dict[int, set[int]],
    links: dict[int, list[CodeLink]],
) -> None:
    """Bring authors, categories and extracted code links in step with the records."""
    stale_authors = [
        p.paper.pk for p in written if stored_authors.get(p.paper.pk, []) != p.author_ids
    ]
    stale_categories = [
        p.paper.pk for p in written if stored_categories.get(p.paper.pk, set()) != p.category_ids
    ]
    stale_link_ids = [
        link.pk
        for p in written
        for link in links.get(p.paper.pk, [])
        if link.source in EXTRACTED_SOURCES and p.code_urls.get(link.url) != link.source
    ]
    # Only papers that had rows need them cleared; new papers have none.
    if replaced := [pk for pk in stale_authors if pk in stored_authors]:
        PaperAuthor.objects.filter(paper_id__in=replaced).delete()
    if replaced := [pk for pk in stale_categories if pk in stored_categories]:
        PaperCategory.objects.filter(paper_id__in=replaced).delete()
    if stale_link_ids:
        CodeLink.objects.filter(pk__in=stale_link_ids).delete()
    stale_authors_set, stale_categories_set = set(stale_authors), set(stale_categories)
    _insert_rows(
        PaperAuthor,
        [PaperAuthor._meta.get_field(name) for name in ("paper", "author", "position")],
        [
            [p.paper.pk, author_id, position]
            for p in written
            if p.paper.pk in stale_authors_set
            for position, author_id in enumerate(p.author_ids)
        ],
    )
    _insert_rows(
        PaperCategory,
        [PaperCategory._meta.get_field(name) for name in ("paper", "category")],
        [
            [p.paper.pk, category_id]
            for p in written
            if p.paper.pk in stale_categories_set
            for category_id in sorted(p.category_ids)
        ],
    )
    now = timezone.now()
    CodeLink.objects.bulk_create(
        [
            CodeLink(
                paper_id=p.paper.pk,
                url=url,
                kind=CodeLink.Kind.OFFICIAL,
                source=source,
                created_at=now,
            )
            for p in written
            for url, source in p.code_urls.items()
        ],
        ignore_conflicts=True,
    )
