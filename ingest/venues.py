"""Store the papers sources other than arXiv give, matched to the catalog's own.

A record (ingest.records.VenueRecord) is the paper stored under its source key,
else the paper of its DOI, else the paper of the same title (title_key) that
was not merged into another; a paper turned down in review is left alone.

- Matched to a paper with an arXiv id (the paper was on arXiv first): arXiv
  keeps its text, and the paper gains the record's source, DOI and venue where
  it has none.
- Matched to a paper without one (a listing, a paper of another source or
  entered by hand): the record's facts replace what it gives.
- Else a new paper without an arXiv id. When arXiv later brings a paper of the
  same title, ingest.upsert matches it as it matches any listing without an id,
  and the paper keeps its source, DOI and venue.

Such records come a few at a time (a curator's request, the hand-entry form),
so each is written with the ORM rather than upsert's COPY statements.
"""

from collections.abc import Sequence

from django.db import transaction
from django.db.models import Q
from django.db.models.functions import Upper

from catalog.changes import catalog_changed, papers_changed
from catalog.models import CodeLink, Paper, Tag, title_key
from catalog.services import set_authors
from ingest.records import VenueRecord
from ingest.upsert import Outcome, StoredPaper, UpsertResult, add_tags

# What a record replaces on a paper without an arXiv id, where it gives a value.
_REPLACED = ("title", "abstract", "journal_ref", "doi", "source_url", "published_at")


def record_key(record: VenueRecord) -> str:
    """What the record's outcome is filed under: its source key, or for a paper
    entered by hand without a DOI, its title."""
    return record.source_key or f"title:{title_key(record.title)}"


def upsert_venue_records(
    records: Sequence[VenueRecord], *, tags: Sequence[Tag] = (), for_review: bool = False
) -> UpsertResult:
    """Create or complete the papers for records; give every paper the tags."""
    result = UpsertResult()
    latest = {record_key(record): record for record in records}
    if not latest:
        return result
    with transaction.atomic():
        catalog_changed()
        tagged_ids: list[int] = []
        for key, record in latest.items():
            stored = _store(record, for_review=for_review)
            result.stored[key] = stored
            if stored.outcome == Outcome.CREATED:
                result.created += 1
            elif stored.outcome == Outcome.UPDATED:
                result.updated += 1
            else:
                result.unchanged += 1
            if stored.outcome in (Outcome.CREATED, Outcome.UPDATED):
                result.paper_ids.append(stored.paper_id)
            if stored.outcome != Outcome.REJECTED:
                tagged_ids.append(stored.paper_id)
        if tags and tagged_ids:
            add_tags(tagged_ids, tags, result)
            papers_changed(
                stored.paper_id
                for stored in result.stored.values()
                if stored.outcome == Outcome.UNCHANGED and stored.tags_added
            )
    return result


def _matching(record: VenueRecord) -> Paper | None:
    """The stored paper the record is: by source key, DOI, then title."""
    wanted = Q(title_key=title_key(record.title), merged_into__isnull=True)
    if record.source_key:
        wanted |= Q(source_key=record.source_key)
    if record.doi:
        # As the DOI index (paper_doi_upper) reads it.
        wanted |= Q(doi_key=record.doi.upper(), merged_into__isnull=True)
    # Ordered by id so that concurrent requests lock in the same order.
    found = list(
        Paper.objects.select_for_update().alias(doi_key=Upper("doi")).filter(wanted).order_by("pk")
    )

    def rank(paper: Paper) -> tuple[int, int]:
        if record.source_key and paper.source_key == record.source_key:
            return (0, paper.pk)
        if record.doi and paper.doi.lower() == record.doi.lower():
            return (1, paper.pk)
        # A paper on arXiv is the one its other listings merge into.
        return (2 if paper.arxiv_id else 3, paper.pk)

    return min(found, key=rank, default=None)


def _store(record: VenueRecord, *, for_review: bool) -> StoredPaper:
    paper = _matching(record)
    if paper is None:
        return StoredPaper(_create(record, for_review=for_review).pk, Outcome.CREATED)
    if paper.review == Paper.Review.REJECTED:
        return StoredPaper(paper.pk, Outcome.REJECTED)
    found_by_key = bool(record.source_key) and paper.source_key == record.source_key
    changes: dict[str, object] = {}
    if not paper.source_key and record.source_key:
        changes["source_key"] = record.source_key
    if paper.arxiv_id:
        # arXiv's text stays; the published version's facts join it.
        for field_name, offered in (
            ("doi", record.doi),
            ("journal_ref", record.venue),
            ("source_url", record.source_url),
        ):
            if offered and not getattr(paper, field_name):
                changes[field_name] = offered
    else:
        given = _values(record)
        changes |= {
            name: given[name]
            for name in _REPLACED
            if given[name] and getattr(paper, name) != given[name]
        }
        if record.published_at and paper.published_precision != record.published_precision:
            changes["published_precision"] = record.published_precision
    authors_differ = (
        not paper.arxiv_id and record.authors and paper.author_list != list(record.authors)
    )
    if changes:
        for name, value in changes.items():
            setattr(paper, name, value)
        paper.save(update_fields=[*changes, *(("title_key",) if "title" in changes else ())])
    if authors_differ:
        _set_authors(paper, record)
    outcome = Outcome.UPDATED if changes or authors_differ else Outcome.UNCHANGED
    return StoredPaper(
        paper.pk,
        outcome,
        paper.version,
        matched_listing=not found_by_key and not paper.arxiv_id,
        matched_arxiv=bool(paper.arxiv_id),
    )


def _values(record: VenueRecord) -> dict[str, object]:
    return {
        "title": record.title,
        "abstract": record.abstract,
        "journal_ref": record.venue,
        "doi": record.doi,
        "source_url": record.source_url,
        "published_at": record.published_at,
    }


def _create(record: VenueRecord, *, for_review: bool) -> Paper:
    paper = Paper(
        source_key=record.source_key or None,
        published_precision=record.published_precision,
        review=Paper.Review.PENDING if for_review else Paper.Review.PUBLISHED,
        **_values(record),
    )
    paper.save()
    _set_authors(paper, record)
    CodeLink.objects.bulk_create(
        CodeLink(paper=paper, url=url, source=source, kind=kind)
        for url, source, kind in record.code_urls
    )
    return paper


def _set_authors(paper: Paper, record: VenueRecord) -> None:
    set_authors(paper, record.authors)
    # The parts stay only while they name the authors as listed (one each).
    if record.author_parts and len(paper.author_list) == len(record.author_parts):
        paper.author_parts = [
            [parts.family, parts.given, parts.suffix] if parts else []
            for parts in record.author_parts
        ]
        Paper.objects.filter(pk=paper.pk).update(author_parts=paper.author_parts)
    elif paper.author_parts:
        paper.author_parts = []
        Paper.objects.filter(pk=paper.pk).update(author_parts=[])
