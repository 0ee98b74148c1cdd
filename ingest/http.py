"""Requests to the sources papers are read from, as every reader makes them:
paced, bounded in time, retried.

Each source has its own turn (core.pacing) and delay between requests: all
readers of arXiv share the one arXiv turn, so however many workers run, arXiv
sees one connection at a time with ARXIV_DELAY_SECONDS between requests;
Crossref, OpenReview and the ACL Anthology each have a turn and a delay of
their own (CROSSREF_DELAY_SECONDS, OPENREVIEW_DELAY_SECONDS,
ACL_ANTHOLOGY_DELAY_SECONDS). A failure that retrying may cure (a timeout, a
dropped connection, HTTP 429 or 5xx, a page cut off) is retried with growing
waits, honouring Retry-After; after ARXIV_MAX_RETRIES the source counts as
unreadable. A command someone waits for at a terminal also gives up once
retrying would take longer than give_up_after seconds
(ARXIV_COMMAND_RETRY_SECONDS).
"""

import datetime
import email.utils
import logging
import random
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import requests
from django.conf import settings

from core.pacing import TurnNotTaken, turn
from ingest.records import SourceUnreadable

logger = logging.getLogger(__name__)

RETRY_STATUSES = {429, 500, 502, 503, 504}
T = TypeVar("T")


class Retryable(Exception):
    """This attempt failed in a way another attempt may not."""

    def __init__(self, message: str, *, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


@dataclass(frozen=True)
class Response:
    status: int
    headers: Mapping[str, str]
    content: bytes
    url: str


@dataclass(frozen=True)
class Service:
    """A source papers are read from, as requests to it are paced and reported."""

    name: str  # as messages name it
    turn: str  # its turn's name (core.pacing)
    delay_setting: str  # the setting of the seconds between its requests

    @property
    def delay(self) -> float:
        return float(getattr(settings, self.delay_setting))


ARXIV = Service("arXiv", "arxiv", "ARXIV_DELAY_SECONDS")
CROSSREF = Service("Crossref", "crossref", "CROSSREF_DELAY_SECONDS")
OPENREVIEW = Service("OpenReview", "openreview", "OPENREVIEW_DELAY_SECONDS")
ACL_ANTHOLOGY = Service("the ACL Anthology", "acl-anthology", "ACL_ANTHOLOGY_DELAY_SECONDS")


@dataclass
class SourceHttp:
    user_agent: str
    timeout: float
    max_retries: int
    retry_base_wait: float
    retry_max_wait: float
    session: requests.Session = field(default_factory=requests.Session)
    sleep: Callable[[float], None] = time.sleep
    # No retry waits past this many seconds after the first try; None for workers,
    # which retry for as long as max_retries and their waits allow.
    give_up_after: float | None = None
    service: Service = ARXIV

    @classmethod
    def from_settings(cls, **overrides: Any) -> "SourceHttp":
        options = {
            "user_agent": settings.ARXIV_USER_AGENT,
            "timeout": settings.ARXIV_REQUEST_TIMEOUT,
            "max_retries": settings.ARXIV_MAX_RETRIES,
            "retry_base_wait": settings.ARXIV_RETRY_BASE_WAIT,
            "retry_max_wait": settings.ARXIV_RETRY_MAX_WAIT,
        }
        return cls(**(options | overrides))

    def retrying(self, attempt: Callable[[], T], *, what: str) -> T:
        """attempt(), tried again after each Retryable until the retries (or the
        time to give up) run out."""
        started = time.monotonic()
        for number in range(self.max_retries + 1):
            try:
                return attempt()
            except Retryable as err:
                wait = self.wait_before_retry(number, retry_after=err.retry_after)
                out_of_time = (
                    self.give_up_after is not None
                    and time.monotonic() + wait - started > self.give_up_after
                )
                if number == self.max_retries or out_of_time:
                    took = time.monotonic() - started
                    raise SourceUnreadable(
                        f"{err} (gave up after {number + 1} tries in {took:.0f} s: {what})"
                    ) from err
                logger.warning(
                    "%s request failed (%s); retrying in %.1f s", self.service.name, err, wait
                )
                self.sleep(wait)
        raise AssertionError("unreachable")

    def wait_before_retry(self, attempt: int, *, retry_after: float | None) -> float:
        backoff: float = self.retry_base_wait * 2**attempt
        wait = max(backoff, retry_after or 0) + random.uniform(0, self.retry_base_wait)
        return min(wait, self.retry_max_wait)

    def get(self, url: str, *, params: Mapping[str, str] | None = None) -> Response:
        """One GET in the source's turn; Retryable for what a later attempt may cure."""
        # Others' turns are bounded by their own timeouts; waiting longer than a
        # few of them means something is wedged, which a retry reports in time.
        delay = self.service.delay
        max_wait = 4 * (self.timeout + delay)
        try:
            with turn(self.service.turn, spacing=delay, exclusive=True, max_wait=max_wait):
                response = self._get(url, params=params)
        except TurnNotTaken as err:
            raise Retryable(str(err)) from err
        if response.status in RETRY_STATUSES:
            raise Retryable(
                f"HTTP {response.status}", retry_after=parse_retry_after(response.headers)
            )
        return response

    def _get(self, url: str, *, params: Mapping[str, str] | None) -> Response:
        logger.info("Requesting %s %s", url, dict(params or {}))
        # requests' timeout bounds each read, not the whole response, so a
        # server trickling bytes is cut off by this deadline instead.
        deadline = time.monotonic() + self.timeout
        try:
            with self.session.get(
                url,
                params=params,
                headers={"User-Agent": self.user_agent},
                timeout=self.timeout,
                stream=True,
            ) as response:
                chunks = []
                for chunk in response.iter_content(chunk_size=65536):
                    chunks.append(chunk)
                    if time.monotonic() > deadline:
                        raise Retryable(f"response took longer than {self.timeout} s")
                return Response(
                    response.status_code, response.headers, b"".join(chunks), response.url
                )
        except requests.Timeout as err:
            raise Retryable(f"timed out after {self.timeout} s") from err
        except (requests.ConnectionError, requests.exceptions.ChunkedEncodingError) as err:
            raise Retryable(f"connection failed: {connection_failure(err)}") from err


# The operating system's reason inside requests' message: "[Errno 111] Connection refused".
_ERRNO_REASON = re.compile(r"\[Errno -?\d+\] ([^'\")\]]+)")


def connection_failure(err: requests.RequestException) -> str:
    """Why a connection failed, in words: requests' own message names the whole
    address asked for, a hundred ids long, which helps nobody reading it."""
    text = str(err)
    if isinstance(err, requests.exceptions.ChunkedEncodingError):
        return "the answer was cut off"
    if match := _ERRNO_REASON.search(text):
        return match.group(1).strip().lower()
    if "RemoteDisconnected" in text or "closed connection" in text:
        return "the server closed the connection"
    return "the connection broke"


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    value = headers.get("Retry-After", "").strip()
    if not value:
        return None
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - datetime.datetime.now(datetime.UTC)).total_seconds())
