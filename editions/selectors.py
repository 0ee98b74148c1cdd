"""Reads of the daily editions: a day's papers in the edition's order, the days
next to it, a month's counts and the latest day."""

import datetime
from dataclasses import dataclass

from django.db.models import (
    BooleanField,
    Count,
    F,
    FilteredRelation,
    Q,
    QuerySet,
    TextField,
    Value,
)
from django.db.models.functions import Coalesce, TruncDate

from catalog.models import NEWEST_FIRST, Paper, Tag
from catalog.selectors import for_cards, with_list_related
from editions.days import month_bounds
from editions.models import Edition, day_bounds

DAY_FIELD = "announced_or_added_at"


def day_papers(papers: QuerySet[Paper], day: datetime.date) -> QuerySet[Paper]:
    """These papers of the day (announced that day, or added that day when no
    listing named them), by the index on that date."""
    start, end = day_bounds(day)
    return papers.filter(**{f"{DAY_FIELD}__gte": start, f"{DAY_FIELD}__lt": end})


def visible_papers(tag: Tag | None = None) -> QuerySet[Paper]:
    papers = Paper.objects.visible()
    return papers.filter(tags=tag) if tag is not None else papers


def published_edition(day: datetime.date) -> Edition | None:
    return Edition.objects.filter(date=day, state=Edition.State.PUBLISHED).first()


def in_edition_order(papers: QuerySet[Paper], edition: Edition | None) -> QuerySet[Paper]:
    """A published edition's order (pinned entries, then its order, then the
    rest newest first) with each paper's note as `edition_note`; before it is
    published, or without one, newest first with no notes. The entry's fields
    are columns of the papers' own query."""
    if edition is None or not edition.is_published:
        return papers.annotate(edition_note=Value("", TextField())).order_by(*NEWEST_FIRST)
    # One LEFT JOIN on the entries' unique (edition, paper) index.
    entry = FilteredRelation("edition_entries", condition=Q(edition_entries__edition=edition))
    return papers.annotate(
        entry=entry,
        edition_pinned=Coalesce(F("entry__pinned"), Value(False), output_field=BooleanField()),
        edition_position=F("entry__position"),
        edition_note=Coalesce(F("entry__note"), Value(""), output_field=TextField()),
    ).order_by(
        F("edition_pinned").desc(), F("edition_position").asc(nulls_last=True), *NEWEST_FIRST
    )


def edition_papers(
    day: datetime.date, edition: Edition | None, tag: Tag | None = None
) -> QuerySet[Paper]:
    """The papers an edition (of the whole catalog, or of one tag) shows, in its order."""
    return in_edition_order(day_papers(visible_papers(tag), day), edition)


def month_counts(day: datetime.date, tag: Tag | None = None) -> dict[datetime.date, int]:
    """How many papers each day of day's month has, in one query."""
    first, following = month_bounds(day)
    start, end = day_bounds(first)[0], day_bounds(following)[0]
    rows = (
        visible_papers(tag)
        .filter(**{f"{DAY_FIELD}__gte": start, f"{DAY_FIELD}__lt": end})
        .annotate(day=TruncDate(DAY_FIELD, tzinfo=datetime.UTC))
        .values("day")
        .annotate(papers=Count("pk"))
        .order_by("day")
    )
    return {row["day"]: row["papers"] for row in rows}


def _day(moment: datetime.datetime | None) -> datetime.date | None:
    return moment.astimezone(datetime.UTC).date() if moment is not None else None


def previous_day(day: datetime.date, tag: Tag | None = None) -> datetime.date | None:
    """The nearest earlier day with papers."""
    start, _end = day_bounds(day)
    before = visible_papers(tag).filter(**{f"{DAY_FIELD}__lt": start})
    return _day(before.order_by(F(DAY_FIELD).desc()).values_list(DAY_FIELD, flat=True).first())


def next_day(day: datetime.date, tag: Tag | None = None) -> datetime.date | None:
    """The nearest later day with papers."""
    _start, end = day_bounds(day)
    after = visible_papers(tag).filter(**{f"{DAY_FIELD}__gte": end})
    return _day(after.order_by(F(DAY_FIELD).asc()).values_list(DAY_FIELD, flat=True).first())


def latest_day(tag: Tag | None = None) -> datetime.date | None:
    """The latest day that has papers or (for the whole catalog) a published edition."""
    newest = visible_papers(tag).order_by(F(DAY_FIELD).desc())
    days = [_day(newest.values_list(DAY_FIELD, flat=True).first())]
    if tag is None:
        published = Edition.objects.filter(state=Edition.State.PUBLISHED).order_by("-date")
        days.append(published.values_list("date", flat=True).first())
    known = [day for day in days if day is not None]
    return max(known) if known else None


@dataclass(frozen=True)
class CalendarDay:
    day: datetime.date
    papers: int


def calendar_weeks(
    day: datetime.date, counts: dict[datetime.date, int]
) -> list[list[CalendarDay | None]]:
    """Day's month as weeks from Monday, None outside the month."""
    first, following = month_bounds(day)
    weeks: list[list[CalendarDay | None]] = [[None] * first.weekday()]
    current = first
    while current < following:
        if len(weeks[-1]) == 7:
            weeks.append([])
        weeks[-1].append(CalendarDay(current, counts.get(current, 0)))
        current += datetime.timedelta(days=1)
    weeks[-1].extend([None] * (7 - len(weeks[-1])))
    return weeks


def for_edition_cards(papers: QuerySet[Paper]) -> QuerySet[Paper]:
    """What the cards show, as the catalog's lists read it."""
    return for_cards(with_list_related(papers), searched="")
