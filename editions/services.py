"""Writes of the daily editions: drafting an edition's entries from its day's
papers, and publishing it (recorded in the curation log)."""

import datetime

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from catalog.changes import catalog_changed
from catalog.curation import Action, Actor, record
from catalog.models import NEWEST_FIRST, Paper
from editions.models import Edition, EditionEntry
from editions.selectors import day_papers


@transaction.atomic
def draft_entries(*, edition: Edition) -> int:
    """Add an entry for each of the day's visible papers the edition does not
    hold yet, after its present ones, newest first. Returns how many were added."""
    held = EditionEntry.objects.filter(edition=edition)
    last = held.order_by(F("position").desc()).values_list("position", flat=True).first()
    ids = (
        day_papers(Paper.objects.visible(), edition.date)
        .exclude(pk__in=held.values("paper_id"))
        .order_by(*NEWEST_FIRST)
        .values_list("pk", flat=True)
    )
    start = 0 if last is None else last + 1
    created = EditionEntry.objects.bulk_create(
        EditionEntry(edition=edition, paper_id=pk, position=start + n) for n, pk in enumerate(ids)
    )
    if created:
        catalog_changed()  # bulk inserts send no model signals
    return len(created)


@transaction.atomic
def create_edition(*, date: datetime.date, note: str = "") -> Edition:
    """A draft edition of the day, with an entry for each of the day's papers."""
    edition = Edition.objects.create(date=date, note=note)
    draft_entries(edition=edition)
    return edition


@transaction.atomic
def publish(*, edition: Edition, by: Actor) -> None:
    """Publish the edition; each of its papers' curation history says so."""
    edition.state = Edition.State.PUBLISHED
    edition.published_at = timezone.now()
    edition.published_by = by if not isinstance(by, str) else None
    edition.save(update_fields=["state", "published_at", "published_by", "updated_at"])
    paper_ids = EditionEntry.objects.filter(edition=edition).values_list("paper_id", flat=True)
    record(paper_ids, Action.EDITION_PUBLISHED, by=by, detail=f"Daily edition {edition.date}")


@transaction.atomic
def unpublish(*, edition: Edition, by: Actor) -> None:
    """Back to a draft: the day's page shows its papers newest first, without notes."""
    edition.state = Edition.State.DRAFT
    edition.save(update_fields=["state", "updated_at"])
    paper_ids = EditionEntry.objects.filter(edition=edition).values_list("paper_id", flat=True)
    record(paper_ids, Action.EDITION_UNPUBLISHED, by=by, detail=f"Daily edition {edition.date}")
