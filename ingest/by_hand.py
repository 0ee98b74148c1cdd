"""A paper a curator enters by hand, for one no source the site reads has.

The form's fields become a VenueRecord (ingest.records.build_venue_record) and
go through the one ingest pipeline like any reader's: the paper is matched by
its DOI or title to one already in the catalog (ingest.venues), gets its tags,
the tag rules, enrichment and similar papers, and its page, exports and API
item as any other. When arXiv later brings a paper of the same title, ingest
matches it to this one.
"""

import datetime
from collections.abc import Sequence
from dataclasses import dataclass

from django.db import transaction

from catalog import curation
from catalog.models import CurationEvent, Paper, Tag
from ingest.other_ids import doi_key
from ingest.pipeline import store_batch
from ingest.records import VenueRecord, build_venue_record
from ingest.upsert import Outcome, StoredPaper
from ingest.venues import record_key


@dataclass(frozen=True)
class Entered:
    """What became of a paper entered by hand."""

    paper: Paper
    stored: StoredPaper

    @property
    def created(self) -> bool:
        return self.stored.outcome == Outcome.CREATED


def paper_record(
    *,
    title: str,
    authors: Sequence[str],
    abstract: str = "",
    venue: str = "",
    doi: str = "",
    url: str = "",
    published_on: datetime.date | None = None,
    precision: str = "day",
) -> VenueRecord:
    """The record of what the form gives; MalformedEntry without a title."""
    published = (
        datetime.datetime.combine(published_on, datetime.time(), tzinfo=datetime.UTC)
        if published_on
        else None
    )
    return build_venue_record(
        source_key=doi_key(doi) if doi else "",
        title=title,
        abstract=abstract,
        authors=[name for name in authors if name.strip()],
        source_url=url or (f"https://doi.org/{doi}" if doi else ""),
        venue=venue,
        doi=doi,
        published_at=published,
        published_precision=precision,
    )


def enter_paper(
    record: VenueRecord, *, tags: Sequence[Tag] = (), note: str = "", by: curation.Actor
) -> Entered:
    """Store the record through the pipeline and record it in the paper's history."""
    with transaction.atomic():
        outcome = store_batch([record], tags=tags)
        stored = outcome.stored[record_key(record)]
        noted = f": {note.strip()}" if note.strip() else ""
        detail = f"by hand{noted}"
        if stored.outcome == Outcome.CREATED:
            curation.record([stored.paper_id], CurationEvent.Action.ADDED, by=by, detail=detail)
        elif stored.outcome != Outcome.REJECTED:
            # The entry joins the paper already here rather than adding one.
            curation.record(
                [stored.paper_id],
                CurationEvent.Action.MERGED,
                by=by,
                detail=f"entered by hand and matched to it{noted}",
            )
            if stored.tags_added:
                names = ", ".join(tag.name for tag in tags if tag.pk in stored.tags_added)
                curation.record_each(
                    {stored.paper_id: f"{names} ({detail})"}, CurationEvent.Action.TAGGED, by=by
                )
    return Entered(Paper.objects.get(pk=stored.paper_id), stored)
