"""Reading the arXiv API with the `arxiv` client, made safe to run unattended.

The client pages through results, but on its own it waits forever for a
silent server, retries at once without honouring Retry-After, ends quietly
when arXiv returns an empty first page although results exist, and drops
entries missing an id or a date without counting them. ArxivClient replaces
its request step and keeps its paging.
"""

import datetime
import email.utils
import itertools
import logging
import random
import threading
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import arxiv
import requests
from arxiv import _feed
from django.conf import settings
from django.db import connection
from lxml import etree

from catalog import arxiv_ids
from catalog.code_links import extract_code_urls
from ingest.records import ArxivRecord

logger = logging.getLogger(__name__)

ATOM_ENTRY = "{http://www.w3.org/2005/Atom}entry"
ATOM_ID = "{http://www.w3.org/2005/Atom}id"
ATOM_SUMMARY = "{http://www.w3.org/2005/Atom}summary"
RETRY_STATUSES = {429, 500, 502, 503, 504}
# Every process that talks to arXiv takes this PostgreSQL advisory lock per
# request, so all workers together keep to one connection and the delay.
REQUEST_LOCK_KEY = zlib.crc32(b"papershelf:arxiv-api")
_process_lock = threading.Lock()
_strict_parser = etree.XMLParser(resolve_entities=False, no_network=True, recover=False)


class FetchError(Exception):
    """arXiv could not be read, after retrying where that might help."""


