"""The paper references in a text a curator pastes or uploads to add papers by link.

Community lists come in many shapes: ids and links one a line, Markdown lists
of links, HTML pages (a Hugging Face collection links each paper as
huggingface.co/papers/<id>), and the exports of reference managers (Zotero's
BibTeX, RIS and CSL-JSON). read_references() tells them apart by their content
and gives each reference the arXiv id it names, or else the paper's key in
another source (ingest.other_ids): an OpenReview forum, an ACL Anthology id, or
a DOI that is not arXiv's own (10.48550/arXiv.<id>), read from Crossref.
"""

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urljoin

import rispy
from bibtexparser.entrypoint import parse_string
from bibtexparser.model import DuplicateBlockKeyBlock, Entry, ImplicitComment

from catalog import arxiv_ids
from ingest.other_ids import find_source_key

BIBTEX_ENTRY = re.compile(r"^\s*@[A-Za-z]+\s*[{(]", re.M)
RIS_TAG = re.compile(r"^TY  - ", re.M)
HTML_LINK = re.compile(r"<a\s[^>]*\bhref\s*=", re.I)
# A Markdown heading names a list's part, not a paper.
MARKDOWN_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
# [title](url "optional title"), and images' ![alt](url), which name nothing.
MARKDOWN_LINK = re.compile(
    r"(?P<image>!?)\[(?P<title>(?:[^\[\]]|\[[^\]]*\])*)\]"
    r"\(\s*<?(?P<url>[^)\s>]+)>?(?:\s+[\"'(][^)]*)?\)"
)
# A collection's address names no paper itself: its page, or its API's answer, does.
HF_COLLECTION = re.compile(r"huggingface\.co/collections/", re.I)
COLLECTION_ADDRESS = (
    "a Hugging Face collection's address: paste or upload its page's HTML, or what "
    "huggingface.co/api/collections/<its slug> answers"
)
TOKEN_SEPARATORS = re.compile(r"[\s,;]+")
# Relative links in a page without a base are read for the id in their path.
_NO_BASE = "https://page.invalid/"
# Fields of an entry that speak of other papers rather than name this one.
_NOT_NAMING = {"abstract", "abstractnote", "annote", "keywords", "file"}


@dataclass(frozen=True)
class Reference:
    """One reference found: what to show for it, and the arXiv id it names, or
    else its key in another source (ingest.other_ids), or why it could not be read."""

    text: str
    arxiv_id: str | None
    source_key: str = ""
    problem: str = ""


def read_references(text: str) -> list[Reference]:
    """The references in text, in their order, whatever of the known formats it is in."""
    stripped = text.strip()
    if stripped[:1] in ("[", "{"):
        try:
            data = json.loads(stripped)
        except ValueError:
            data = None  # a Markdown link starts with "[" too
        # "[2505.15034]" is JSON too, but no CSL-JSON item is in it.
        if isinstance(data, dict) or (
            isinstance(data, list) and any(isinstance(item, dict) for item in data)
        ):
            return list(_from_json(data))
    if RIS_TAG.search(text):
        return _from_ris(text)
    if BIBTEX_ENTRY.search(text):
        return list(_from_bibtex(text))
    if HTML_LINK.search(text):
        return _from_html(text)
    return [reference for line in text.splitlines() for reference in _from_line(line)]


def _reference(text: str, values: Iterable[str]) -> Reference:
    """The reference shown as text, naming the first arXiv id found in the values
    (each an identifier, a link or a phrase such as "arXiv preprint arXiv:2505.15034"),
    else the first paper of another source they name (a DOI, an OpenReview or
    ACL Anthology link)."""
    values = [value for value in values if value]
    for value in values:
        found = {item.arxiv_id for item in arxiv_ids.parse_pasted(value) if item.arxiv_id}
        if len(found) == 1:
            return Reference(text, found.pop())
    for value in values:
        if key := find_source_key(value):
            return Reference(text, None, source_key=key)
    return Reference(text, None)


def _from_line(line: str) -> Iterator[Reference]:
    """A pasted line: ids and links (Markdown's among them), or a line naming none."""
    if not line.strip() or MARKDOWN_HEADING.match(line):
        return
    linked = [
        _reference(f"[{' '.join(match['title'].split())}]({match['url']})", [match["url"]])
        for match in MARKDOWN_LINK.finditer(line)
        if not match["image"]
    ]
    items = arxiv_ids.parse_pasted(MARKDOWN_LINK.sub(" ", line) if linked else line)
    named_plainly = any(item.arxiv_id for item in items)
    if named_plainly or any(reference.arxiv_id for reference in linked):
        # What else a line naming a paper links to is its code, its project
        # page or its published version, not another paper; the tokens beside
        # its ids that look meant as ids are reported, as parse_pasted keeps them.
        yield from (reference for reference in linked if reference.arxiv_id)
        if named_plainly:
            yield from (
                Reference(item.text, item.arxiv_id)
                if item.arxiv_id
                else _reference(item.text, [item.text])
                for item in items
            )
    elif elsewhere := [reference for reference in linked if reference.source_key]:
        yield from elsewhere
    elif named := dict(_source_keys(line)):
        # A line may list several DOIs or Anthology ids; each is a reference.
        yield from (
            Reference(line.strip() if len(named) == 1 else token, None, source_key=key)
            for key, token in named.items()
        )
    elif HF_COLLECTION.search(line):
        yield Reference(line.strip(), None, problem=COLLECTION_ADDRESS)
    else:
        yield Reference(line.strip(), None)


