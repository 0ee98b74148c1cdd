"""What the site does while a service it needs cannot be reached: the database
(a short 503 with Retry-After, never a 500) and any other (one log line a
minute a process, not one per failed call)."""

import logging
import threading
import time

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from django.template import loader

logger = logging.getLogger(__name__)
# How soon a client may try again, and how often a process says the database
# is still out of reach.
RETRY_AFTER_SECONDS = 30
LOG_EVERY_SECONDS = 60
# PostgreSQL's SQLSTATEs of a server that is going away or not there yet:
# connection exceptions (class 08), shut down, crashed, starting up.
UNREACHABLE_STATES = ("08", "57P01", "57P02", "57P03")


class OutageLog:
    """One line every LOG_EVERY_SECONDS at most, saying what failed and how
    many calls failed since the last line; the calls in between say nothing."""

    def __init__(self, *, message: str, level: int = logging.WARNING) -> None:
        self.message, self.level = message, level
        self._lock = threading.Lock()
        self._last_logged = -float("inf")
        self._failed = 0

    def failed(self, error: BaseException | None) -> None:
        cause = getattr(error, "__cause__", None) or error
        now = time.monotonic()
        with self._lock:
            self._failed += 1
            if now - self._last_logged < LOG_EVERY_SECONDS:
                return
            failed, self._failed, self._last_logged = self._failed, 0, now
        logger.log(
            self.level,
            "%s (%s: %s); %d failed since the last line",
            self.message,
            type(cause).__name__,
            str(cause).strip(),
            failed,
        )


database_outage = OutageLog(
    message="The database cannot be reached: requests answered 503", level=logging.ERROR
)


def is_database_unreachable(error: BaseException) -> bool:
    """Whether error says the database server is down or unreachable, rather
    than that a query went wrong (a timeout, a deadlock, a bug: those stay 500s)."""
    if isinstance(error, InterfaceError):  # the connection is already gone
        return True
    if not isinstance(error, OperationalError):
        return False
    # psycopg gives no SQLSTATE when it never reached the server at all.
    state = getattr(error.__cause__, "sqlstate", "")
    return state is None or (bool(state) and state.startswith(UNREACHABLE_STATES))


def database_unavailable(request: HttpRequest, error: BaseException) -> HttpResponse:
    """The short 503 page, rendered from a template that reads nothing from
    the database (the API's middleware turns it into its JSON error)."""
    database_outage.failed(error)
    response = HttpResponse(loader.render_to_string("503.html"), status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    response["Cache-Control"] = "no-store"
    # Told by database_outage, once a minute: Django would log (and mail) an
    # error for every request it answers with a 5xx.
    # The flag is Django's own (django.utils.log.log_response), missing from its stubs.
    response._has_been_logged = True  # type: ignore[attr-defined]
    return response
