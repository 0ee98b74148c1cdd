"""A search's matched words marked in titles and abstracts, alike on both databases.

The database that found a paper marks what it matched, with its own stemming:
PostgreSQL's ts_headline over the whole text, SQLite's FTS5 highlight(), each
putting the same two private-use characters around a match. They are asked
only for the rows a page shows. Here the marked text becomes HTML: the LaTeX
reader (catalog.latex) sees the markers as letters, all text is escaped, a
mark never holds math, a link's address or a tag's end (each piece of text
closes its own), and an abstract is cut around its densest run of matches, at
word and macro boundaries, so math is never cut in two. The cut is made here
rather than by ts_headline's or FTS5's snippet, which choose differently.
"""

import re
from collections import Counter
from dataclasses import dataclass
from functools import cached_property
from html import escape

from django.contrib.postgres.search import SearchHeadline
from django.db import connections
from django.db.models import F, Func, QuerySet, TextField, Value

from catalog.latex import Node, has_latex, math_html, nodes_to_html, parse, split_urls
from catalog.models import Paper
from catalog.search import PAPER_FTS, fts5_query, parse_web_search, websearch_query

OPEN, CLOSE = "\ue002", "\ue003"
MARKERS = re.compile(f"[{OPEN}{CLOSE}]")
# About three lines of a card.
SNIPPET_CHARACTERS = 240
# How far before the first match of the cut a sentence's start is looked for.
CONTEXT_CHARACTERS = 80


class Fts5Highlight(Func):
    """A column of a row's FTS5 row (the paper's, by default) with the query's
    matches between markers; found by rowid, as Bm25Rank finds it."""

    template = (
        "(SELECT highlight(%(table)s, %(column)d, '\ue002', '\ue003')"
        " FROM %(table)s WHERE %(table)s MATCH %(expressions)s)"
    )
    output_field = TextField()

    def __init__(self, column: int, query: str, *, table: str = PAPER_FTS) -> None:
        super().__init__(Value(query), F("pk"), column=column, table=table)
        self.arg_joiner = f" AND {table}.rowid = "


def with_marks(papers: QuerySet[Paper], text: str) -> QuerySet[Paper]:
    """The papers with `title_marked` and `abstract_marked`: their text with the
    search's matches between markers (None where nothing is marked), computed
    for the rows read, never for the rows a search only counts or ranks."""
    text = text.strip()
    if not text:
        return papers.annotate(
            title_marked=Value(None, TextField()), abstract_marked=Value(None, TextField())
        )
    if connections[papers.db].vendor == "postgresql":
        query = websearch_query(text)

        def marked(column: str) -> SearchHeadline:
            return SearchHeadline(
                column,
                query,
                config="english",
                start_sel=OPEN,
                stop_sel=CLOSE,
                highlight_all=True,
            )

        return papers.annotate(title_marked=marked("title"), abstract_marked=marked("abstract"))
    expression = fts5_query(parse_web_search(text))
    if not expression:
        return with_marks(papers, "")
    # The FTS5 table's columns: title, author_names, abstract.
    return papers.annotate(
        title_marked=Fts5Highlight(0, expression), abstract_marked=Fts5Highlight(2, expression)
    )


class _Marks:
    """Writes marked text as HTML, a mark open across pieces being closed at the
    end of each and opened again at the start of the next."""

    def __init__(self, *, is_open: bool = False) -> None:
        self.is_open = is_open

    def text(self, piece: str) -> str:
        parts = ["<mark>" if self.is_open else ""]
        for part in re.split(f"([{OPEN}{CLOSE}])", piece):
            if part == OPEN and not self.is_open:
                parts.append("<mark>")
                self.is_open = True
            elif part == CLOSE and self.is_open:
                parts.append("</mark>")
                self.is_open = False
            elif part not in (OPEN, CLOSE):
                parts.append(escape(part, quote=False))
        parts.append("</mark>" if self.is_open else "")
        return "".join(parts)

    def linked_text(self, piece: str) -> str:
        html = []
        for is_url, part in split_urls(piece):
            if is_url:
                href = escape(MARKERS.sub("", part))
                html.append(f'<a href="{href}" rel="nofollow noopener">{self.text(part)}</a>')
            else:
                html.append(self.text(part))
        return "".join(html)

    def math(self, node: Node) -> str:
        self.skip(node.text)
        return math_html(MARKERS.sub("", node.text), display=node.display)

    def skip(self, text: str) -> None:
        """Follow the markers of text shown without marks."""
        for marker in MARKERS.findall(text):
            self.is_open = marker == OPEN


def _tidy(html: str) -> str:
    # Empty marks left by closing and opening around pieces; neighbouring marks
    # made one, so a phrase reads the same whichever database marked its words.
    html = html.replace("<mark></mark>", "")
    html = re.sub(r"(\s+)</mark>", r"</mark>\1", html)
    return re.sub(r"</mark>(\s*)<mark>", r"\1", html)


