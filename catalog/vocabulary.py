"""The names a search may mean, offered as a reader types and suggested when
a search misspells one.

The vocabulary is catalog.SearchTerm, a view over the tags, the categories
(code and name) and the authors. As a reader types, the search box asks for
the terms with a word starting with what is typed (`typed_terms`, one query,
kept in the catalog cache). For a search, `did_you_mean` reads each run of up
to four of its words against the tags and categories, and each run of two or
three against the authors (a name as written), and suggests the terms a few
letters away from one: on PostgreSQL the candidates come from the trigram
indexes behind the view (pg_trgm's `%`, similarity at least 0.3), on SQLite
the vocabulary is small and read whole; either way the edit distance between
the words and the term decides.
"""

import functools
import operator
from dataclasses import dataclass

from django.contrib.postgres.search import TrigramSimilarity
from django.db import connections
from django.db.models import Q, QuerySet
from django.db.models.functions import Greatest, Length

from catalog.cache import cached_read
from catalog.models import SearchTerm
from catalog.names import normalize_name
from catalog.search import STOP_WORDS, TOKEN, WORD

# As a reader types: at least this many letters, at most this many terms.
TYPED_AT_LEAST = 2
TYPED_TERMS = 8
# Runs of the search's words read against the vocabulary, the longest first.
LONGEST_RUN = 4
MOST_RUNS = 24
AUTHOR_RUN = 3
# Read against a misspelt run: the nearest candidates by trigram similarity.
CANDIDATES = 50
MOST_SUGGESTIONS = 3


@dataclass(frozen=True)
class Suggestions:
    terms: list[SearchTerm]
    # The search with the misspelt words replaced by the terms', where they
    # stand one for one; "" when none does.
    corrected: str


@dataclass(frozen=True)
class Run:
    """Consecutive words of a search, and where they stand in its text."""

    words: str  # normalized, one space between words
    start: int
    end: int


def typed_terms(text: str) -> list[SearchTerm]:
    """The terms one of whose words starts with the text typed, tags first,
    then categories, then authors, the shortest first; none under two letters."""
    typed = normalize_name(text)[:100]
    if len(typed) < TYPED_AT_LEAST:
        return []
    return cached_read("typed-terms", lambda: _typed_terms(typed), typed)


def _typed_terms(typed: str) -> list[SearchTerm]:
    starting = Q(normalized__startswith=typed) | Q(normalized__contains=f" {typed}")
    return list(
        SearchTerm.objects.filter(starting).order_by(
            "kind_order", Length("normalized"), "normalized", "id"
        )[:TYPED_TERMS]
    )


def did_you_mean(text: str) -> Suggestions:
    """Terms a few letters away from some of the search's words (one query),
    the closest first, each run of words suggested once, none for words that
    name a term exactly; and the search with them in those words' place."""
    runs = search_runs(text)
    if not runs:
        return Suggestions(terms=[], corrected="")
    by_run = []
    for term in _candidates(runs):
        allowed = allowed_distance(term.normalized)
        for run in runs:
            if term.kind == SearchTerm.Kind.AUTHOR and not _names_an_author(run):
                continue
            if abs(len(run.words) - len(term.normalized)) > allowed:
                continue  # more letters apart than may be wrong: not worth measuring
            distance = edit_distance(run.words, term.normalized)
            if distance == 0:
                # Named exactly: no suggestion for these words or any run they are in.
                runs = [r for r in runs if r.end <= run.start or r.start >= run.end]
            elif distance <= allowed:
                by_run.append((distance / len(term.normalized), -len(run.words), run, term))
    chosen: list[tuple[Run, SearchTerm]] = []
    for _, _, run, term in sorted(by_run, key=lambda found: found[:2]):
        if run not in runs or any(run.start < r.end and r.start < run.end for r, _ in chosen):
            continue
        if any(t.kind == term.kind and t.key == term.key for _, t in chosen):
            continue
        chosen.append((run, term))
        if len(chosen) == MOST_SUGGESTIONS:
            break
    # Replaced from the last, so that the places of the others stand. A name
    # that is the words in another form (agent, agents) is still offered, but
    # the search is not "corrected" to it: the search reads both forms alike.
    corrected = text
    for run, term in sorted(chosen, key=lambda pair: pair[0].start, reverse=True):
        if len(run.words.split()) == len(term.normalized.split()) and not _same_stems(
            run.words, term.normalized
        ):
            corrected = corrected[: run.start] + term.normalized + corrected[run.end :]
    corrected = " ".join(corrected.split())
    return Suggestions(
        terms=[term for _, term in chosen],
        corrected=corrected if corrected != " ".join(text.split()) else "",
    )


