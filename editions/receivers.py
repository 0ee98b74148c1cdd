"""Editions freshen cached pages through the catalog's one write path, and the
demo's digest days become published editions."""

import datetime
import re
from typing import Any

from django.db.models import Model
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from catalog.changes import catalog_changed
from catalog.models import Paper, Summary
from catalog.signals import demo_loaded
from editions import services
from editions.models import Edition, EditionEntry

DEMO_ACTOR = "load_demo command"
# The demo's papers from a digest carry the digest's day as the day they were
# added, and their summaries name it ("ChatPaperFree digest, 2025-11-05").
DIGEST_DAY = re.compile(r"digest, (\d{4}-\d{2}-\d{2})$")


def _edition_changed(sender: type[Model], instance: Model, **kwargs: Any) -> None:
    # An edition's page is a catalog page: its cached copies are made stale
    # with every other catalog page's once the change commits.
    catalog_changed()


for _model in (Edition, EditionEntry):
    for _name, _signal in (("saved", post_save), ("deleted", post_delete)):
        _signal.connect(
            _edition_changed, sender=_model, dispatch_uid=f"editions_{_model.__name__}_{_name}"
        )


@receiver(demo_loaded, dispatch_uid="editions_demo_loaded")
def demo_editions(sender: object, *, paper_ids: list[int], **kwargs: Any) -> None:
    """Each digest day of the papers just loaded becomes a published edition
    holding that day's papers (a day with an edition already is left alone)."""
    for day in sorted(digest_days(paper_ids)):
        if not Edition.objects.filter(date=day).exists():
            services.publish(edition=services.create_edition(date=day), by=DEMO_ACTOR)


def digest_days(paper_ids: list[int]) -> set[datetime.date]:
    """The days of the digests these papers came from: a summary's digest
    names its day, which is also the day the paper was added."""
    added = dict(Paper.objects.filter(pk__in=paper_ids).values_list("pk", "added_at"))
    written = Summary.objects.filter(paper_id__in=paper_ids, written_by__contains="digest, ")
    days = set()
    for paper_id, written_by in written.values_list("paper_id", "written_by"):
        match = DIGEST_DAY.search(written_by)
        if match and added[paper_id].astimezone(datetime.UTC).date().isoformat() == match[1]:
            days.add(datetime.date.fromisoformat(match[1]))
    return days
