"""What every API answer shares: problem details for errors (RFC 9457) and the
headers of a reader's own answers."""

from http import HTTPStatus
from typing import Any

from django.http import HttpResponse

PROBLEM_CONTENT_TYPE = "application/problem+json"


def problem(status: int, detail: str, **extra: Any) -> dict[str, Any]:
    """An error's body: the status, its phrase as the title, what was wrong in
    words and any members of its own (`errors` by parameter, `retry_after`)."""
    try:
        title = HTTPStatus(status).phrase
    except ValueError:
        title = "Error"
    return {"type": "about:blank", "title": title, "status": status, "detail": detail, **extra}


class Refused(Exception):
    """A request the API turns down, answered as problem details with its status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def keep_private(response: HttpResponse) -> None:
    """A reader's own answer: kept by their client (which may revalidate it), never
    by a shared cache."""
    response["Cache-Control"] = "private, no-cache"
