"""Harvesting arXiv over OAI-PMH (ListRecords in the arXiv metadata format).

Each page's resumption token is saved once the page is stored, so a harvest
that stops part way resumes from there when run again with the same
arguments. Requests are paced, time out, and are retried with backoff;
arXiv's 503 with Retry-After is waited out (within a bound).
"""

import datetime
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import requests
from django.conf import settings
from lxml import etree

from ingest.arxiv_api import parse_retry_after
from ingest.models import IngestRun, OaiHarvest
from ingest.records import ArxivRecord
from ingest.snapshot import MalformedEntry, build_record, tag_stored_papers
from ingest.upsert import upsert_records

logger = logging.getLogger(__name__)

OAI = "{http://www.openarchives.org/OAI/2.0/}"
ARXIV = "{http://arxiv.org/OAI/arXiv/}"
RETRY_STATUSES = {429, 500, 502, 503, 504}
_parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True)


class HarvestError(Exception):
    """The harvest cannot go on: the server refused, or kept failing past the retries."""


class ExpiredToken(HarvestError):
    """The server no longer knows the resumption token."""


class _Retryable(Exception):
    def __init__(self, message: str, *, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


@dataclass
class Page:
    records: list[ArxivRecord] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # why each unreadable record was left out
    resumption_token: str = ""


@dataclass
class OaiClient:
    base_url: str
    user_agent: str
    timeout: float
    delay_seconds: float
    max_retries: int
    retry_base_wait: float
    retry_max_wait: float
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    _last_request_at: float | None = None

    @classmethod
    def from_settings(cls, **overrides) -> "OaiClient":
        options = {
            "base_url": settings.ARXIV_OAI_URL,
            "user_agent": settings.ARXIV_USER_AGENT,
            "timeout": settings.ARXIV_REQUEST_TIMEOUT,
            "delay_seconds": settings.ARXIV_DELAY_SECONDS,
            "max_retries": settings.ARXIV_MAX_RETRIES,
            "retry_base_wait": settings.ARXIV_RETRY_BASE_WAIT,
            "retry_max_wait": settings.ARXIV_RETRY_MAX_WAIT,
        }
        return cls(**(options | overrides))

    def list_records(self, params: dict[str, str]) -> Page:
        """One ListRecords page, retried while retrying can help."""
        for attempt in range(self.max_retries + 1):
            try:
                return parse_page(self._get({"verb": "ListRecords", **params}))
            except _Retryable as err:
                if attempt == self.max_retries:
                    raise HarvestError(f"gave up after {attempt + 1} attempts: {err}") from err
                wait = self._backoff(attempt, retry_after=err.retry_after)
                logger.warning("OAI-PMH request failed (%s); retrying in %.1f s", err, wait)
                self.sleep(wait)
        raise AssertionError("unreachable")

    def _backoff(self, attempt: int, *, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.retry_max_wait)
        wait = self.retry_base_wait * 2**attempt
        return min(wait + random.uniform(0, wait / 2), self.retry_max_wait)

    def _get(self, params: dict[str, str]) -> bytes:
        if self._last_request_at is not None:
            self.sleep(max(0.0, self._last_request_at + self.delay_seconds - self.clock()))
        try:
            response = requests.get(
                self.base_url,
                params=params,
                headers={"User-Agent": self.user_agent},
                timeout=self.timeout,
            )
        except requests.Timeout as err:
            raise _Retryable(f"timed out after {self.timeout} s") from err
        except requests.ConnectionError as err:
            raise _Retryable(f"connection failed: {err}") from err
        finally:
            self._last_request_at = self.clock()
        if response.status_code in RETRY_STATUSES:
            raise _Retryable(
                f"HTTP {response.status_code}", retry_after=parse_retry_after(response.headers)
            )
        if response.status_code != 200:
            raise HarvestError(f"HTTP {response.status_code} from {response.url}")
        return response.content


def parse_page(content: bytes) -> Page:
    try:
        root = etree.fromstring(content, parser=_parser)
    except etree.XMLSyntaxError as err:
        raise _Retryable(f"malformed XML: {err}") from err
    error = root.find(f"{OAI}error")
    if error is not None:
        code = error.get("code", "")
        if code == "noRecordsMatch":
            return Page()
        if code == "badResumptionToken":
            raise ExpiredToken(f"resumption token refused: {' '.join((error.text or '').split())}")
        raise HarvestError(f"OAI-PMH error {code}: {' '.join((error.text or '').split())}")
    listing = root.find(f"{OAI}ListRecords")
    if listing is None:
        raise _Retryable("response holds neither records nor an error")
    page = Page(resumption_token=(listing.findtext(f"{OAI}resumptionToken") or "").strip())
    for record in listing.iterfind(f"{OAI}record"):
        header = record.find(f"{OAI}header")
        if header is not None and header.get("status") == "deleted":
            continue
        metadata = record.find(f"{OAI}metadata/{ARXIV}arXiv")
        identifier = header.findtext(f"{OAI}identifier") if header is not None else None
        try:
            if metadata is None:
                raise MalformedEntry("no arXiv metadata")
            page.records.append(record_from_oai(metadata))
        except MalformedEntry as err:
            page.skipped.append(f"{identifier or 'record without identifier'}: {err}")
    return page


def record_from_oai(metadata: etree._Element) -> ArxivRecord:
    def text(name: str) -> str:
        return metadata.findtext(f"{ARXIV}{name}") or ""

    created = _day(text("created"))
    updated = _day(text("updated"))
    authors = [
        " ".join(
            part
            for part in (
                author.findtext(f"{ARXIV}forenames"),
                author.findtext(f"{ARXIV}keyname"),
                author.findtext(f"{ARXIV}suffix"),
            )
            if part
        )
        for author in metadata.iterfind(f"{ARXIV}authors/{ARXIV}author")
    ]
    return build_record(
        arxiv_id=text("id"),
        # The format names no versions; only a paper never revised has no <updated>.
        version=None if updated else 1,
        title=text("title"),
        abstract=text("abstract"),
        authors=authors,
        categories=text("categories").split(),
        comment=text("comments"),
        journal_ref=text("journal-ref"),
        doi=text("doi"),
        published_at=created,
        updated_at=updated or created,
    )


def _day(value: str) -> datetime.datetime | None:
    if not value.strip():
        return None
    try:
        day = datetime.date.fromisoformat(value.strip())
    except ValueError as err:
        raise MalformedEntry(f"unreadable date {value!r}") from err
    return datetime.datetime.combine(day, datetime.time(0), tzinfo=datetime.UTC)


def harvest(
    *,
    from_date: datetime.date,
    until_date: datetime.date | None = None,
    set_spec: str = "",
    client: OaiClient | None = None,
    on_skip: Callable[[str], None] = lambda reason: None,
) -> IngestRun:
    """Harvest the records changed in the period, resuming an unfinished harvest of it."""
    client = client or OaiClient.from_settings()
    state = (
        OaiHarvest.objects.filter(
            set_spec=set_spec, from_date=from_date, until_date=until_date, completed=False
        )
        .order_by("-started_at")
        .first()
    ) or OaiHarvest.objects.create(set_spec=set_spec, from_date=from_date, until_date=until_date)
    run = IngestRun.objects.create(kind=IngestRun.Kind.OAI, query=str(state))
    may_restart = True
    try:
        while True:
            if state.resumption_token:
                params = {"resumptionToken": state.resumption_token}
            else:
                params = {"metadataPrefix": "arXiv", "from": from_date.isoformat()}
                if until_date:
                    params["until"] = until_date.isoformat()
                if set_spec:
                    params["set"] = set_spec
            try:
                page = client.list_records(params)
            except ExpiredToken:
                # Tokens expire; what was stored stays, so start the period
                # over (unchanged papers cost no writes), once.
                if not (state.resumption_token and may_restart):
                    raise
                logger.warning("OAI-PMH resumption token expired; harvesting %s afresh", state)
                may_restart = False
                state.resumption_token = ""
                continue
            _store(run, page, on_skip=on_skip)
            state.records += len(page.records)
            state.resumption_token = page.resumption_token
            state.completed = not page.resumption_token
            state.save(update_fields=["records", "resumption_token", "completed", "updated_at"])
            if state.completed:
                break
    except BaseException as err:
        run.record_end(error=err)
        raise
    run.record_end()
    return run


def _store(run: IngestRun, page: Page, *, on_skip: Callable[[str], None]) -> None:
    for reason in page.skipped:
        on_skip(reason)
    run.fetched += len(page.records)
    run.skipped += len(page.skipped)
    if page.records:
        stored = upsert_records(page.records)
        tag_stored_papers(stored)
        run.created += stored.created
        run.updated += stored.updated
        run.unchanged += stored.unchanged
    run.save(update_fields=["fetched", "created", "updated", "unchanged", "skipped"])
