import datetime

from django.http import HttpResponse
from django.utils.http import http_date


def set_last_modified(response: HttpResponse, moment: datetime.datetime | None) -> None:
    if moment is not None:
        response["Last-Modified"] = http_date(moment.timestamp())


def keep_private(response: HttpResponse) -> None:
    """A reader's own answer: kept by their client (which may revalidate it), never
    by a shared cache."""
    response["Cache-Control"] = "private, no-cache"
