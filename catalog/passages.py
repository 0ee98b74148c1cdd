"""The passage of each listed paper a full-text search (`in=fulltext`) found:
in the section holding most of the search's words, the paragraph that holds
most of them, cut around them with the words marked, the section it is in,
and the Read view at that paragraph.

Found for the rows a page shows alone, in one query: of those papers whose
text holds the search, the sections holding any of its words, the best of
each paper (its rank, then the first) picked by a window, and only that
section marked by the database that matched it (ts_headline on PostgreSQL,
FTS5's highlight() on SQLite), so the words marked are the words it stemmed
and matched. Marking every matching section would read whole texts for a
common word.
"""

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from django.contrib.postgres.search import SearchHeadline
from django.db import connections
from django.db.models import F, Func, Window
from django.db.models.functions import RowNumber
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe

from catalog.highlight import CLOSE, MARKERS, OPEN, Fts5Highlight, marked_html, snippet
from catalog.models import FullTextSection, Paper
from catalog.reading import paragraph_anchor
from catalog.search import (
    SECTION_FTS,
    fts5_query,
    matching_sections,
    parse_web_search,
    section_rank,
    terms_held,
    text_matches,
    wanted_terms,
    websearch_query,
)

MARKED = re.compile(f"{OPEN}(.*?){CLOSE}")


@dataclass(frozen=True)
class Passage:
    """Where a paper's text answers the search."""

    heading: str  # the section's heading as stored (TeX between $ signs)
    heading_html: SafeString  # the section's heading, its matches marked ("" for a PDF's page)
    section_number: int  # from 1, as the Read view numbers its sections
    paragraph_number: int  # from 1 within the section
    paragraph: str  # the whole paragraph as stored (TeX between $ signs)
    html: SafeString  # the paragraph around its matches, <mark>ed, an ellipsis where cut
    url: str  # the Read view at the paragraph


def passages(papers: Sequence[Paper], text: str) -> dict[int, Passage]:
    """The passage of each of the papers whose stored text matches the search
    (by paper id); papers matched by their title or abstract alone have none."""
    readable = [paper for paper in papers if paper.arxiv_id]
    wanted = wanted_terms(text)
    if not readable or not wanted:
        return {}
    alias = readable[0]._state.db or "default"
    found_in_text = (
        Paper.objects.using(alias)
        .filter(pk__in=[paper.pk for paper in readable])
        .filter(text_matches(alias, text))
        .values("pk")
    )
    best = (
        matching_sections(alias, wanted)
        .filter(paper_id__in=found_in_text)
        .annotate(
            order=Window(
                RowNumber(),
                partition_by=F("paper_id"),
                order_by=[
                    terms_held(alias, text).desc(),
                    section_rank(alias, wanted).desc(),
                    F("position").asc(),
                ],
            )
        )
        .filter(order=1)
        .values("pk")
    )
    heading_marked, text_marked = _marks(alias, wanted)
    marked = (
        FullTextSection.objects.using(alias)
        .filter(pk__in=best)
        .annotate(heading_marked=heading_marked, text_marked=text_marked)
    )
    by_id = {paper.pk: paper for paper in readable}
    return {
        paper_id: _passage(by_id[paper_id], position, heading or "", paragraphs or "")
        for paper_id, position, heading, paragraphs in marked.values_list(
            "paper_id", "position", "heading_marked", "text_marked"
        )
    }


def _marks(alias: str, text: str) -> tuple[Func, Func]:
    """A section's heading and its paragraphs with the search's words between markers."""
    if connections[alias].vendor == "postgresql":
        query = websearch_query(text)

        def marked(column: str) -> Func:
            return SearchHeadline(
                column, query, config="english", start_sel=OPEN, stop_sel=CLOSE, highlight_all=True
            )

        return marked("heading"), marked("text")
    expression = fts5_query(parse_web_search(text))
    # The FTS5 table's columns: heading, text.
    return (
        Fts5Highlight(0, expression, table=SECTION_FTS),
        Fts5Highlight(1, expression, table=SECTION_FTS),
    )


def _passage(paper: Paper, position: int, heading: str, text: str) -> Passage:
    """The paragraph of the marked section with most marks, cut around them."""
    paragraphs = text.split("\n\n")
    marked = [{word.lower() for word in MARKED.findall(p)} for p in paragraphs]
    # How many paragraphs hold each marked word: a word the section seldom
    # says is the one the search is after ("sparsemax" beside "model").
    spread = Counter(word for words in marked for word in words)

    def answers(index: int) -> tuple[int, float, int, int]:
        """Most of the search's words, then the rarest, then the most marks, then the first."""
        words = marked[index]
        rarity = sum(1 / spread[word] for word in words)
        return len(words), rarity, paragraphs[index].count(OPEN), -index

    number = max(range(len(paragraphs)), key=answers)
    found = snippet(paragraphs[number])
    if found is None:
        # Only the heading holds the words: the section's start, cut as a
        # snippet is (an empty mark at the start of its first paragraph).
        number = 0
        found = snippet(OPEN + CLOSE + paragraphs[0]) if paragraphs[0] else None
    anchor = paragraph_anchor(section_position=position, paragraph_index=number)
    # Escaped by catalog.highlight, its marks balanced.
    return Passage(
        heading=MARKERS.sub("", heading),
        heading_html=mark_safe(marked_html(heading) if heading else ""),  # noqa: S308
        section_number=position + 1,
        paragraph_number=number + 1,
        paragraph=MARKERS.sub("", paragraphs[number]),
        html=mark_safe(found.html if found else ""),  # noqa: S308
        url=reverse("catalog:paper-read", args=[paper.arxiv_id]) + f"#{anchor}",
    )
