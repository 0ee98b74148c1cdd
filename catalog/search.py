"""Full-text search of papers with one syntax and ranking on both databases.

Readers type web-search syntax: words that must all appear, "exact phrases",
-excluded words, and `or` between alternatives. PostgreSQL reads it with
websearch_to_tsquery over the stored, weighted tsvector (GIN index). SQLite, the
embedded default, has no tsvector: there the same query is parsed here and run
against an FTS5 index of the same three columns, ranked by bm25 with the same
column weights, so `make run` finds and orders what production does.

Beside the papers that match the words, a search sorted by relevance brings the
papers nearest to it in meaning: settings.SEARCH_NEIGHBOURS names the function
that gives them (discovery.search.papers_near, which embeds the search as the
papers were embedded and looks it up in their faiss index; the catalog never
imports discovery). Both kinds are ranked by one score, computed per row so any
page of the list agrees with the others: the lexical rank squashed into [0, 1)
by rank / (rank + LEXICAL_HALF), plus SEMANTIC_WEIGHT times the cosine of a
neighbour. On the judged queries of bench/search_quality.py this fusion scored
as well as reciprocal rank fusion (BENCHMARKS.md), which needs each paper's
position among the matches and so a window over all of them.

With `in=fulltext` a search reads the papers' stored full texts too: a paper
matches when its title, authors and abstract hold the query, or when its
whole text (the headings and paragraphs of its sections) does, as a search
engine of papers reads a paper: each wanted word somewhere in it, each wanted
phrase within one section, no excluded word or phrase anywhere. On
PostgreSQL the words are asked of one stored tsvector a text, on its FullText
row, written only when the text is read, under a GIN index, and the phrases
of the sections' own; the papers matching by their own words and those
whose text matches are each read from their own index and joined by id. On
SQLite the sections' FTS5 table is asked for each word and phrase. The rank
stays the paper's own (a match in the title or abstract first, then matches
in the text alone, newest first): ranking thousands of matching texts would
read them whole. The passage each listed paper shows, its section holding
most of the words, is found for the page's rows alone (catalog.passages).
"""

import functools
import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.postgres.search import SearchQuery, SearchRank
from django.core.signals import setting_changed
from django.db import OperationalError, connections, transaction
from django.db.models import (
    BooleanField,
    Case,
    Expression,
    ExpressionWrapper,
    F,
    FloatField,
    Func,
    Q,
    QuerySet,
    Value,
    When,
)
from django.db.models.expressions import CombinedExpression, RawSQL
from django.dispatch import receiver
from django.utils.module_loading import import_string

from catalog.models import FullText, FullTextSection, Paper, TextSearchDocument
from catalog.pagination import estimated_count

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

    def websearch(self) -> str:
        # Quoted, as websearch_to_tsquery reads a phrase (and a word alike).
        return '"' + " ".join(self.words) + '"'


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


# Past this many papers matching a search by their own words (the planner's
# estimate), a search of the full texts too walks the newest papers rather
# than reading those papers from their index (_in_text): the two cost the same
# near where a search alone does (catalog.filters.FEW_SEARCH_MATCHES).
OWN_MATCHES_TO_WALK = 6_000

# A tsvector holds at most 1 MB: a text whose words would not fit (a PDF's
# long tables of numbers, each a word of its own) is searched by the words of
# its first TEXT_WORDS_FALLBACK characters. No text of 300,000 characters, a
# long paper's, fills one: four-letter words all different would take 0.7 MB.
TEXT_WORDS_FALLBACK = 300_000
# PostgreSQL's error code when a tsvector would pass its 1 MB.
PROGRAM_LIMIT_EXCEEDED = "54000"

# How many papers nearest in meaning a search brings, and how much their cosine
# weighs beside the squashed lexical rank (measured on the judged queries).
SEMANTIC_NEIGHBOURS = 50
SEMANTIC_WEIGHT = 0.5
# The lexical rank at which a match scores one half: near the median rank of a
# match on the judged queries, ts_rank's on PostgreSQL and bm25's on SQLite.
LEXICAL_HALF = {"postgresql": 0.36, "sqlite": 2.0}

