"""The daily editions' pages: /daily/, /daily/YYYY-MM-DD/ and a tag's edition."""

import datetime
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.dates import WEEKDAYS_ABBR
from django.utils.translation import gettext as _

from catalog.models import Tag
from catalog.page_cache import cached_page
from catalog.views import paginate
from core.http import safe_methods
from core.limits import limit_pages
from editions import selectors
from editions.days import month_bounds, parse_day


def no_such_day(request: HttpRequest, value: str) -> HttpResponse:
    message = _("%(value)s is not a day of the calendar: days are written YYYY-MM-DD.") % {
        "value": value
    }
    return render(request, "editions/not_found.html", {"message": message}, status=404)


@safe_methods
@limit_pages
def latest(request: HttpRequest) -> HttpResponse:
    day = selectors.latest_day() or datetime.datetime.now(datetime.UTC).date()
    return redirect("editions:day", day)


@safe_methods
@limit_pages
def tag_latest(request: HttpRequest, slug: str) -> HttpResponse:
    tag = get_object_or_404(Tag, slug=slug)
    day = selectors.latest_day(tag) or datetime.datetime.now(datetime.UTC).date()
    return redirect("editions:tag_day", tag.slug, day)


@safe_methods
@limit_pages
@cached_page(single=["page"])
def day(request: HttpRequest, day: str) -> HttpResponse:
    parsed = parse_day(day)
    if parsed is None:
        return no_such_day(request, day)
    return render_edition(request, parsed, tag=None)


@safe_methods
@limit_pages
@cached_page(single=["page"])
def tag_day(request: HttpRequest, slug: str, day: str) -> HttpResponse:
    parsed = parse_day(day)
    if parsed is None:
        return no_such_day(request, day)
    tag = get_object_or_404(Tag, slug=slug)
    return render_edition(request, parsed, tag=tag)


def render_edition(request: HttpRequest, day: datetime.date, *, tag: Tag | None) -> HttpResponse:
    edition = selectors.published_edition(day)
    counts = selectors.month_counts(day, tag)
    papers = selectors.for_edition_cards(selectors.edition_papers(day, edition, tag))
    page, page_note = paginate(papers, request.GET.get("page"), count=counts.get(day, 0))
    previous_day = selectors.previous_day(day, tag)
    next_day = selectors.next_day(day, tag)
    first, following = month_bounds(day)
    context: dict[str, Any] = {
        "day": day,
        "tag": tag,
        "edition": edition,
        "page": page,
        "page_note": page_note,
        "previous_day": previous_day,
        "next_day": next_day,
        # The calendar's other months, opened at their first day, where papers lie that way.
        "previous_month": month_bounds(first - datetime.timedelta(days=1))[0]
        if previous_day is not None and first > datetime.date.min
        else None,
        "next_month": following if next_day is not None else None,
        "weeks": selectors.calendar_weeks(day, counts),
        "weekdays": [WEEKDAYS_ABBR[weekday] for weekday in range(7)],
        "list_thumbnails": settings.PREVIEW_LIST_THUMBNAILS,
    }
    return render(request, "editions/day.html", context)