def _source_keys(line: str) -> Iterator[tuple[str, str]]:
    """Each other source's key the line's tokens name, with its token, in order."""
    for token in TOKEN_SEPARATORS.split(line):
        if key := find_source_key(token):
            yield key, token


def _from_json(data: Any) -> Iterator[Reference]:
    """CSL-JSON (a list of items, or one), or a Hugging Face collection as its API
    gives it ({"items": [{"type": "paper", "id": "2505.15034"}, ...]})."""
    if isinstance(data, dict) and isinstance(data.get("items"), list):
        for item in data["items"]:
            if isinstance(item, dict) and item.get("type") == "paper":
                paper_id = str(item.get("id", ""))
                title = str(item.get("title") or (item.get("paper") or {}).get("title") or "")
                yield _reference(f"{title} ({paper_id})" if title else paper_id, [paper_id])
        return
    for item in data if isinstance(data, list) else [data]:
        if not isinstance(item, dict):
            shown = json.dumps(item, ensure_ascii=False)
            yield Reference(shown, None, problem="not a CSL-JSON item")
            continue
        title = _text(item.get("title")) or _text(item.get("id"))
        values = [_text(item.get(key)) for key in ("DOI", "URL", "number", "archive_location")]
        values += [
            _text(value)
            for key, value in item.items()
            if key not in {"DOI", "URL", "number", "archive_location", "title", "id"}
            and key.lower() not in _NOT_NAMING
        ]
        yield _reference(title or "(an item without a title)", values)


def _from_bibtex(text: str) -> Iterator[Reference]:
    """Each BibTeX entry: its eprint (when arXiv's), DOI and URL, then any field
    naming an arXiv id (Google Scholar's journal = {arXiv preprint arXiv:...}).
    Lines between entries are read as pasted lines, so that a paste mixing
    entries with ids or links loses none of them (TeX's % comments aside)."""
    library = parse_string(text)
    blocks = sorted(
        [*library.entries, *library.failed_blocks, *library.comments],
        key=lambda block: block.start_line or 0,
    )
    for block in blocks:
        if isinstance(block, ImplicitComment):
            for line in block.comment.splitlines():
                if not line.lstrip().startswith("%"):
                    yield from _from_line(line)
            continue
        # The same key twice is still an entry.
        entry = block.ignore_error_block if isinstance(block, DuplicateBlockKeyBlock) else block
        if not isinstance(entry, Entry):
            raw = (block.raw or "").strip()
            first = raw.splitlines()[0][:120] if raw else ""
            yield Reference(first, None, problem="this BibTeX entry could not be read")
            continue
        fields = {field.key.lower(): _text(field.value) for field in entry.fields}
        title = " ".join(fields.get("title", "").replace("{", "").replace("}", "").split())
        shown = f"@{entry.entry_type}{{{entry.key}}}" + (f": {title}" if title else "")
        prefix = (fields.get("archiveprefix") or fields.get("eprinttype") or "arxiv").lower()
        values = [fields.get("eprint", "")] if prefix == "arxiv" else []
        values += [fields.get("doi", ""), fields.get("url", "")]
        values += [
            value
            for key, value in fields.items()
            if key not in {"eprint", "doi", "url", "title"} and key not in _NOT_NAMING
        ]
        yield _reference(shown, values)


def _from_ris(text: str) -> list[Reference]:
    """Each RIS record: its DOI and URLs, then any field naming an arXiv id
    (Zotero notes arXiv:<id> [cs])."""
    try:
        records = rispy.loads(text)
    except (OSError, ValueError, KeyError) as err:
        return [
            Reference(text.strip().splitlines()[0][:120], None, problem=f"unreadable RIS: {err}")
        ]
    found = []
    for record in records:
        title = _text(record.get("title") or record.get("primary_title"))
        values = [_text(record.get("doi")), *map(_text, record.get("urls") or [])]
        values += [
            _text(value)
            for key, value in record.items()
            if key not in {"doi", "urls", "title", "primary_title"} and key not in _NOT_NAMING
        ]
        found.append(_reference(title or "(a record without a title)", values))
    return found


class _Links(HTMLParser):
    """The page's links, each with its text, and the address relative links start from."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.base = ""
        self.links: list[tuple[str, str]] = []
        self._open: list[str] | None = None
        self._href = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = {key: value or "" for key, value in attrs}
        if tag == "base" and named.get("href") and not self.base:
            self.base = named["href"]
        elif tag == "link" and named.get("rel") == "canonical" and not self.base:
            self.base = named.get("href", "")
        elif tag == "a" and named.get("href"):
            self._href, self._open = named["href"], []

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            self._open.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._open is not None:
            self.links.append((self._href, " ".join("".join(self._open).split())))
            self._open = None


def _from_html(text: str) -> list[Reference]:
    """The links of an HTML page that name a paper, each once: a page's other
    links are its navigation, and a collection links each paper more than once."""
    page = _Links()
    page.feed(text)
    page.close()
    found: list[Reference] = []
    seen: set[str] = set()
    for href, label in page.links:
        address = urljoin(page.base or _NO_BASE, href)
        reference = _reference(f"{label} ({href})" if label else href, [address, label])
        key = reference.arxiv_id or reference.source_key
        if key and key not in seen:
            seen.add(key)
            found.append(reference)
    return found


def _text(value: Any) -> str:
    """A field's value as text: CSL's numbers and lists (of names, dates) joined."""
    if value is None:
        return ""
    if isinstance(value, list):
        return " ".join(_text(each) for each in value)
    if isinstance(value, dict):
        return " ".join(_text(each) for each in value.values())
    return str(value)