Neighbours = Sequence[tuple[int, float]]


def websearch_query(text: str) -> SearchQuery:
    """A web-search query as PostgreSQL reads it (websearch_to_tsquery, English)."""
    return SearchQuery(text, search_type="websearch", config="english")


def has_phrase(text: str) -> bool:
    """Whether a web-search query holds a phrase, whose share of the papers
    the planner cannot estimate (it weighs the phrase's words alone)."""
    return any(len(term.words) > 1 for terms in parse_web_search(text) for term in terms)


@functools.cache
def _neighbours_function() -> Callable[..., list[tuple[int, float]]]:
    function: Callable[..., list[tuple[int, float]]] = import_string(settings.SEARCH_NEIGHBOURS)
    return function


@receiver(setting_changed)
def _forget_neighbours_function(*, setting: str, **kwargs: Any) -> None:
    if setting == "SEARCH_NEIGHBOURS":
        _neighbours_function.cache_clear()


def meaning_of(text: str) -> str:
    """The words a search wants, for its neighbours in meaning: excluded words
    and the syntax left out."""
    terms = [term for terms in parse_web_search(text) for term in terms]
    return " ".join(" ".join(term.words) for term in terms if not term.excluded)


def papers_near_query(text: str) -> list[tuple[int, float]]:
    """The papers nearest in meaning to the search, (id, cosine) the nearest first."""
    meaning = meaning_of(text)
    if not meaning:
        return []
    return _neighbours_function()(meaning, limit=SEMANTIC_NEIGHBOURS)


@dataclass(frozen=True)
class TextMatches:
    """The planner's estimates for a search of the full texts too: the papers
    matching by their own words, and the texts matching. It weighs a word by
    its share of the texts (within 1% of the truth for a word in 29% of
    100,000 texts), a phrase by its words' (4x the truth)."""

    own: int
    texts: int

    @property
    def total(self) -> int:
        """About how many papers the search finds (a paper may match both ways)."""
        return self.own + self.texts


def search(
    papers: QuerySet[Paper],
    text: str,
    *,
    near: Neighbours = (),
    fulltext: TextMatches | None = None,
) -> QuerySet[Paper]:
    """Papers matching a web-search query, annotated with `rank` (higher is
    better). near: papers close in meaning (papers_near_query), included too
    unless they hold an excluded word; then every paper is also annotated with
    `word_match` (whether it matches the words) and `closeness` (its cosine, 0
    for a paper not among them). fulltext: a paper whose stored text matches
    the query matches too, planned by these estimates (estimate_text_matches)."""
    if connections[papers.db].vendor == "postgresql":
        query = websearch_query(text)
        matches = Q(search_document=query)
    else:
        matches, _ = _fts5_condition(text, table=PAPER_FTS)
    rank = search_rank(papers.db, text)
    if fulltext is not None:
        matches = _in_text(papers.db, text, own=matches, own_matches=fulltext.own)
    if not near:
        return papers.filter(matches).annotate(rank=rank)
    related = Q(pk__in=[pk for pk, _ in near]) & ~_excluded(papers, text)
    closeness = Case(
        *(When(pk=pk, then=Value(cosine)) for pk, cosine in near),
        default=Value(0.0),
        output_field=FloatField(),
    )
    return papers.filter(matches | related).annotate(
        rank=rank,
        word_match=ExpressionWrapper(matches, output_field=BooleanField()),
        closeness=closeness,
    )


def search_rank(alias: str, text: str) -> Func | Value:
    """How well a paper's own words (title, authors, abstract) match a
    web-search query: the `rank` search() annotates, higher is better."""
    if connections[alias].vendor == "postgresql":
        query = websearch_query(text)
        return SearchRank(F("search_document"), query)
    _, expression = _fts5_condition(text, table=PAPER_FTS)
    return Bm25Rank(expression) if expression else Value(0.0)


def relevance(papers: QuerySet[Paper]) -> CombinedExpression:
    """The score a hybrid search (search with near) is sorted by, higher first."""
    half = LEXICAL_HALF.get(connections[papers.db].vendor, 1.0)
    lexical = ExpressionWrapper(F("rank") / (F("rank") + Value(half)), output_field=FloatField())
    return lexical + Value(SEMANTIC_WEIGHT) * F("closeness")