def search_runs(text: str) -> list[Run]:
    """The runs of up to four consecutive words of the search's wanted words
    (excluded words, `or` and quotes left out), the longest first, at most 24;
    a run starting or ending with a stop word, or under four letters, is not one."""
    words: list[tuple[str, int, int]] = []
    for token in TOKEN.finditer(text):
        excluded_phrase, _, word = token.groups()
        if excluded_phrase or (word and (word.startswith("-") or word.lower() == "or")):
            continue
        words.extend(
            (found.group().lower(), found.start(), found.end())
            for found in WORD.finditer(text, token.start(), token.end())
        )
    runs = []
    for length in range(min(LONGEST_RUN, len(words)), 0, -1):
        for first in range(len(words) - length + 1):
            part = words[first : first + length]
            if part[0][0] in STOP_WORDS or part[-1][0] in STOP_WORDS:
                continue
            start, end = part[0][1], part[-1][2]
            # As typed between its first and last word ("cs.CL" is one name), quotes dropped.
            joined = normalize_name(text[start:end].replace('"', " "))
            if len(joined) >= 4:
                runs.append(Run(words=joined, start=start, end=end))
    return runs[:MOST_RUNS]


def _candidates(runs: list[Run]) -> QuerySet[SearchTerm]:
    terms = SearchTerm.objects.all()
    if connections[terms.db].vendor != "postgresql":
        return terms
    # An author is asked about by a run of two or three words (a name as written):
    # one word is like thousands of names among hundreds of thousands of authors.
    named = [Q(normalized__trigram_similar=run.words) for run in runs if _names_an_author(run)]
    similar = functools.reduce(
        operator.or_, (Q(normalized__trigram_similar=run.words) for run in runs)
    ) & ~Q(kind=SearchTerm.Kind.AUTHOR)
    if named:
        similar |= functools.reduce(operator.or_, named) & Q(kind=SearchTerm.Kind.AUTHOR)
    similarities = [TrigramSimilarity("normalized", run.words) for run in runs]
    closeness = Greatest(*similarities) if len(similarities) > 1 else similarities[0]
    return terms.filter(similar).annotate(closeness=closeness).order_by("-closeness")[:CANDIDATES]


def _same_stems(words: str, name: str) -> bool:
    """Whether the words are the name's words with other endings (agent,
    agents): each pair shares its Porter stem and one is the other cut short.
    The stem alone would not do: "reinforcment" stems as "reinforcement" does."""
    from nltk.stem.porter import PorterStemmer  # loaded when a search suggests a name

    stem = PorterStemmer().stem
    pairs = list(zip(words.split(), name.split(), strict=True))
    return all(
        stem(mine) == stem(theirs) and (mine.startswith(theirs) or theirs.startswith(mine))
        for mine, theirs in pairs
    )


def _names_an_author(run: Run) -> bool:
    return 1 < len(run.words.split()) <= AUTHOR_RUN


def allowed_distance(term: str) -> int:
    """How many letters may be wrong in a name of this length: none under four,
    one up to eleven, then one more every six."""
    if len(term) < 4:
        return 0
    return min(1 + max(0, len(term) - 6) // 6, 3)


def edit_distance(first: str, second: str) -> int:
    """Levenshtein's distance: letters inserted, deleted or replaced."""
    if len(first) < len(second):
        first, second = second, first
    previous = list(range(len(second) + 1))
    for row, letter in enumerate(first, start=1):
        current = [row]
        for column, other in enumerate(second, start=1):
            current.append(
                min(
                    previous[column] + 1,
                    current[column - 1] + 1,
                    previous[column - 1] + (letter != other),
                )
            )
        previous = current
    return previous[-1]
