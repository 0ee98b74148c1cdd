"""The passages of a paper's stored text that bear on a question.

A passage is a paragraph of a stored section (catalog.FullTextSection), found
by its section's position and its place in the section, which is also its
anchor in the Read view (catalog.reading.paragraph_anchor). A paper has a few
hundred paragraphs at most, so they are read in one query and ranked here by
Okapi BM25 over Porter-stemmed words without PostgreSQL's English stop words:
the same ranking on PostgreSQL and SQLite by construction, with the OR
semantics a question needs (the database's full-text match wants every word).

Where the site has text vectors of its own (the tf-idf model discovery fits,
EMBEDDING_BACKEND=tfidf), the question and the paragraphs are embedded by it
too: a paragraph's score is then its BM25 score squashed into [0, 1) plus
SEMANTIC_WEIGHT times its cosine with the question, and a paragraph sharing
no word with the question comes in when that cosine reaches SEMANTIC_FLOOR
("protein" finds the paragraph on amino acid chains).
"""

import math
import re
from collections import Counter
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from django.utils.safestring import SafeString, mark_safe

from catalog.highlight import CLOSE, OPEN, marked_html
from catalog.models import FullTextSection, Paper
from catalog.reading import paragraph_anchor
from catalog.search import STOP_WORDS
from discovery.search import closeness

if TYPE_CHECKING:
    from nltk.stem.porter import PorterStemmer

# BM25's usual constants: how fast a word's repeats stop counting, and how much
# a long paragraph is discounted.
K1 = 1.2
B = 0.75
# Passages shown to the model, and to a reader without one.
PASSAGES = 6
# A passage longer than this reaches the model cut (its quotes are still
# checked against the whole stored paragraph).
PASSAGE_CHARACTERS = 1500
# A word of the paper's language, English: letters of the Latin script and
# digits, so that a Korean or Chinese question's terms ("GSM8K에서") are found
# apart from the particles and characters written against them.
WORD = re.compile(r"[0-9A-Za-z\u00c0-\u024f]+")
# The BM25 score at which a passage's squashed score is one half, the weight of
# the cosine beside it, and the cosine that brings a passage of no shared word.
BM25_HALF = 2.0
SEMANTIC_WEIGHT = 0.5
SEMANTIC_FLOOR = 0.5


@dataclass(frozen=True)
class Passage:
    number: int  # 1-based, as the model and the reader see it
    section: int  # the section's position
    paragraph: int  # the paragraph's place in its section, from 0
    heading: str
    text: str

    @property
    def anchor(self) -> str:
        return paragraph_anchor(section_position=self.section, paragraph_index=self.paragraph)

    def as_stored(self) -> list[int | str]:
        return [self.section, self.paragraph, self.heading]


@cache
def _stemmer() -> "PorterStemmer":
    # nltk (with scipy and scikit-learn) loads when a reader first asks, not
    # in every process that sets Django up.
    from nltk.stem.porter import PorterStemmer

    return PorterStemmer()


@cache
def _stem(word: str) -> str:
    stem: str = _stemmer().stem(word)
    return stem


def terms(text: str) -> list[str]:
    """The stems of a text's words that can tell passages apart."""
    return [_stem(word) for word in WORD.findall(text.casefold()) if word not in STOP_WORDS]


def best_passages(*, paper: Paper, question: str, limit: int = PASSAGES) -> list[Passage]:
    """Up to `limit` paragraphs sharing a word with the question, the best
    first (one query: the paper's sections)."""
    wanted = set(terms(question))
    if not wanted:
        return []
    rows = FullTextSection.objects.filter(paper=paper).order_by("position")
    candidates = [
        (section, count, heading, text)
        for section, heading, body in rows.values_list("position", "heading", "text")
        for count, text in enumerate(body.split("\n\n") if body else [])
        if text.strip()
    ]
    # The heading's words count for each of its paragraphs ("Datasets" answers
    # "which datasets").
    documents = [terms(f"{heading} {text}") for _, _, heading, text in candidates]
    scores = _bm25(documents, wanted)
    cosines = closeness(question, [text for _, _, _, text in candidates])
    if cosines is not None:
        scores = [
            (score / (score + BM25_HALF) if score > 0 else 0.0)
            + (SEMANTIC_WEIGHT * max(cosine, 0.0) if score > 0 or cosine >= SEMANTIC_FLOOR else 0.0)
            for score, cosine in zip(scores, cosines, strict=True)
        ]
    ranked = sorted(
        (index for index, score in enumerate(scores) if score > 0),
        key=lambda index: (-scores[index], index),
    )[:limit]
    return [
        Passage(number=number, section=section, paragraph=count, heading=heading, text=text)
        for number, (section, count, heading, text) in enumerate(
            (candidates[index] for index in ranked), start=1
        )
    ]


def _bm25(documents: list[list[str]], wanted: set[str]) -> list[float]:
    if not documents:
        return []
    average = sum(len(words) for words in documents) / len(documents) or 1.0
    holding = Counter(word for words in documents for word in set(words) & wanted)
    weights = {
        word: math.log(1 + (len(documents) - count + 0.5) / (count + 0.5))
        for word, count in holding.items()
    }
    scores = []
    for words in documents:
        counts = Counter(word for word in words if word in weights)
        length = len(words) / average
        scores.append(
            sum(
                weights[word] * count * (K1 + 1) / (count + K1 * (1 - B + B * length))
                for word, count in counts.items()
            )
        )
    return scores


def highlighted(text: str, question: str) -> SafeString:
    """The passage as HTML, each word sharing a stem with the question marked,
    its math for KaTeX as a search's passages have it (catalog.highlight)."""
    wanted = set(terms(question))
    pieces: list[str] = []
    end = 0
    for match in WORD.finditer(text):
        word = match.group()
        if word.casefold() in STOP_WORDS or _stem(word.casefold()) not in wanted:
            continue
        pieces += [text[end : match.start()], OPEN, word, CLOSE]
        end = match.end()
    pieces.append(text[end:])
    # marked_html escapes every piece of text and writes only its own tags.
    return mark_safe(marked_html("".join(pieces)))  # noqa: S308
