"""The records readers yield, and the one way each kind is built.

A reader of arXiv (the API, OAI-PMH, the metadata snapshot, the listing feeds)
turns what arXiv sends into keyword arguments for build_record(), which tidies
the text, cleans LaTeX out of author names and finds the code links, so that
one paper ends up the same whichever way it arrived. The readers of other
sources (Crossref, OpenReview, the ACL Anthology) and the hand-entry form build
VenueRecords the same way with build_venue_record(). Readers yield batches of
records and Skipped entries; ingest.pipeline stores them.
"""

import dataclasses
import datetime
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from pylatexenc.latex2text import LatexNodes2Text

from catalog import arxiv_ids
from catalog.models import CodeLink
from ingest.code_links import CODE_HOSTS, find_code_links

_latex = LatexNodes2Text()


@dataclass(frozen=True)
class NameParts:
    """An author's name as a source splits it: family name (with its particles,
    "van der Berg"), given names, suffix."""

    family: str
    given: str = ""
    suffix: str = ""


@dataclass(frozen=True)
class ArxivRecord:
    arxiv_id: str  # without version: "2505.15034" or "hep-ex/0406020"
    version: int | None
    title: str
    abstract: str
    authors: tuple[str, ...]
    primary_category: str
    categories: tuple[str, ...]
    comment: str = ""
    journal_ref: str = ""
    doi: str = ""
    published_at: datetime.datetime | None = None  # version 1 submitted
    updated_at: datetime.datetime | None = None  # this version submitted
    announced_at: datetime.datetime | None = None  # first announced, where the reader knows
    # Code links the record itself gives (found in abstract and comment), each
    # (url, "abstract"|"comment", "official"|"mentioned"): at most one official.
    code_urls: tuple[tuple[str, str, str], ...] = field(default=())
    # Each author's name in parts, beside `authors`, where the source gave parts
    # (None for a name it gave whole); empty when it gave none.
    author_parts: tuple[NameParts | None, ...] = field(default=())


@dataclass(frozen=True)
class VenueRecord:
    """A paper as a source other than arXiv gives it: Crossref (by DOI),
    OpenReview, the ACL Anthology, or a curator entering it by hand."""

    # "doi:<DOI>", "openreview:<note id>", "acl:<Anthology id>"; empty for a
    # paper entered by hand with no DOI, found again by its title alone.
    source_key: str
    title: str
    abstract: str
    authors: tuple[str, ...]
    source_url: str = ""  # its page at the source
    venue: str = ""  # where it was published, kept as the journal reference
    doi: str = ""
    published_at: datetime.datetime | None = None
    published_precision: str = "day"  # "day", "month" or "year", as the source dates it
    code_urls: tuple[tuple[str, str, str], ...] = field(default=())
    author_parts: tuple[NameParts | None, ...] = field(default=())


@dataclass(frozen=True)
class Skipped:
    """An entry a reader could not turn into a record: where it was, and why."""

    where: str  # an entry id, "line 12", an OAI identifier
    reason: str

    def __str__(self) -> str:
        return f"{self.where or 'entry without id'}: {self.reason}"


Entry = ArxivRecord | VenueRecord | Skipped


class MalformedEntry(ValueError):
    """What arXiv sent for one paper cannot become an ArxivRecord."""


class SourceUnreadable(Exception):
    """The source could not be read, after retrying where that might help.

    What a reader yielded before raising it is valid and stays stored.
    """


@dataclass(frozen=True)
class Batch:
    """Entries a reader read together: one API or OAI-PMH page, or lines of a file."""

    entries: Sequence[Entry]
    # Bytes of the source this batch took up, for progress over a file.
    size: int = 0
    # Where to resume after this batch once it is stored (an OAI resumption token).
    resume_from: str = ""


@dataclass(frozen=True)
class RecordFilter:
    """Which records to keep: by category or archive, and by first-version date."""

    categories: tuple[str, ...] = ()  # "cs.CL" or a whole archive, "cs"
    since: datetime.date | None = None
    until: datetime.date | None = None

    def matches(self, record: ArxivRecord) -> bool:
        if self.categories and not any(
            code in self.categories or code.split(".")[0] in self.categories
            for code in record.categories
        ):
            return False
        published = record.published_at.date() if record.published_at else None
        if self.since and (published is None or published < self.since):
            return False
        return not (self.until and (published is None or published > self.until))

    def __bool__(self) -> bool:
        return bool(self.categories or self.since or self.until)

    def describe(self) -> str:
        parts = []
        if self.categories:
            parts.append("categories " + " ".join(self.categories))
        if self.since:
            parts.append(f"from {self.since}")
        if self.until:
            parts.append(f"until {self.until}")
        return ", ".join(parts)


