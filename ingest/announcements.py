"""arXiv's announcement calendar: when new papers become public.

arXiv announces once a day, Sunday to Thursday at 20:00 US Eastern time
(following daylight saving), except on its holidays. Each announcement is
listed under the next day's date (Sunday evening's is "Monday"'s listing),
which is the date the listing feeds carry. The holidays are the evenings
arXiv names in its availability page ("Deferred mailings"); add each new
year's list to HOLIDAYS when arXiv publishes it.
"""

import datetime
from dataclasses import dataclass
from zoneinfo import ZoneInfo

ARXIV_TIME_ZONE = ZoneInfo("America/New_York")
ANNOUNCED_AT = datetime.time(20, 0)
# Monday is 0: Sunday to Thursday evenings.
ANNOUNCEMENT_WEEKDAYS = frozenset({6, 0, 1, 2, 3})
# Evenings (US Eastern dates) with no announcement, as arXiv lists them.
HOLIDAYS = frozenset(
    datetime.date.fromisoformat(day)
    for day in (
        "2025-01-01",
        "2025-01-20",
        "2025-06-19",
        "2025-07-06",
        "2025-09-01",
        "2025-11-27",
        "2025-12-25",
        "2025-12-30",
        "2026-01-01",
        "2026-01-19",
        "2026-06-19",
        "2026-07-03",
        "2026-09-07",
        "2026-11-26",
        "2026-12-25",
        "2026-12-29",
        "2026-12-31",
    )
)


@dataclass(frozen=True)
class Announcement:
    """One of arXiv's announcements: when it happened and the date it is listed under."""

    at: datetime.datetime  # aware, 20:00 US Eastern
    listing_date: datetime.date  # the next day: the date on the listing and its feeds

    @classmethod
    def on_evening(cls, evening: datetime.date) -> "Announcement":
        at = datetime.datetime.combine(evening, ANNOUNCED_AT, tzinfo=ARXIV_TIME_ZONE)
        return cls(at=at, listing_date=evening + datetime.timedelta(days=1))

    @classmethod
    def listed_on(cls, listing_date: datetime.date) -> "Announcement":
        """The announcement a listing dated listing_date comes from."""
        return cls.on_evening(listing_date - datetime.timedelta(days=1))


def is_announcement_evening(evening: datetime.date) -> bool:
    return evening.weekday() in ANNOUNCEMENT_WEEKDAYS and evening not in HOLIDAYS


def latest_announcement(now: datetime.datetime) -> Announcement:
    """The most recent announcement at or before now (an aware datetime)."""
    local = now.astimezone(ARXIV_TIME_ZONE)
    evening = local.date() if local.time() >= ANNOUNCED_AT else local.date() - _DAY
    while not is_announcement_evening(evening):
        evening -= _DAY
    return Announcement.on_evening(evening)


def next_announcement(now: datetime.datetime) -> Announcement:
    """The first announcement after now."""
    local = now.astimezone(ARXIV_TIME_ZONE)
    evening = local.date() if local.time() < ANNOUNCED_AT else local.date() + _DAY
    while not is_announcement_evening(evening):
        evening += _DAY
    return Announcement.on_evening(evening)


_DAY = datetime.timedelta(days=1)