def _excluded(papers: QuerySet[Paper], text: str) -> Q:
    """The papers holding a word or phrase the search excludes (none: matches nothing)."""
    unwanted = [t for terms in parse_web_search(text) for t in terms if t.excluded]
    if not unwanted:
        return Q(pk__in=[])
    if connections[papers.db].vendor == "postgresql":
        words = " or ".join('"' + " ".join(t.words) + '"' for t in unwanted)
        return Q(search_document=websearch_query(words))
    return Q(pk__in=_fts_matches(" OR ".join(t.fts5() for t in unwanted), table=PAPER_FTS))


def wanted_terms(text: str) -> str:
    """The words and phrases a web-search query asks for, as a query holding
    any one of them ("" when it asks for none): what marks them in a passage."""
    wanted = {term for terms in parse_web_search(text) for term in terms if not term.excluded}
    return " or ".join(term.websearch() for term in sorted(wanted, key=lambda t: t.words))


def matching_sections(alias: str, text: str) -> QuerySet[FullTextSection]:
    """The stored sections holding a web-search query, on the database `alias`."""
    sections = FullTextSection.objects.using(alias)
    if connections[alias].vendor == "postgresql":
        query = websearch_query(text)
        return sections.filter(search_document=query)
    matches, _ = _fts5_condition(text, table=SECTION_FTS)
    return sections.filter(matches)


def text_matches(alias: str, text: str) -> Q:
    """The papers (by primary key) whose stored text holds a web-search query:
    for a few papers, each one's text asked (a search reads _in_text's)."""
    if connections[alias].vendor == "postgresql":
        return Q(pk__in=_texts_matching(alias, text).values("paper_id"))
    alternatives = parse_web_search(text)
    stored = FullText.objects.using(alias).filter(status=FullText.Status.STORED)
    holds_any = Q(pk__in=[])
    for terms in alternatives:
        holds = Q(pk__in=stored.values("paper_id"))
        for term in terms:
            sections = FullTextSection.objects.using(alias).filter(
                pk__in=_fts_matches(term.fts5(), table=SECTION_FTS)
            )
            in_a_section = Q(pk__in=sections.values("paper_id"))
            holds &= ~in_a_section if term.excluded else in_a_section
        holds_any |= holds
    return holds_any


def _in_text(alias: str, text: str, *, own: Q, own_matches: int) -> Q:
    """The papers matching by their own words (`own`) or by their stored text.

    On PostgreSQL the texts' matches are read once from their GIN indexes
    (_texts_holding). Few papers matching by their own words (own_matches, the
    planner's estimate) are read from their index too and the two lists joined
    by id: an OR of the two conditions has no index to serve it, and a rare
    word had every paper's tsvector read (BENCHMARKS.md). Many are met walking
    the newest papers, each looked up among the texts' matches, hashed: a list
    then stops at its page."""
    if connections[alias].vendor != "postgresql":
        return own | text_matches(alias, text)
    holding_sql, holding_params = _texts_holding(text)
    if own_matches > OWN_MATCHES_TO_WALK:
        return own | Q(pk__in=RawSQL(holding_sql, holding_params))  # noqa: S611
    by_own_words = Paper.objects.using(alias).filter(own).values("pk")
    own_sql, own_params = by_own_words.query.get_compiler(using=alias).as_sql()
    return Q(pk__in=RawSQL(f"{own_sql} UNION {holding_sql}", (*own_params, *holding_params)))  # noqa: S611


def estimate_text_matches(alias: str, text: str) -> TextMatches:
    """The estimates search(fulltext=...) plans by; none on SQLite."""
    if connections[alias].vendor != "postgresql":
        return TextMatches(own=0, texts=0)
    own = Paper.objects.using(alias).filter(search_document=websearch_query(text)).values("pk")
    texts = _texts_matching(alias, text).values("pk")
    return TextMatches(own=estimated_count(own), texts=estimated_count(texts))


def _texts_matching(alias: str, text: str) -> QuerySet[FullText]:
    return FullText.objects.using(alias).filter(search_document=websearch_query(text))


