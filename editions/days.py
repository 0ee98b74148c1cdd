"""Days in addresses: /daily/2025-11-05/. The address takes any shape of a
date, so that one that is no real day (2025-13-40) reaches the view, which
answers it with a page saying so rather than the generic one."""

import datetime


class DayConverter:
    regex = r"[0-9]{4}-[0-9]{2}-[0-9]{2}"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: datetime.date | str) -> str:
        return value.isoformat() if isinstance(value, datetime.date) else value


def parse_day(value: str) -> datetime.date | None:
    """The day written YYYY-MM-DD, or None when it is no day of the calendar."""
    try:
        day = datetime.date.fromisoformat(value)
    except ValueError:
        return None
    # The last year has no next month to count a calendar up to.
    return day if day.year < datetime.MAXYEAR else None


def month_bounds(day: datetime.date) -> tuple[datetime.date, datetime.date]:
    """The first day of day's month and of the next."""
    first = day.replace(day=1)
    following = (first + datetime.timedelta(days=32)).replace(day=1)
    return first, following
