"""Command-line argument types shared by the ingest commands."""

import datetime

from django.core.management.base import CommandError


def iso_date(value: str) -> datetime.date:
    try:
        return datetime.date.fromisoformat(value)
    except ValueError as err:
        raise CommandError(f"{value!r} is not a date like 2024-05-31") from err
