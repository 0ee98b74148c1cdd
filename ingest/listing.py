"""Reading arXiv's listing feeds: which papers an announcement made public.

arXiv publishes each announcement per category as RSS and Atom
(rss.arxiv.org/rss/cs.CL+cs.LG, /atom/...). Every item names a paper with its
version and how it was announced (arxiv:announce_type): new, cross (a new
paper listed from another primary category), replace or replace-cross (a new
version). The feed says nothing this reader keeps beyond that: full metadata
comes from the API by id (ingest.arxiv_api.read_ids), and ingest.runs puts
the two together.

A feed that cannot be parsed (cut off, not XML) is retried through
ingest.http; whether it is stale or empty only the announcement calendar can
tell, so that is left to the run.
"""

import datetime
import email.utils
from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings
from lxml import etree

from catalog import arxiv_ids
from ingest.http import Retryable, SourceHttp
from ingest.records import Skipped, SourceUnreadable

ARXIV = "{http://arxiv.org/schemas/atom}"
ATOM = "{http://www.w3.org/2005/Atom}"
# Strongest first: a paper listed twice in a combined feed keeps the first of these.
KINDS = ("new", "cross", "replace", "replace-cross")
NEW_KINDS = ("new", "cross")
# arXiv cuts a feed at this many items; a feed that long may be missing some.
MOST_ITEMS = 2000
_parser = etree.XMLParser(resolve_entities=False, no_network=True, recover=False)


@dataclass(frozen=True)
class Announced:
    """One paper as a listing feed announces it."""

    arxiv_id: str  # without version
    version: int | None
    kind: str  # one of KINDS
    listing_date: datetime.date

    @property
    def is_new(self) -> bool:
        return self.kind in NEW_KINDS


@dataclass(frozen=True)
class Listing:
    # The date the feed is listed under (RSS channel pubDate, else its newest item's).
    listing_date: datetime.date | None
    announced: tuple[Announced, ...]
    skipped: tuple[Skipped, ...] = ()
    items: int = 0

    @property
    def may_be_cut(self) -> bool:
        return self.items >= MOST_ITEMS


def listing_url(categories: Sequence[str]) -> str:
    return settings.ARXIV_LISTING_URL.format(categories="+".join(categories))


def read_listing(
    categories: list[str] | tuple[str, ...], *, http: SourceHttp | None = None
) -> Listing:
    """The current listing of these categories, in one request.

    Raises SourceUnreadable when the feed cannot be had or read after retrying.
    """
    http = http or SourceHttp.from_settings()
    url = listing_url(categories)

    def attempt() -> Listing:
        response = http.get(url)
        if response.status != 200:
            raise SourceUnreadable(f"HTTP {response.status} from {response.url}")
        return parse_listing(response.content)

    return http.retrying(attempt, what=url)


def parse_listing(content: bytes) -> Listing:
    """A listing feed, RSS 2.0 or Atom, as arXiv writes them; Retryable if not whole."""
    try:
        root = etree.fromstring(content, parser=_parser)
    except etree.XMLSyntaxError as err:
        raise Retryable(f"malformed listing feed: {err}") from err
    if root.tag == "rss":
        channel = root.find("channel")
        if channel is None:
            raise Retryable("RSS feed without a channel")
        items = channel.findall("item")
        read = [_rss_item(item) for item in items]
        feed_date = _rss_date(channel.findtext("pubDate"))
    elif root.tag == f"{ATOM}feed":
        items = root.findall(f"{ATOM}entry")
        read = [_atom_entry(entry) for entry in items]
        # An Atom feed's own date is when it was built, not the listing's.
        feed_date = None
    else:
        raise Retryable(f"not a listing feed: <{root.tag}>")
    announced: dict[str, Announced] = {}
    skipped = []
    for entry in read:
        if isinstance(entry, Skipped):
            skipped.append(entry)
            continue
        held = announced.get(entry.arxiv_id)
        if held is None or _outranks(entry, held):
            announced[entry.arxiv_id] = entry
    dates = [a.listing_date for a in announced.values()]
    return Listing(
        listing_date=feed_date or (max(dates) if dates else None),
        announced=tuple(announced.values()),
        skipped=tuple(skipped),
        items=len(items),
    )


def _outranks(entry: Announced, held: Announced) -> bool:
    if KINDS.index(entry.kind) != KINDS.index(held.kind):
        return KINDS.index(entry.kind) < KINDS.index(held.kind)
    return (entry.version or 0) > (held.version or 0)


def _rss_item(item: etree._Element) -> Announced | Skipped:
    return _announced(
        guid=item.findtext("guid") or "",
        link=item.findtext("link") or "",
        kind=item.findtext(f"{ARXIV}announce_type"),
        description=item.findtext("description") or "",
        listed=_rss_date(item.findtext("pubDate")),
    )


def _atom_entry(entry: etree._Element) -> Announced | Skipped:
    link = entry.find(f"{ATOM}link[@rel='alternate']")
    if link is None:
        link = entry.find(f"{ATOM}link")
    return _announced(
        guid=entry.findtext(f"{ATOM}id") or "",
        link=link.get("href", "") if link is not None else "",
        kind=entry.findtext(f"{ARXIV}announce_type"),
        description=entry.findtext(f"{ATOM}summary") or "",
        listed=_iso_date(entry.findtext(f"{ATOM}published")),
    )


def _announced(
    *, guid: str, link: str, kind: str | None, description: str, listed: datetime.date | None
) -> Announced | Skipped:
    where = (guid or link).strip()
    # guid "oai:arXiv.org:2506.01234v2" carries the version; the link does not.
    parsed = arxiv_ids.split_version(guid.strip().removeprefix("oai:arXiv.org:"))
    if parsed is None:
        parsed = arxiv_ids.split_version(link.strip().rsplit("/abs/", 1)[-1])
    if parsed is None:
        return Skipped(where, "names no arXiv paper")
    kind = (kind or _kind_in(description)).strip().lower()
    if kind not in KINDS:
        return Skipped(where, f"unknown announce type {kind!r}" if kind else "no announce type")
    if listed is None:
        return Skipped(where, "no announcement date")
    return Announced(arxiv_id=parsed[0], version=parsed[1], kind=kind, listing_date=listed)


def _kind_in(description: str) -> str:
    """The type arXiv also writes into the description: "arXiv:2506.01234v1 Announce Type: new"."""
    _, found, rest = description.partition("Announce Type:")
    return rest.split()[0] if found and rest.split() else ""


def _rss_date(value: str | None) -> datetime.date | None:
    """The listing date of an RFC 822 date, in the zone it is written in."""
    if not value or not value.strip():
        return None
    try:
        return email.utils.parsedate_to_datetime(value.strip()).date()
    except (TypeError, ValueError):
        return None


def _iso_date(value: str | None) -> datetime.date | None:
    if not value or not value.strip():
        return None
    try:
        return datetime.datetime.fromisoformat(value.strip().replace("Z", "+00:00")).date()
    except ValueError:
        return None