class _Retryable(Exception):
    def __init__(self, message: str, *, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


class _UnreadableEntry(arxiv.Result):
    """An entry the library's parser dropped for lacking its id or dates."""


@dataclass(frozen=True)
class SkippedEntry:
    entry_id: str
    reason: str

    def __str__(self) -> str:
        return f"{self.entry_id or 'entry without id'}: {self.reason}"


class ArxivClient(arxiv.Client):
    def __init__(
        self,
        *,
        base_url: str,
        user_agent: str,
        timeout: float,
        delay_seconds: float,
        page_size: int,
        max_retries: int,
        retry_base_wait: float,
        retry_max_wait: float,
    ):
        super().__init__(page_size=page_size, delay_seconds=delay_seconds, num_retries=max_retries)
        self.query_url_format = f"{base_url}?{{}}"
        self.timeout = timeout
        self.retry_base_wait = retry_base_wait
        self.retry_max_wait = retry_max_wait
        self._session.headers["User-Agent"] = user_agent

    @classmethod
    def from_settings(cls, *, page_size: int | None = None) -> "ArxivClient":
        return cls(
            base_url=settings.ARXIV_API_URL,
            user_agent=settings.ARXIV_USER_AGENT,
            timeout=settings.ARXIV_REQUEST_TIMEOUT,
            delay_seconds=settings.ARXIV_DELAY_SECONDS,
            page_size=page_size or settings.ARXIV_PAGE_SIZE,
            max_retries=settings.ARXIV_MAX_RETRIES,
            retry_base_wait=settings.ARXIV_RETRY_BASE_WAIT,
            retry_max_wait=settings.ARXIV_RETRY_MAX_WAIT,
        )

    def _parse_feed(
        self, url: str, first_page: bool = True, _try_index: int = 0
    ) -> _feed.ParsedFeed:
        for attempt in itertools.count():
            try:
                return self._fetch_page(url, first_page=first_page)
            except _Retryable as err:
                if attempt >= self.num_retries:
                    raise FetchError(f"{err} (gave up after {attempt + 1} tries: {url})") from err
                wait = self._wait_before_retry(attempt, retry_after=err.retry_after)
                logger.warning("arXiv request failed (%s); retrying in %.1f s", err, wait)
                time.sleep(wait)

    def _wait_before_retry(self, attempt: int, *, retry_after: float | None) -> float:
        backoff = self.retry_base_wait * 2**attempt
        wait = max(backoff, retry_after or 0) + random.uniform(0, self.retry_base_wait)
        return min(wait, self.retry_max_wait)

    def _fetch_page(self, url: str, *, first_page: bool) -> _feed.ParsedFeed:
        logger.info("Requesting %s", url)
        # Others' turns are bounded by their own timeouts; waiting longer than a
        # few of them means something is wedged, which a retry reports in time.
        max_wait = 4 * (self.timeout + self.delay_seconds)
        with request_slot(delay_seconds=self.delay_seconds, max_wait=max_wait):
            status, headers, content = self._get(url)
        if status in RETRY_STATUSES:
            raise _Retryable(f"HTTP {status}", retry_after=parse_retry_after(headers))
        if status != 200:
            raise FetchError(f"arXiv answered HTTP {status}: {_error_message(content)}")
        return parse_page(content, first_page=first_page)

    def _get(self, url: str) -> tuple[int, requests.structures.CaseInsensitiveDict, bytes]:
        # requests' timeout bounds each read, not the whole response, so a
        # server trickling bytes is cut off by this deadline instead.
        deadline = time.monotonic() + self.timeout
        try:
            with self._session.get(url, timeout=self.timeout, stream=True) as response:
                chunks = []
                for chunk in response.iter_content(chunk_size=65536):
                    chunks.append(chunk)
                    if time.monotonic() > deadline:
                        raise _Retryable(f"response took longer than {self.timeout} s")
                return response.status_code, response.headers, b"".join(chunks)
        except requests.Timeout as err:
            raise _Retryable(f"timed out after {self.timeout} s") from err
        except (requests.ConnectionError, requests.exceptions.ChunkedEncodingError) as err:
            raise _Retryable(f"connection failed: {err}") from err


@contextmanager
def request_slot(*, delay_seconds: float, max_wait: float) -> Iterator[None]:
    """Hold the one arXiv connection, and keep it until the delay has passed."""
    with _process_lock:
        shared = connection.vendor == "postgresql"
        if shared:
            _take_request_lock(max_wait=max_wait)
        try:
            yield
        finally:
            time.sleep(delay_seconds)
            if shared:
                with connection.cursor() as cursor:
                    cursor.execute("SELECT pg_advisory_unlock(%s)", [REQUEST_LOCK_KEY])


def _take_request_lock(*, max_wait: float) -> None:
    deadline = time.monotonic() + max_wait
    with connection.cursor() as cursor:
        while True:
            cursor.execute("SELECT pg_try_advisory_lock(%s)", [REQUEST_LOCK_KEY])
            if cursor.fetchone()[0]:
                return
            if time.monotonic() > deadline:
                raise _Retryable(f"another process held the arXiv connection over {max_wait} s")
            time.sleep(0.05)


def parse_retry_after(headers: requests.structures.CaseInsensitiveDict) -> float | None:
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


def parse_page(content: bytes, *, first_page: bool) -> _feed.ParsedFeed:
    """One API response as the client's feed, or _Retryable if it is not whole."""
    try:
        root = etree.fromstring(content, parser=_strict_parser)
    except etree.XMLSyntaxError as err:
        # The library's parser recovers what it can from a cut-off response,
        # which would end the paging early without a word.
        raise _Retryable(f"malformed XML: {err}") from err
    feed = _feed.parse(content)
    kept = {result.entry_id for result in feed.results}
    # Placeholders keep dropped entries counted and the paging offsets right.
    for entry in root.iter(ATOM_ENTRY):
        entry_id = (entry.findtext(ATOM_ID) or "").strip()
        if not entry_id or entry_id not in kept:
            feed.results.append(_UnreadableEntry(entry_id=entry_id))
    if not feed.results and (not first_page or feed.header.total_results > 0):
        raise _Retryable(
            f"empty page where {feed.header.total_results} results were reported"
            if first_page
            else "empty page where more results were expected"
        )
    return feed


def _error_message(content: bytes) -> str:
    """arXiv explains a rejected query in the summary of an error entry."""
    try:
        root = etree.fromstring(content, parser=_strict_parser)
    except etree.XMLSyntaxError:
        return content[:200].decode(errors="replace")
    return " ".join((root.findtext(f"{ATOM_ENTRY}/{ATOM_SUMMARY}") or "no reason given").split())


def record_from_result(result: arxiv.Result) -> ArxivRecord | SkippedEntry:
    if isinstance(result, _UnreadableEntry):
        return SkippedEntry(result.entry_id, "missing its id or its dates")
    parsed = arxiv_ids.split_version(result.entry_id)
    if parsed is None:
        return SkippedEntry(result.entry_id, "not an arXiv paper id")
    title = " ".join(result.title.split())
    categories = tuple(dict.fromkeys(c for c in (result.primary_category, *result.categories) if c))
    authors = tuple(name for name in (" ".join(a.name.split()) for a in result.authors) if name)
    missing = [
        name
        for name, value in (("title", title), ("categories", categories), ("authors", authors))
        if not value
    ]
    if missing:
        return SkippedEntry(result.entry_id, f"missing {', '.join(missing)}")
    abstract = " ".join(result.summary.split())
    comment = " ".join((result.comment or "").split())
    code_urls: dict[str, str] = {}
    for text, where in ((abstract, "abstract"), (comment, "comment")):
        for url in extract_code_urls(text):
            code_urls.setdefault(url, where)
    arxiv_id, version = parsed
    return ArxivRecord(
        arxiv_id=arxiv_id,
        version=version,
        title=title,
        abstract=abstract,
        authors=authors,
        primary_category=categories[0],
        categories=categories,
        comment=comment,
        journal_ref=" ".join((result.journal_ref or "").split()),
        doi=(result.doi or "").strip(),
        published_at=result.published,
        updated_at=result.updated,
        code_urls=tuple(code_urls.items()),
    )


def fetch_updated(
    *,
    query: str,
    max_results: int,
    since: datetime.datetime | None = None,
    client: ArxivClient | None = None,
) -> Iterator[ArxivRecord | SkippedEntry]:
    """Entries matching query, most recently updated first, until one is older than since.

    Pages are requested as the iterator is consumed. Raises FetchError when
    arXiv cannot be read; what was yielded before stays valid.
    """
    client = client or ArxivClient.from_settings(
        page_size=min(settings.ARXIV_PAGE_SIZE, max_results)
    )
    search = arxiv.Search(
        query=query,
        max_results=max_results,
        sort_by=arxiv.SortCriterion.LastUpdatedDate,
        sort_order=arxiv.SortOrder.Descending,
    )
    for result in client.results(search):
        record = record_from_result(result)
        if isinstance(record, ArxivRecord) and since and record.updated_at < since:
            return
        yield record
