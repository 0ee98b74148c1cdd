"""arXiv's announcement calendar, and the beat schedule that follows it."""

import datetime
from zoneinfo import ZoneInfo

import pytest
from django_celery_beat.models import PeriodicTask

from ingest.announcements import (
    Announcement,
    is_announcement_evening,
    latest_announcement,
    next_announcement,
)

EASTERN = ZoneInfo("America/New_York")
UTC = datetime.UTC


def utc(*args) -> datetime.datetime:
    return datetime.datetime(*args, tzinfo=UTC)


def eastern(*args) -> datetime.datetime:
    return datetime.datetime(*args, tzinfo=EASTERN)


def test_announcements_are_sunday_to_thursday_evenings():
    week = [datetime.date(2026, 6, 7) + datetime.timedelta(days=n) for n in range(7)]  # Sun..Sat

    assert [is_announcement_evening(day) for day in week] == [
        True,  # Sunday: Monday's listing
        True,
        True,
        True,
        True,  # Thursday: Friday's listing
        False,  # Friday
        False,  # Saturday
    ]


def test_an_announcement_is_listed_under_the_next_day():
    sunday = Announcement.on_evening(datetime.date(2026, 6, 7))

    assert sunday.at == eastern(2026, 6, 7, 20, 0)
    assert sunday.listing_date == datetime.date(2026, 6, 8)
    assert Announcement.listed_on(datetime.date(2026, 6, 8)) == sunday


@pytest.mark.parametrize(
    ("now", "evening"),
    [
        # Summer (EDT, UTC-4): 20:00 Eastern is 00:00 UTC the next day.
        (utc(2026, 6, 2, 23, 59), datetime.date(2026, 6, 1)),
        (utc(2026, 6, 3, 0, 0), datetime.date(2026, 6, 2)),
        # Winter (EST, UTC-5): 20:00 Eastern is 01:00 UTC.
        (utc(2026, 1, 14, 0, 30), datetime.date(2026, 1, 12)),
        (utc(2026, 1, 14, 1, 0), datetime.date(2026, 1, 13)),
        # Friday and Saturday: still Thursday's.
        (utc(2026, 6, 6, 18, 0), datetime.date(2026, 6, 4)),
        # Sunday afternoon: still Thursday's; Sunday evening's from 20:00.
        (eastern(2026, 6, 7, 19, 59), datetime.date(2026, 6, 4)),
        (eastern(2026, 6, 7, 20, 0), datetime.date(2026, 6, 7)),
    ],
)
def test_the_latest_announcement(now, evening):
    assert latest_announcement(now) == Announcement.on_evening(evening)


def test_the_evening_clocks_spring_forward():
    # 2026-03-08 02:00 EST became 03:00 EDT: Thursday's announcement was at
    # 01:00 UTC, that Sunday's at 00:00 UTC.
    thursday = latest_announcement(utc(2026, 3, 6, 1, 0))
    sunday = latest_announcement(utc(2026, 3, 9, 0, 0))

    assert thursday.at.astimezone(UTC) == utc(2026, 3, 6, 1, 0)
    assert sunday.at.astimezone(UTC) == utc(2026, 3, 9, 0, 0)
    assert sunday.listing_date == datetime.date(2026, 3, 9)
    # An hour before, in UTC terms, it is not yet announced.
    assert latest_announcement(utc(2026, 3, 8, 23, 59)) == thursday


def test_the_evening_clocks_fall_back():
    # 2026-11-01 02:00 EDT became 01:00 EST.
    thursday = latest_announcement(utc(2026, 10, 30, 0, 0))
    sunday = latest_announcement(utc(2026, 11, 2, 1, 0))

    assert thursday.at.astimezone(UTC) == utc(2026, 10, 30, 0, 0)
    assert sunday.at.astimezone(UTC) == utc(2026, 11, 2, 1, 0)
    # At 00:30 UTC on Monday it is 19:30 on Sunday in New York: not yet.
    assert latest_announcement(utc(2026, 11, 2, 0, 30)) == thursday


def test_no_announcement_on_a_holiday():
    # Thanksgiving, Thursday 2026-11-26: no announcement that evening, so no
    # Friday listing; the next is Sunday's.
    assert not is_announcement_evening(datetime.date(2026, 11, 26))
    wednesday = Announcement.on_evening(datetime.date(2026, 11, 25))

    assert latest_announcement(eastern(2026, 11, 26, 21, 0)) == wednesday
    assert latest_announcement(eastern(2026, 11, 28, 12, 0)) == wednesday
    assert next_announcement(eastern(2026, 11, 26, 21, 0)) == Announcement.on_evening(
        datetime.date(2026, 11, 29)
    )


def test_the_year_end_holidays():
    # 2026-12-29 (Tuesday) and 2026-12-31 (Thursday) have none; the 30th has one.
    assert latest_announcement(eastern(2026, 12, 30, 9, 0)).at == eastern(2026, 12, 28, 20, 0)
    assert latest_announcement(eastern(2026, 12, 30, 20, 0)).at == eastern(2026, 12, 30, 20, 0)
    assert next_announcement(eastern(2026, 12, 30, 20, 1)).at == eastern(2027, 1, 3, 20, 0)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("moment", "checked"),
    [
        # Summer and winter evenings, at the announcement and a few minutes on.
        (eastern(2026, 6, 1, 20, 0), True),
        (eastern(2026, 6, 1, 20, 5), True),
        (eastern(2026, 1, 13, 20, 0), True),
        (eastern(2026, 1, 13, 23, 55), True),
        # After midnight, while arXiv rebuilds the feeds (Monday to Friday).
        (eastern(2026, 6, 2, 0, 10), True),
        (eastern(2026, 6, 5, 3, 55), True),
        # The days the clocks change.
        (eastern(2026, 3, 8, 20, 0), True),
        (eastern(2026, 11, 1, 20, 0), True),
        # Nothing to check: afternoons, Friday and Saturday evenings, Saturday
        # and Sunday small hours, off minutes.
        (eastern(2026, 6, 1, 19, 55), False),
        (eastern(2026, 6, 5, 20, 0), False),
        (eastern(2026, 6, 6, 21, 0), False),
        (eastern(2026, 6, 6, 1, 0), False),
        (eastern(2026, 6, 7, 1, 0), False),
        (eastern(2026, 6, 1, 20, 3), False),
        (eastern(2026, 6, 2, 4, 0), False),
    ],
)
def test_beat_checks_every_five_minutes_after_each_announcement_in_new_york_time(moment, checked):
    crontabs = [
        task.crontab
        for task in PeriodicTask.objects.filter(task="ingest.tasks.check_announcements")
    ]
    assert crontabs and all(str(c.timezone) == "America/New_York" for c in crontabs)

    def fires(crontab) -> bool:
        schedule = crontab.schedule
        local = moment.astimezone(ZoneInfo(str(crontab.timezone)))
        # celery counts weekdays from Sunday = 0
        return (
            local.minute in schedule.minute
            and local.hour in schedule.hour
            and (local.isoweekday() % 7) in schedule.day_of_week
        )

    assert any(fires(crontab) for crontab in crontabs) == checked