def _texts_holding(text: str) -> tuple[str, tuple[str, ...]]:
    """The SQL of the ids of the papers whose stored text holds a web-search
    query, on PostgreSQL, asked term by term as on SQLite: its words of the
    texts' own tsvectors, whose GIN index answers a word alone, and each phrase
    of the sections', where a candidate's check reads a section's 3.5 kB
    rather than a text's 26 kB (a phrase of two words in 2% of 100,000 texts:
    85 ms against 200). Both are functions of migration 0034 that forbid the
    planner a sequential scan: weighing rows, not the 26 kB tsvector each text
    holds, it read every text for a word in most of them (1.35 s at 100,000
    texts against 27 ms from the index)."""
    by_words = "SELECT catalog_papers_whose_text_holds(websearch_to_tsquery('english', %s))"
    by_phrase = "SELECT catalog_papers_whose_sections_hold(websearch_to_tsquery('english', %s))"
    stored = "SELECT paper_id FROM catalog_fulltext WHERE status = 'stored'"
    alternatives: list[str] = []
    params: list[str] = []
    for terms in parse_web_search(text):
        wanted = [term for term in terms if not term.excluded]
        words = [term.words[0] for term in wanted if len(term.words) == 1]
        parts = [by_words] if words else []
        params.extend([" ".join(words)] if words else [])
        for term in wanted:
            if len(term.words) > 1:
                parts.append(by_phrase)
                params.append(term.websearch())
        held = " INTERSECT ".join(f"({part})" for part in parts or [stored])
        for term in terms:
            if term.excluded:
                held += f" EXCEPT ({by_phrase if len(term.words) > 1 else by_words})"
                params.append(term.websearch())
        alternatives.append(f"({held})")
    if not alternatives:
        return "SELECT NULL::bigint WHERE false", ()
    return " UNION ".join(alternatives), tuple(params)


def index_texts(texts: QuerySet[FullText]) -> None:
    """Store the words of each of these stored texts (FullText.search_document),
    from their sections as they now are; PostgreSQL alone."""
    if connections[texts.db].vendor != "postgresql":
        return
    for pk in list(texts.filter(status=FullText.Status.STORED).values_list("pk", flat=True)):
        text = texts.model._default_manager.using(texts.db).filter(pk=pk)
        try:
            with transaction.atomic(using=texts.db):
                text.update(search_document=TextSearchDocument())
        except OperationalError as exc:
            if getattr(exc.__cause__, "sqlstate", None) != PROGRAM_LIMIT_EXCEEDED:
                raise
            # Too many words for one tsvector (TEXT_WORDS_FALLBACK).
            text.update(search_document=TextSearchDocument(characters=TEXT_WORDS_FALLBACK))


def terms_held(alias: str, text: str) -> Expression:
    """How many of a web-search query's wanted words and phrases a section
    holds: the passage holds most of them before it holds one most often."""
    held: list[Expression] = []
    for term in {term for terms in parse_web_search(text) for term in terms if not term.excluded}:
        if connections[alias].vendor == "postgresql":
            holds = Q(search_document=websearch_query(term.websearch()))
        else:
            holds = Q(pk__in=_fts_matches(term.fts5(), table=SECTION_FTS))
        held.append(Case(When(holds, then=Value(1)), default=Value(0)))
    return functools.reduce(operator.add, held) if held else Value(0)


def section_rank(alias: str, text: str) -> Func | Value:
    """How well a matching section answers the query (higher is better)."""
    if connections[alias].vendor == "postgresql":
        query = websearch_query(text)
        return SearchRank(F("search_document"), query)
    _, expression = _fts5_condition(text, table=SECTION_FTS)
    if not expression:
        return Value(0.0)
    return Bm25Rank(expression, table=SECTION_FTS, weights=SECTION_FTS_WEIGHTS)


