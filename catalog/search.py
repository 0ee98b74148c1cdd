"""Full-text search of papers with one syntax and ranking on both databases.

Readers type web-search syntax: words that must all appear, "exact phrases",
-excluded words, and `or` between alternatives. PostgreSQL reads it with
websearch_to_tsquery over the stored, weighted tsvector (GIN index). SQLite, the
embedded default, has no tsvector: there the same query is parsed here and run
against an FTS5 index of the same three columns, ranked by bm25 with the same
column weights, so `make run` finds and orders what production does.
"""

import re
from dataclasses import dataclass
from typing import Any

from django.contrib.postgres.search import SearchQuery, SearchRank
from django.db import connections
from django.db.models import F, FloatField, Func, Q, QuerySet, Value
from django.db.models.expressions import RawSQL

from catalog.models import Paper

# PostgreSQL's English stop words (tsearch_data/english.stop): it drops them from
# queries, so a search for "the agents" must not require "the" here either.
STOP_WORDS = frozenset(
    """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his
    himself she her hers herself it its itself they them their theirs themselves what which
    who whom this that these those am is are was were be been being have has had having do
    does did doing a an the and but if or because as until while of at by for with about
    against between into through during before after above below to from up down in out on
    off over under again further then once here there when where why how all any both each
    few more most other some such no nor not only own same so than too very s t can will
    just don should now
    """.split()  # noqa: SIM905 - the file's own layout
)
WORD = re.compile(r"\w+")
TOKEN = re.compile(r'(-?)"([^"]*)"?|(\S+)')


@dataclass(frozen=True)
class Term:
    words: tuple[str, ...]  # one word, or the words of a phrase in order
    excluded: bool = False

    def fts5(self) -> str:
        # Quoted, so no word is read as an FTS5 operator; "" escapes a quote.
        return '"' + " ".join(self.words).replace('"', '""') + '"'


def parse_web_search(text: str) -> list[list[Term]]:
    """The alternatives of a web-search query, each a list of terms that must all
    hold, as websearch_to_tsquery reads it: `or` binds looser than the implied
    "and", a leading `-` excludes a word or phrase, punctuation separates words."""
    alternatives: list[list[Term]] = [[]]
    for match in TOKEN.finditer(text):
        excluded_phrase, phrase, word = match.groups()
        if word is not None and word.lower() == "or":
            if alternatives[-1]:
                alternatives.append([])
            continue
        if phrase is not None:
            excluded, words = bool(excluded_phrase), tuple(WORD.findall(phrase.lower()))
        else:
            excluded = word.startswith("-")
            words = tuple(w for w in WORD.findall(word.lower()) if w not in STOP_WORDS)
        if words and not all(w in STOP_WORDS for w in words):
            alternatives[-1].append(Term(words, excluded))
    return [terms for terms in alternatives if terms]


def search(papers: QuerySet[Paper], text: str) -> QuerySet[Paper]:
    """Papers matching a web-search query, annotated with `rank` (higher is better)."""
    if connections[papers.db].vendor == "postgresql":
        query = SearchQuery(text, search_type="websearch", config="english")
        return papers.filter(search_document=query).annotate(
            rank=SearchRank(F("search_document"), query)
        )
    return _search_sqlite(papers, text)


def _search_sqlite(papers: QuerySet[Paper], text: str) -> QuerySet[Paper]:
    alternatives = parse_web_search(text)
    if not alternatives:
        # Only stop words or punctuation, as in PostgreSQL; ranked like any search.
        return papers.annotate(rank=Value(0.0)).none()
    matches = Q()
    for terms in alternatives:
        if not any(not t.excluded for t in terms):
            # FTS5's NOT needs something on its left: "everything but" is asked in SQL.
            unwanted = " OR ".join(t.fts5() for t in terms)
            matches |= ~Q(pk__in=_fts_matches(unwanted))
    rank: Func | Value = Value(0.0)
    expression = fts5_query(alternatives)
    if expression:
        matches |= Q(pk__in=_fts_matches(expression))
        rank = Bm25Rank(expression)
    return papers.filter(matches).annotate(rank=rank)