def _nodes(marked: str) -> list[Node]:
    nodes = parse(marked) if has_latex(marked) else [Node(text=marked)]
    _unmark_addresses(nodes)
    return nodes


def _unmark_addresses(nodes: list[Node]) -> None:
    for node in nodes:
        if node.kind == "link":
            node.text = MARKERS.sub("", node.text)
        _unmark_addresses(node.children)


def marked_html(marked: str, *, links: bool = False) -> str:
    """The whole marked text as HTML, as catalog.latex writes it, with <mark>s;
    links: plain URLs become links (not in titles, which are links themselves)."""
    marks = _Marks()
    text = marks.linked_text if links else marks.text
    html = nodes_to_html(_nodes(marked), text=text, math=marks.math, link_text=marks.text)
    return _tidy(html)


@dataclass(frozen=True)
class _Piece:
    raw: str  # a word with the space after it, or a macro's or math's marked text
    marks: int  # matches starting in it
    length: int  # characters shown
    node: Node | None = None  # the macro or math; None for a word
    ends_sentence: bool = False

    @cached_property
    def matched(self) -> list[str]:
        """The first word of each match starting in it, in lower case."""
        return [word.lower() for word in MATCH_START.findall(self.raw)]


SENTENCE_END = re.compile(r"[.!?][\ue002\ue003]?\s+$")
MATCH_START = re.compile(f"{OPEN}(\\w+)")


def _pieces(nodes: list[Node]) -> list[_Piece]:
    """The text as words (with the space after them) and whole macros and math."""
    pieces = []
    for node in nodes:
        if node.kind == "text":
            for word in re.findall(r"\S+\s*|\s+", node.text):
                shown = len(word) - word.count(OPEN) - word.count(CLOSE)
                ends = bool(SENTENCE_END.search(word))
                pieces.append(_Piece(word, word.count(OPEN), shown, ends_sentence=ends))
        else:
            raw = _raw(node)
            pieces.append(_Piece(raw, raw.count(OPEN), len(MARKERS.sub("", raw)), node))
    return pieces


def _raw(node: Node) -> str:
    return node.text + "".join(_raw(child) for child in node.children)


@dataclass(frozen=True)
class Snippet:
    html: str
    cut: bool  # whether it is only part of the abstract


def snippet(marked: str | None) -> Snippet | None:
    """The part of a marked abstract around its densest run of matches, as HTML
    with <mark>s and an ellipsis where it is cut; None when nothing is marked."""
    if not marked or OPEN not in marked:
        return None
    pieces = _pieces(_nodes(marked))
    start, stop = _best_window(pieces)
    marks = _Marks()
    for piece in pieces[:start]:
        marks.skip(piece.raw)
    html = "".join(
        marks.linked_text(piece.raw)
        if piece.node is None
        else nodes_to_html(
            [piece.node], text=marks.linked_text, math=marks.math, link_text=marks.text
        )
        for piece in pieces[start:stop]
    )
    html = _tidy(html).strip()
    cut_after = stop < len(pieces)
    return Snippet(
        ("… " if start else "") + html + (" …" if cut_after else ""), bool(start) or cut_after
    )


def _best_window(pieces: list[_Piece]) -> tuple[int, int]:
    """The pieces to show: SNIPPET_CHARACTERS around the run holding most of the
    search's words (then most matches: "sparsemax" and "model" before "model"
    five times), from the start of its first match's sentence when that is near."""
    if sum(piece.length for piece in pieces) <= SNIPPET_CHARACTERS * 1.15:
        return 0, len(pieces)
    # The window starting at each piece, slid along once (two pointers).
    best, best_score = 0, (-1, -1)
    stop = length = marks = 0
    words: Counter[str] = Counter()
    for start in range(len(pieces)):
        if stop <= start:  # a piece longer than a snippet stands alone
            stop, length, marks, words = start, 0, 0, Counter()
        while stop < len(pieces) and (
            stop == start or length + pieces[stop].length <= SNIPPET_CHARACTERS
        ):
            length += pieces[stop].length
            marks += pieces[stop].marks
            words.update(pieces[stop].matched)
            stop += 1
        if (len(words), marks) > best_score:
            best, best_score = start, (len(words), marks)
        length -= pieces[start].length
        marks -= pieces[start].marks
        for word in pieces[start].matched:
            words[word] -= 1
            if not words[word]:
                del words[word]
    first = next(i for i in range(best, len(pieces)) if pieces[i].marks or i == len(pieces) - 1)
    start, before = first, 0
    while start > 0 and not pieces[start - 1].ends_sentence:
        before += pieces[start - 1].length
        if before > CONTEXT_CHARACTERS:
            start = first  # no sentence start near: begin at the match
            break
        start -= 1
    stop, length = start, 0
    while stop < len(pieces) and (not length or length + pieces[stop].length <= SNIPPET_CHARACTERS):
        length += pieces[stop].length
        stop += 1
    return start, stop