def _fts5_condition(text: str, *, table: str) -> tuple[Q, str]:
    """The rows (by primary key) of the table an FTS5 index `table` indexes that
    match a web-search query, and the FTS5 expression that ranks and marks
    them ("" when the query asks for no word)."""
    alternatives = parse_web_search(text)
    if not alternatives:
        # Only stop words or punctuation, as in PostgreSQL: nothing matches.
        return Q(pk__in=[]), ""
    matches = Q()
    for terms in alternatives:
        if not any(not t.excluded for t in terms):
            # FTS5's NOT needs something on its left: "everything but" is asked in SQL.
            unwanted = " OR ".join(t.fts5() for t in terms)
            matches |= ~Q(pk__in=_fts_matches(unwanted, table=table))
    expression = fts5_query(alternatives)
    if expression:
        matches |= Q(pk__in=_fts_matches(expression, table=table))
    return matches, expression


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


# The FTS5 tables (FTS_SCHEMA), and the bm25 weights of their columns:
# PostgreSQL's default rank weights of the title (A), authors (B) and abstract
# (C); of a section's heading (A) and paragraphs (D).
PAPER_FTS = "catalog_paper_fts"
PAPER_FTS_WEIGHTS = "1.0, 0.4, 0.2"
SECTION_FTS = "catalog_fulltextsection_fts"
SECTION_FTS_WEIGHTS = "1.0, 0.1"


def _fts_matches(expression: str, *, table: str) -> RawSQL:
    # The expression is a parameter: FTS5 parses it, SQLite never sees it as SQL;
    # the table is one of this module's names.
    sql = f"SELECT rowid FROM {table} WHERE {table} MATCH %s"  # noqa: S608
    return RawSQL(sql, [expression])  # noqa: S611


class Bm25Rank(Func):
    """A row's bm25 score for an FTS5 query, negated so that higher is better;
    the row of the index is found by the indexed row's primary key."""

    template = (
        "COALESCE((SELECT -bm25(%(table)s, %(weights)s) FROM %(table)s"
        " WHERE %(table)s MATCH %(expressions)s), 0)"
    )
    output_field = FloatField()

    def __init__(
        self, expression: str, *, table: str = PAPER_FTS, weights: str = PAPER_FTS_WEIGHTS
    ) -> None:
        super().__init__(Value(expression), F("pk"), table=table, weights=weights)
        self.arg_joiner = f" AND {table}.rowid = "


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
    # Sections of the stored full texts, searched by `in=fulltext`.
    "catalog_fulltextsection_fts": """
        CREATE VIRTUAL TABLE catalog_fulltextsection_fts USING fts5(
            heading, text, content='catalog_fulltextsection', content_rowid='id',
            tokenize='porter unicode61 remove_diacritics 2'
        )""",
    "catalog_fulltextsection_fts_insert": """
        CREATE TRIGGER catalog_fulltextsection_fts_insert AFTER INSERT ON catalog_fulltextsection
        BEGIN
            INSERT INTO catalog_fulltextsection_fts(rowid, heading, text)
            VALUES (new.id, new.heading, new.text);
        END""",
    "catalog_fulltextsection_fts_delete": """
        CREATE TRIGGER catalog_fulltextsection_fts_delete AFTER DELETE ON catalog_fulltextsection
        BEGIN
            INSERT INTO catalog_fulltextsection_fts(
                catalog_fulltextsection_fts, rowid, heading, text
            ) VALUES ('delete', old.id, old.heading, old.text);
        END""",
    "catalog_fulltextsection_fts_update": """
        CREATE TRIGGER catalog_fulltextsection_fts_update AFTER UPDATE OF heading, text
        ON catalog_fulltextsection BEGIN
            INSERT INTO catalog_fulltextsection_fts(
                catalog_fulltextsection_fts, rowid, heading, text
            ) VALUES ('delete', old.id, old.heading, old.text);
            INSERT INTO catalog_fulltextsection_fts(rowid, heading, text)
            VALUES (new.id, new.heading, new.text);
        END""",
}
# Each FTS5 table and the schema entries that keep it: a table any of whose
# entries was missing is filled again from its rows.
FTS_TABLES = (PAPER_FTS, SECTION_FTS)


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
        for table in FTS_TABLES:
            if any(name.startswith(table) for name in missing):
                cursor.execute(f"INSERT INTO {table}({table}) VALUES ('rebuild')")  # noqa: S608