def build_record(
    *,
    arxiv_id: str,
    version: int | None,
    title: str,
    abstract: str,
    authors: Iterable[str | NameParts],
    categories: Sequence[str],
    comment: str = "",
    journal_ref: str = "",
    doi: str = "",
    published_at: datetime.datetime | None = None,
    updated_at: datetime.datetime | None = None,
    announced_at: datetime.datetime | None = None,
) -> ArxivRecord:
    """An ArxivRecord from raw arXiv metadata, with its text tidied and code links found.

    arxiv_id may carry a version ("2505.15034v2"), used when version is None.
    An author given in parts is listed as "given family suffix", its parts kept.
    Raises MalformedEntry when the id, title or categories are missing or wrong.
    """
    parsed = arxiv_ids.split_version(arxiv_id or "")
    if parsed is None:
        raise MalformedEntry(f"not an arXiv id: {arxiv_id!r}")
    raw_abstract, raw_comment = abstract or "", comment or ""
    title, abstract, comment = collapse(title), collapse(abstract), collapse(comment)
    categories = tuple(dict.fromkeys(code.strip() for code in categories if code and code.strip()))
    missing = [name for name, value in (("title", title), ("categories", categories)) if not value]
    if missing:
        raise MalformedEntry(f"{parsed[0]}: missing {', '.join(missing)}")
    # Links are read from the text as written: a line break may fall inside one.
    code_urls: tuple[tuple[str, str, str], ...] = ()
    if _may_hold_link(raw_abstract) or _may_hold_link(raw_comment):
        code_urls = tuple(
            (
                link.url,
                link.source,
                CodeLink.Kind.OFFICIAL if link.official else CodeLink.Kind.MENTIONED,
            )
            for link in find_code_links(abstract=raw_abstract, comment=raw_comment)
        )
    named = [named_author(author) for author in authors]
    named = [(name, parts) for name, parts in named if name]
    return ArxivRecord(
        arxiv_id=parsed[0],
        version=version if version is not None else parsed[1],
        title=title,
        abstract=abstract,
        authors=tuple(name for name, _ in named),
        primary_category=categories[0],
        categories=categories,
        comment=comment,
        journal_ref=collapse(journal_ref),
        doi=collapse(doi),
        published_at=_utc(published_at),
        updated_at=_utc(updated_at),
        announced_at=_utc(announced_at),
        code_urls=code_urls,
        author_parts=tuple(parts for _, parts in named) if any(parts for _, parts in named) else (),
    )


def build_venue_record(
    *,
    source_key: str,
    title: str,
    abstract: str = "",
    authors: Iterable[str | NameParts],
    source_url: str = "",
    venue: str = "",
    doi: str = "",
    published_at: datetime.datetime | None = None,
    published_precision: str = "day",
) -> VenueRecord:
    """A VenueRecord tidied as build_record tidies arXiv's: text collapsed, LaTeX
    out of names, code links found in the abstract. Raises MalformedEntry
    without a title."""
    raw_abstract = abstract or ""
    title = collapse(title)
    if not title:
        raise MalformedEntry(f"{source_key or 'the paper'}: missing title")
    code_urls: tuple[tuple[str, str, str], ...] = ()
    if _may_hold_link(raw_abstract):
        code_urls = tuple(
            (
                link.url,
                link.source,
                CodeLink.Kind.OFFICIAL if link.official else CodeLink.Kind.MENTIONED,
            )
            for link in find_code_links(abstract=raw_abstract, comment="")
        )
    named = [named_author(author) for author in authors]
    named = [(name, parts) for name, parts in named if name]
    return VenueRecord(
        source_key=source_key,
        title=title,
        abstract=collapse(raw_abstract),
        authors=tuple(name for name, _ in named),
        source_url=source_url.strip() if _is_web_address(source_url.strip()) else "",
        venue=collapse(venue),
        doi=collapse(doi),
        published_at=_utc(published_at),
        published_precision=published_precision,
        code_urls=code_urls,
        author_parts=tuple(parts for _, parts in named) if any(parts for _, parts in named) else (),
    )


def named_author(author: str | NameParts) -> tuple[str, NameParts | None]:
    """The author's name as listed, and its parts when the source gave them."""
    if isinstance(author, str):
        return plain_name(author), None
    parts = NameParts(
        family=plain_name(author.family),
        given=plain_name(author.given),
        suffix=plain_name(author.suffix),
    )
    name = " ".join(part for part in (parts.given, parts.family, parts.suffix) if part)
    return name, parts if parts.family else None


def announced(record: ArxivRecord, *, at: datetime.datetime) -> ArxivRecord:
    """The record with the moment arXiv first announced it, which only a listing tells."""
    return dataclasses.replace(record, announced_at=_utc(at))


def collapse(text: str | None) -> str:
    """Text with its line breaks and runs of spaces folded to single spaces."""
    return " ".join((text or "").split())


def plain_name(name: str) -> str:
    """An author name with LaTeX accents turned to Unicode: "Andr\\'e" is "André"."""
    name = collapse(name)
    if "\\" in name or "{" in name:
        name = collapse(_latex.latex_to_text(name))
    return name


def _may_hold_link(text: str) -> bool:
    """False when text surely has no link: every one found has a scheme or names a
    code host. Most abstracts have neither, and this is far cheaper than looking."""
    if "://" in text or "//" in text:
        return True
    lowered = text.lower()
    return any(host in lowered for host in (*CODE_HOSTS, ".github.io", "www."))


def _is_web_address(url: str) -> bool:
    """Whether a page link a source gave may be shown as one: only http(s), so that
    an answer naming javascript: or data: links nowhere."""
    return url.lower().startswith(("https://", "http://")) and len(url) <= 500


def _utc(moment: datetime.datetime | None) -> datetime.datetime | None:
    return moment.astimezone(datetime.UTC) if moment is not None else None
