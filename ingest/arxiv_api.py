"""Reading the arXiv API with the `arxiv` client, made safe to run unattended.

The client pages through results, but on its own it waits forever for a
silent server, retries at once without honouring Retry-After, ends quietly
when arXiv returns an empty first page although results exist, and drops
entries missing an id or a date without counting them. ArxivClient replaces
its request step (with ingest.http's paced, retried GET) and keeps its paging.

Two reads: a query, newest updates first (the sources' schedule), and a list
of ids, a hundred a request (papers named by the listing feeds or added by link).
"""

import datetime
import itertools
from collections.abc import Iterable, Iterator
from urllib.parse import parse_qs, urlsplit

import arxiv
from arxiv import _feed
from django.conf import settings
from lxml import etree

from ingest.http import Retryable, SourceHttp
from ingest.records import (
    ArxivRecord,
    Batch,
    Entry,
    MalformedEntry,
    Skipped,
    SourceUnreadable,
    build_record,
)

ATOM_ENTRY = "{http://www.w3.org/2005/Atom}entry"
ATOM_ID = "{http://www.w3.org/2005/Atom}id"
ATOM_SUMMARY = "{http://www.w3.org/2005/Atom}summary"
# The API takes at most this many ids in one id_list request.
IDS_PER_REQUEST = 100
_strict_parser = etree.XMLParser(resolve_entities=False, no_network=True, recover=False)


class _UnreadableEntry(arxiv.Result):
    """An entry the library's parser dropped for lacking its id or dates."""


class ArxivClient(arxiv.Client):
    def __init__(self, *, base_url: str, page_size: int, http: SourceHttp):
        super().__init__(page_size=page_size, delay_seconds=0, num_retries=http.max_retries)
        self.base_url = base_url
        self.query_url_format = f"{base_url}?{{}}"
        self.http = http

    @classmethod
    def from_settings(
        cls, *, page_size: int | None = None, give_up_after: float | None = None
    ) -> "ArxivClient":
        return cls(
            base_url=settings.ARXIV_API_URL,
            page_size=page_size or settings.ARXIV_PAGE_SIZE,
            http=SourceHttp.from_settings(give_up_after=give_up_after),
        )

    def _parse_feed(
        self, url: str, first_page: bool = True, _try_index: int = 0
    ) -> _feed.ParsedFeed:
        return self.http.retrying(
            lambda: self._fetch_page(url, first_page=first_page), what=_described(url)
        )

    def _fetch_page(self, url: str, *, first_page: bool) -> _feed.ParsedFeed:
        response = self.http.get(url)
        if response.status != 200:
            raise SourceUnreadable(
                f"arXiv answered HTTP {response.status}: {_error_message(response.content)}"
            )
        return parse_page(response.content, first_page=first_page)


def _described(url: str) -> str:
    """What a request asked arXiv's API, in words: its address may hold a hundred ids."""
    asked = parse_qs(urlsplit(url).query)
    ids = [each for value in asked.get("id_list", []) for each in value.split(",") if each]
    if ids:
        return f"asking arXiv's API for {len(ids)} papers by id"
    query = " ".join(asked.get("search_query", []))
    start = " ".join(asked.get("start", [])) or "0"
    return f"asking arXiv's API for {query!r} from result {start}"


def parse_page(content: bytes, *, first_page: bool) -> _feed.ParsedFeed:
    """One API response as the client's feed, or Retryable if it is not whole."""
    try:
        root = etree.fromstring(content, parser=_strict_parser)
    except etree.XMLSyntaxError as err:
        # The library's parser recovers what it can from a cut-off response,
        # which would end the paging early without a word.
        raise Retryable(f"malformed XML: {err}") from err
    feed = _feed.parse(content)
    kept = {result.entry_id for result in feed.results}
    # Placeholders keep dropped entries counted and the paging offsets right.
    for entry in root.iter(ATOM_ENTRY):
        entry_id = (entry.findtext(ATOM_ID) or "").strip()
        if not entry_id or entry_id not in kept:
            feed.results.append(_UnreadableEntry(entry_id=entry_id))
    if not feed.results and (not first_page or feed.header.total_results > 0):
        raise Retryable(
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


def entry_from_result(result: arxiv.Result) -> Entry:
    if isinstance(result, _UnreadableEntry):
        return Skipped(result.entry_id, "missing its id or its dates")
    try:
        return build_record(
            arxiv_id=result.entry_id.rsplit("/abs/", 1)[-1],
            version=None,
            title=result.title,
            abstract=result.summary,
            authors=[author.name for author in result.authors],
            categories=[result.primary_category, *result.categories],
            comment=result.comment or "",
            journal_ref=result.journal_ref or "",
            doi=result.doi or "",
            published_at=result.published,
            updated_at=result.updated,
        )
    except MalformedEntry as err:
        reason = "not an arXiv paper id" if str(err).startswith("not an arXiv id") else str(err)
        return Skipped(result.entry_id, reason)


def read_query(
    *,
    query: str,
    max_results: int,
    since: datetime.datetime | None = None,
    client: ArxivClient | None = None,
) -> Iterator[Batch]:
    """Entries matching query, most recently updated first, a page a batch,
    until one is older than since.

    Pages are requested as the iterator is consumed. Raises SourceUnreadable
    when arXiv cannot be read; what was yielded before stays valid.
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
    entries = map(entry_from_result, client.results(search))
    while page := list(itertools.islice(entries, client.page_size)):
        older = [
            n
            for n, entry in enumerate(page)
            if since
            and isinstance(entry, ArxivRecord)
            and entry.updated_at is not None  # always there: records without dates are skipped
            and entry.updated_at < since
        ]
        yield Batch(page[: older[0]] if older else page)
        if older:
            return


def read_ids(arxiv_ids: Iterable[str], *, client: ArxivClient | None = None) -> Iterator[Batch]:
    """The records of these ids (without versions: their latest versions), a
    hundred a request. An id arXiv does not know is simply absent."""
    client = client or ArxivClient.from_settings(page_size=IDS_PER_REQUEST)
    ids = iter(dict.fromkeys(arxiv_ids))
    while chunk := list(itertools.islice(ids, IDS_PER_REQUEST)):
        search = arxiv.Search(id_list=chunk, max_results=len(chunk))
        yield Batch([entry_from_result(result) for result in client.results(search)])