def fts5_query(alternatives: list[list[Term]]) -> str:
    """The FTS5 query of the alternatives that ask for a word or phrase ("" if none
    does): what ranks a match and what its highlights mark."""
    ranked = []
    for terms in alternatives:
        wanted = [t.fts5() for t in terms if not t.excluded]
        unwanted = " OR ".join(t.fts5() for t in terms if t.excluded)
        if wanted:
            expression = "(" + " AND ".join(wanted) + ")"
            ranked.append(f"({expression} NOT ({unwanted}))" if unwanted else expression)
    return " OR ".join(ranked)


def _fts_matches(expression: str) -> RawSQL:
    # The expression is a parameter: FTS5 parses it, SQLite never sees it as SQL.
    sql = "SELECT rowid FROM catalog_paper_fts WHERE catalog_paper_fts MATCH %s"
    return RawSQL(sql, [expression])  # noqa: S611


class Bm25Rank(Func):
    """A paper's bm25 score for an FTS5 query, negated so that higher is better.

    The weights are PostgreSQL's default rank weights of the title (A), authors
    (B) and abstract (C); the paper's own row is found by rowid.
    """

    template = (
        "COALESCE((SELECT -bm25(catalog_paper_fts, 1.0, 0.4, 0.2) FROM catalog_paper_fts"
        " WHERE catalog_paper_fts MATCH %(expressions)s), 0)"
    )
    arg_joiner = " AND catalog_paper_fts.rowid = "
    output_field = FloatField()

    def __init__(self, expression: str) -> None:
        super().__init__(Value(expression), F("pk"))


# The SQLite index: an FTS5 table over catalog_paper's own rows, kept in step by
# triggers, so every write path (ORM saves, bulk upserts, raw SQL) updates it.
FTS_SCHEMA = {
    "catalog_paper_fts": """
        CREATE VIRTUAL TABLE catalog_paper_fts USING fts5(
            title, author_names, abstract, content='catalog_paper', content_rowid='id',
            tokenize='porter unicode61 remove_diacritics 2'
        )""",
    "catalog_paper_fts_insert": """
        CREATE TRIGGER catalog_paper_fts_insert AFTER INSERT ON catalog_paper BEGIN
            INSERT INTO catalog_paper_fts(rowid, title, author_names, abstract)
            VALUES (new.id, new.title, new.author_names, new.abstract);
        END""",
    "catalog_paper_fts_delete": """
        CREATE TRIGGER catalog_paper_fts_delete AFTER DELETE ON catalog_paper BEGIN
            INSERT INTO catalog_paper_fts(catalog_paper_fts, rowid, title, author_names, abstract)
            VALUES ('delete', old.id, old.title, old.author_names, old.abstract);
        END""",
    "catalog_paper_fts_update": """
        CREATE TRIGGER catalog_paper_fts_update AFTER UPDATE OF title, author_names, abstract
        ON catalog_paper BEGIN
            INSERT INTO catalog_paper_fts(catalog_paper_fts, rowid, title, author_names, abstract)
            VALUES ('delete', old.id, old.title, old.author_names, old.abstract);
            INSERT INTO catalog_paper_fts(rowid, title, author_names, abstract)
            VALUES (new.id, new.title, new.author_names, new.abstract);
        END""",
}


def ensure_sqlite_index(*, using: str = "default", **kwargs: Any) -> None:
    """Create whatever part of the SQLite index is missing, then fill it from the papers.

    Run after every migrate rather than by a migration: on SQLite, Django rebuilds
    a table to alter it, and the rebuild drops the table's triggers; any paper
    written while they were gone is indexed by the rebuild here.
    """
    connection = connections[using]
    if connection.vendor != "sqlite":
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT name FROM sqlite_master")
        present = {name for (name,) in cursor.fetchall()}
        missing = [name for name in FTS_SCHEMA if name not in present]
        for name in missing:
            cursor.execute(FTS_SCHEMA[name])
        if missing:
            cursor.execute("INSERT INTO catalog_paper_fts(catalog_paper_fts) VALUES ('rebuild')")
