"""Log lines that say when, how bad, from where, and for which request or task.

settings.LOGGING wires these together: every line on stderr carries its time
(UTC), level, logger and the id of the web request or Celery task it belongs
to, as text or as one JSON object a line (LOG_FORMAT=json). The web's id comes
from config.middleware.EntryMiddleware and is sent back in the X-Request-ID header, so a
report from a user, a proxy's log line and the site's own lines can be joined.
"""

import logging
import logging.config
import re
import threading
import time
import traceback
import uuid
from contextvars import ContextVar
from typing import Any

from celery._state import get_current_task
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils.log import AdminEmailHandler
from pythonjsonlogger.json import JsonFormatter as BaseJsonFormatter

REQUEST_ID_HEADER = "X-Request-ID"
# Ids a proxy may hand on: nginx's $request_id, UUIDs, trace ids. Anything else
# (too long, spaces, control characters) could forge or break log lines.
VALID_REQUEST_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@+=/-]{0,127}")
# URL arguments that are secrets (private feed tokens, unsubscribe and
# email-confirmation keys) are masked in the request log.
SECRET_URL_ARGUMENTS = ("token", "key")

request_id: ContextVar[str | None] = ContextVar("request_id", default=None)
# What tells one error apart from another: logger, message, exception type and
# where it was raised.
ErrorKey = tuple[str, str, type[BaseException] | None, tuple[str, int | None] | None]
access_logger = logging.getLogger("papershelf.access")


def configure(config: dict[str, Any]) -> None:
    """Apply settings.LOGGING (Django's LOGGING_CONFIG, and Celery's), with
    Python's warnings logged as py.warnings rather than printed bare."""
    logging.config.dictConfig(config)
    logging.captureWarnings(True)


def request_id_of(request: HttpRequest, *, from_proxy: bool) -> str:
    """The request's id: the X-Request-ID a trusted proxy sent (which makes
    or passes it on), else a new one. From anyone else it could be used to
    muddle the logs."""
    offered = request.headers.get(REQUEST_ID_HEADER, "")
    if offered and from_proxy and VALID_REQUEST_ID.fullmatch(offered):
        return offered
    return uuid.uuid4().hex


def log_request(request: HttpRequest, response: HttpResponse, *, seconds: float) -> None:
    path = request.path
    match = request.resolver_match
    if match is not None:
        for name, value in match.kwargs.items():
            if name in SECRET_URL_ARGUMENTS and isinstance(value, str) and value:
                path = path.replace(value, "***")
    duration_ms = round(seconds * 1000, 1)
    access_logger.info(
        '"%s %s" %s %.0fms',
        request.method,
        path,
        response.status_code,
        duration_ms,
        extra={
            "method": request.method,
            "path": path,
            "status": response.status_code,
            "duration_ms": duration_ms,
        },
    )


class ContextFilter(logging.Filter):
    """Mark each record with the request and the Celery task it was logged in."""

    def filter(self, record: logging.LogRecord) -> bool:
        # Django logs some responses after the middleware has returned, with
        # the request attached to the record.
        current_request = request_id.get() or getattr(
            getattr(record, "request", None), "request_id", None
        )
        if current_request is not None:
            record.request_id = current_request
        # As Celery's own TaskFormatter finds it: set while a worker (or an
        # eager call) runs the task.
        task = get_current_task()
        if task is not None and task.request.id is not None:
            record.task_id = task.request.id
            record.task_name = task.name
        return True


class TextFormatter(logging.Formatter):
    """`2026-11-01T06:00:00.123Z INFO catalog.views request=… task=- message`"""

    converter = staticmethod(time.gmtime)
    default_time_format = "%Y-%m-%dT%H:%M:%S"
    default_msec_format = "%s.%03dZ"

    def __init__(self) -> None:
        super().__init__(
            "%(asctime)s %(levelname)s %(name)s request=%(request_id)s task=%(task_id)s "
            "%(message)s",
            defaults={"request_id": "-", "task_id": "-"},
        )


class JsonFormatter(BaseJsonFormatter):
    """One JSON object a line: time, level, logger, message, request_id, task_id,
    task_name, the fields passed in `extra`, and exc_info with the traceback."""

    converter = staticmethod(TextFormatter.converter)
    default_time_format = TextFormatter.default_time_format
    default_msec_format = TextFormatter.default_msec_format

    def __init__(self) -> None:
        super().__init__(
            ["asctime", "levelname", "name", "message", "request_id", "task_id", "task_name"],
            rename_fields={"asctime": "time", "levelname": "level", "name": "logger"},
            json_ensure_ascii=False,
        )


class ThrottledAdminEmailHandler(AdminEmailHandler):
    """Django's mail to ADMINS, sent once per distinct error per ERROR_MAIL_INTERVAL.

    A fault that repeats for every request or task (the database gone, a model
    endpoint down) would otherwise send a mail each time. Errors are told apart
    by logger, message and where the exception was raised; the count is kept
    per process, so each web or worker process mails a repeated error at most
    once an interval.
    """

    def __init__(self) -> None:
        super().__init__()
        self._sent: dict[ErrorKey, float] = {}
        self._lock = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        key = error_key(record)
        now = time.monotonic()
        interval = settings.ERROR_MAIL_INTERVAL
        with self._lock:
            if now - self._sent.get(key, -interval) < interval:
                return
            if len(self._sent) > 1000:
                self._sent = {k: t for k, t in self._sent.items() if now - t < interval}
            self._sent[key] = now
        super().emit(record)

    def forget_sent(self) -> None:
        with self._lock:
            self._sent.clear()


def error_key(record: logging.LogRecord) -> ErrorKey:
    raised_at = None
    if record.exc_info and record.exc_info[2] is not None:
        frame = traceback.extract_tb(record.exc_info[2])[-1]
        raised_at = (frame.filename, frame.lineno)
    exc_type = record.exc_info[0] if record.exc_info else None
    return (record.name, str(record.msg), exc_type, raised_at)
