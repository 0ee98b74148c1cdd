"""RSS 2.0 and Atom feeds of one day's edition, in the edition's order."""

import datetime

from django.conf import settings
from django.db.models import QuerySet
from django.http import Http404, HttpRequest
from django.shortcuts import get_object_or_404
from django.urls import reverse

from catalog.feeds import PaperFeed
from catalog.models import Paper, Tag
from catalog.rendering import render_markdown
from editions import selectors
from editions.days import parse_day

Day = tuple[datetime.date, Tag | None]


class EditionFeed(PaperFeed[Day]):
    def get_object(self, request: HttpRequest, day: str, slug: str | None = None) -> Day:
        parsed = parse_day(day)
        if parsed is None:
            raise Http404(f"{day} is not a day of the calendar")
        tag = get_object_or_404(Tag, slug=slug) if slug is not None else None
        return parsed, tag

    def papers(self, obj: Day) -> QuerySet[Paper]:
        day, tag = obj
        return selectors.edition_papers(day, selectors.published_edition(day), tag)

    def title(self, obj: Day) -> str:
        day, tag = obj
        if tag is not None:
            return f"{settings.SITE_NAME}: {tag.name}, {day.isoformat()}"
        return f"{settings.SITE_NAME}: daily edition {day.isoformat()}"

    def link(self, obj: Day) -> str:
        day, tag = obj
        if tag is not None:
            return reverse("editions:tag_day", args=[tag.slug, day])
        return reverse("editions:day", args=[day])

    def about(self, obj: Day) -> str:
        day, tag = obj
        what = f" tagged {tag.name}" if tag is not None else ""
        return f"The papers{what} of {day.isoformat()} in the {settings.SITE_NAME} catalog."

    def item_description(self, paper: Paper) -> str:
        note: str = getattr(paper, "edition_note", "")
        abstract = super().item_description(paper)
        return f"{render_markdown(note)}<p>{abstract}</p>" if note else abstract
