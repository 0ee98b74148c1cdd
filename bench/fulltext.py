"""Search inside papers at scale: N synthetic stored full texts, their storage,
their index, and the list's full-text search timed.

    python -m bench.fulltext [--papers 100000] [--requests 40] [--keep]

Builds a scratch PostgreSQL database beside DATABASE_URL's (FULLTEXT_BENCH_DATABASE,
papershelf_fulltext by default; dropped and created again, migrated) holding N
papers, each with a stored full text of realistic shape: 6 to 14 sections of 3
to 11 paragraphs of 60 to 120 words, about 42,000 characters a paper, as an
arXiv paper's body and appendix run. The words are drawn the way text has them:
stop words for close to half of them, the rest from a vocabulary of 40,000
words by Zipf's law, so a section's tsvector holds as many distinct lexemes as
a real one's. The words searched have known rates: "model" in nearly every
section, "distillation" in a few percent, "sparsemax" in a few dozen sections,
the phrase "knowledge distillation" among them.

Everything is streamed in with COPY: the papers, a pool of 200,000 paragraphs
and each section's heading and paragraphs from the pool (each paragraph used
about 40 times, in different sections, so every section is its own mix).
PostgreSQL parses each pool paragraph once with to_tsvector, and a section's
tsvector is its heading's and its paragraphs' joined with || (what
to_tsvector of the whole gives: the same lexemes, checked on a sample), written
into the stored column made a plain one of the same type for the load, and a
whole text's words (catalog_fulltext.search_document) are its sections'
joined the same way, checked on a sample too; parsing 5 GB of text again
would take the shared CPU half an hour. Sizes are what the
site's own columns and indexes take. The sections' table is UNLOGGED while
loading (the same size; the shared server is spared writing it twice) and the
GIN indexes are built after the load, as a backfill would; each step is timed.

Then each search is asked through Django's test client in-process (the whole
request, rendering included, no page cache), warmed up and timed REQUESTS
times; p50 and p95 are reported beside the list's target (25 ms), and the load
average, since other work on the machine slows every figure.
"""

import argparse
import datetime
import io
import os
import random
import time
from collections.abc import Iterator

import environ
import psycopg
from psycopg import sql

from bench.pages import time_page

BENCH_DATABASE = os.environ.get("FULLTEXT_BENCH_DATABASE", "papershelf_fulltext")
TARGET_MS = 25.0
# A section's paragraphs and a paper's sections, drawn uniformly in these ranges (inclusive).
PARAGRAPHS = (3, 11)
SECTIONS = (6, 14)
WORDS_PER_PARAGRAPH = (60, 120)
POOL_PARAGRAPHS = 200_000
VOCABULARY = 40_000
STOP_SHARE = 0.45
# Content words at fixed Zipf ranks, so that the searched words have known rates.
PLANTED_RANKS = {
    0: "model",
    1: "data",
    2: "training",
    3: "results",
    900: "distillation",
    901: "knowledge",
}
RARE_WORD = "sparsemax"
RARE_PARAGRAPHS = 1  # pool paragraphs holding it: about 40 sections
PHRASE = "knowledge distillation"
PHRASE_PARAGRAPHS = 60
HEADINGS = [
    "Introduction",
    "Related work",
    "Background",
    "Method",
    "Experiments",
    "Results",
    "Analysis",
    "Ablations",
    "Discussion",
    "Limitations",
    "Conclusion",
    "Appendix",
]
STOP_WORDS = (  # noqa: SIM905 - a line of words reads as one
    "the of and to in a is that for we on with as by this are be an it from at which"
    " our can or these their not each its has have than into when where also such"
).split()
SYLLABLES = (  # noqa: SIM905 - a line of syllables reads as one
    "ka ri to ne mu sa lo ve di ra pen tor lin gra mor sel tic ver nal qua fen dro bis"
    " lum par cel zo xi ther ion ment ab con"
).split()


def vocabulary(rng: random.Random) -> list[str]:
    words: set[str] = set()
    listed: list[str] = []
    while len(listed) < VOCABULARY:
        word = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))
        if word not in words and word not in PLANTED_RANKS.values():
            words.add(word)
            listed.append(word)
    for rank, word in PLANTED_RANKS.items():
        listed[rank] = word
    return listed


def paragraph_pool(rng: random.Random) -> list[str]:
    words = vocabulary(rng)
    cumulative = []
    total = 0.0
    for rank in range(len(words)):
        total += 1 / (rank + 1) ** 1.07
        cumulative.append(total)
    pool = []
    for _ in range(POOL_PARAGRAPHS):
        length = rng.randint(*WORDS_PER_PARAGRAPH)
        content = rng.choices(words, cum_weights=cumulative, k=length)
        tokens = [rng.choice(STOP_WORDS) if rng.random() < STOP_SHARE else word for word in content]
        for end in range(rng.randint(8, 16), len(tokens), rng.randint(12, 20)):
            tokens[end - 1] += "."
        pool.append(" ".join(tokens).capitalize() + ".")
    for index in rng.sample(range(POOL_PARAGRAPHS), PHRASE_PARAGRAPHS):
        pool[index] = f"We apply {PHRASE} to the student. " + pool[index]
    for index in rng.sample(range(POOL_PARAGRAPHS), RARE_PARAGRAPHS):
        pool[index] = f"The {RARE_WORD} activation gives sparse outputs. " + pool[index]
    return pool


def copy_text(value: str) -> str:
    """A value as COPY's text format writes it."""
    return value.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def paper_rows(count: int, pool: list[str], rng: random.Random) -> Iterator[str]:
    start = datetime.datetime(2023, 1, 1, tzinfo=datetime.UTC)
    for n in range(count):
        day = (start + datetime.timedelta(minutes=7 * n)).isoformat()
        title = " ".join(rng.choice(pool).split()[:10]).rstrip(".")
        abstract = " ".join(rng.choice(pool) for _ in range(2))
        yield (
            "\t".join(
                [
                    str(n + 1),
                    f"{23 + n // 99_999}{n // 99_999 % 12 + 1:02d}.{n % 99_999 + 1:05d}",
                    "1",
                    copy_text(title),
                    copy_text(title.lower()[:300]),
                    copy_text(abstract),
                    "Ada Lovelace, Alan Turing",
                    "",
                    "",
                    "",
                    day,
                    "day",
                    day,
                    day,
                    "t",
                ]
            )
            + "\n"
        )


def section_rows(count: int, rng: random.Random) -> Iterator[str]:
    """Each section's COPY line: its paper, place, heading and pool paragraphs, in order."""
    for paper in range(1, count + 1):
        for position in range(rng.randint(*SECTIONS)):
            paragraphs = [rng.randrange(POOL_PARAGRAPHS) for _ in range(rng.randint(*PARAGRAPHS))]
            heading = f"{position + 1} {HEADINGS[rng.randrange(len(HEADINGS))]}"
            yield f"{paper}\t{position}\t{heading}\t{{{','.join(map(str, paragraphs))}}}\n"


def stream(cursor: psycopg.Cursor, statement: str, lines: Iterator[str]) -> None:
    """COPY lines in blocks of about a megabyte."""
    with cursor.copy(statement) as copy:
        block = io.StringIO()
        for line in lines:
            block.write(line)
            if block.tell() > 1_000_000:
                copy.write(block.getvalue())
                block = io.StringIO()
        copy.write(block.getvalue())


def build(conninfo: str, papers: int) -> dict[str, float]:
    rng = random.Random(29)
    started = time.perf_counter()
    pool = paragraph_pool(rng)
    figures: dict[str, float] = {"pool_seconds": time.perf_counter() - started}
    with psycopg.connect(conninfo, autocommit=True) as conn, conn.cursor() as cursor:
        started = time.perf_counter()
        stream(
            cursor,
            "COPY catalog_paper (id, arxiv_id, version, title, title_key, abstract,"
            " author_names, comment, doi, journal_ref, published_at, published_precision,"
            " updated_at, added_at, is_visible) FROM STDIN",
            paper_rows(papers, pool, rng),
        )
        figures["papers_seconds"] = time.perf_counter() - started

        # Each pool paragraph parsed once by PostgreSQL's own to_tsvector.
        started = time.perf_counter()
        cursor.execute("CREATE UNLOGGED TABLE bench_paragraph_text (id int, text text)")
        stream(
            cursor,
            "COPY bench_paragraph_text (id, text) FROM STDIN",
            (f"{n}\t{copy_text(text)}\n" for n, text in enumerate(pool)),
        )
        cursor.execute(
            "CREATE UNLOGGED TABLE bench_paragraph AS SELECT id, text,"
            " setweight(to_tsvector('english', text), 'D') AS vector FROM bench_paragraph_text"
        )
        cursor.execute("ALTER TABLE bench_paragraph ADD PRIMARY KEY (id)")
        figures["paragraphs_seconds"] = time.perf_counter() - started

        # Every section: its heading and its pool paragraphs.
        started = time.perf_counter()
        cursor.execute(
            "CREATE UNLOGGED TABLE bench_section_plan"
            " (paper_id bigint, position int, heading text, paragraphs int[])"
        )
        stream(
            cursor,
            "COPY bench_section_plan (paper_id, position, heading, paragraphs) FROM STDIN",
            section_rows(papers, rng),
        )
        figures["plan_seconds"] = time.perf_counter() - started

        # The sections, their tsvector joined from their paragraphs' with ||, which
        # is what to_tsvector of the whole would give: the stored column is then
        # written as given, as a plain column of the same type (storage alike).
        started = time.perf_counter()
        cursor.execute("DROP INDEX fulltext_section_search")
        cursor.execute("ALTER TABLE catalog_fulltextsection SET UNLOGGED")
        cursor.execute(
            "ALTER TABLE catalog_fulltextsection ALTER COLUMN search_document DROP EXPRESSION"
        )
        cursor.execute(
            "CREATE AGGREGATE bench_tsvector_cat(tsvector)"
            " (SFUNC = tsvector_concat, STYPE = tsvector, INITCOND = '')"
        )
        cursor.execute(
            "INSERT INTO catalog_fulltextsection"
            " (paper_id, position, heading, level, text, search_document)"
            " SELECT plan.paper_id, plan.position, plan.heading, 1, joined.text,"
            " setweight(to_tsvector('english', plan.heading), 'A') || joined.vector"
            " FROM bench_section_plan plan CROSS JOIN LATERAL ("
            "  SELECT string_agg(p.text, E'\\n\\n' ORDER BY u.n) AS text,"
            "  bench_tsvector_cat(p.vector ORDER BY u.n) AS vector"
            "  FROM unnest(plan.paragraphs) WITH ORDINALITY AS u(id, n)"
            "  JOIN bench_paragraph p ON p.id = u.id"
            " ) AS joined"
        )
        figures["sections_seconds"] = time.perf_counter() - started
        # Each paper's row, the words of its whole text joined from its sections'
        # (what catalog.search.index_texts stores, checked on a sample below).
        started = time.perf_counter()
        cursor.execute("DROP INDEX fulltext_search")
        cursor.execute(
            "INSERT INTO catalog_fulltext (paper_id, version, source, status, error,"
            " characters, fetched_at, search_document)"
            " SELECT paper_id, 1, 'html', 'stored', '', sum(length(text)), now(),"
            " setweight(bench_tsvector_cat(search_document ORDER BY position), 'D')"
            " FROM catalog_fulltextsection GROUP BY paper_id"
        )
        figures["fulltext_rows_seconds"] = time.perf_counter() - started
        started = time.perf_counter()
        cursor.execute("SET maintenance_work_mem = '512MB'")
        cursor.execute(
            "CREATE INDEX fulltext_section_search ON catalog_fulltextsection"
            " USING gin (search_document)"
        )
        figures["gin_seconds"] = time.perf_counter() - started
        started = time.perf_counter()
        cursor.execute(
            "CREATE INDEX fulltext_search ON catalog_fulltext USING gin (search_document)"
        )
        figures["text_gin_seconds"] = time.perf_counter() - started
        # How close the joined tsvectors are to the generated column's own, on a sample.
        row = cursor.execute(
            "SELECT count(*) FILTER (WHERE tsvector_to_array(search_document)"
            "  = tsvector_to_array(whole)),"
            " count(*) FILTER (WHERE search_document = whole), count(*)"
            " FROM (SELECT search_document, setweight(to_tsvector('english', heading), 'A')"
            "  || setweight(to_tsvector('english', text), 'D') AS whole"
            "  FROM catalog_fulltextsection ORDER BY id LIMIT 500) AS sample"
        ).fetchone()
        figures["same_lexemes"], figures["same_vector"], figures["sampled"] = row or (0, 0, 0)
        row = cursor.execute(
            "SELECT count(*) FILTER (WHERE tsvector_to_array(search_document)"
            "  = tsvector_to_array(whole)), count(*)"
            " FROM (SELECT search_document, (SELECT to_tsvector('english',"
            "  string_agg(heading || E'\\n\\n' || text, E'\\n\\n' ORDER BY position))"
            "  FROM catalog_fulltextsection s WHERE s.paper_id = f.paper_id) AS whole"
            "  FROM catalog_fulltext f ORDER BY paper_id LIMIT 50) AS sample"
        ).fetchone()
        figures["texts_same_lexemes"], figures["texts_sampled"] = row or (0, 0)
        for table in ("bench_paragraph_text", "bench_paragraph", "bench_section_plan"):
            cursor.execute(f"DROP TABLE {table}")
        cursor.execute("DROP AGGREGATE bench_tsvector_cat(tsvector)")
        for table in ("catalog_paper", "catalog_fulltextsection", "catalog_fulltext"):
            cursor.execute(f"VACUUM ANALYZE {table}")
    return figures


def sizes(conninfo: str) -> dict[str, int]:
    with psycopg.connect(conninfo) as conn:
        found: dict[str, int] = {}
        for name, query in {
            "sections_heap": "SELECT pg_relation_size('catalog_fulltextsection')",
            "sections_toast": "SELECT pg_relation_size(reltoastrelid) FROM pg_class"
            " WHERE relname = 'catalog_fulltextsection'",
            "sections_total": "SELECT pg_total_relation_size('catalog_fulltextsection')",
            "gin_index": "SELECT pg_relation_size('fulltext_section_search')",
            "text_gin_index": "SELECT pg_relation_size('fulltext_search')",
            "text_tsvectors": "SELECT sum(pg_column_size(search_document)) FROM catalog_fulltext",
            "sections_unique_index": "SELECT pg_relation_size('fulltext_section_once')",
            "tsvectors": "SELECT sum(pg_column_size(search_document)) FROM catalog_fulltextsection",
            "texts": "SELECT sum(pg_column_size(text)) FROM catalog_fulltextsection",
            "fulltext_rows": "SELECT pg_total_relation_size('catalog_fulltext')",
            "sections": "SELECT count(*) FROM catalog_fulltextsection",
            "papers": "SELECT count(*) FROM catalog_fulltext",
            "characters": "SELECT sum(characters) FROM catalog_fulltext",
        }.items():
            row = conn.execute(query).fetchone()
            found[name] = int(row[0] or 0) if row else 0
        for word in ("model", "distillation", RARE_WORD):
            row = conn.execute(
                "SELECT count(*), count(DISTINCT paper_id) FROM catalog_fulltextsection"
                " WHERE search_document @@ to_tsquery('english', %s)",
                [word],
            ).fetchone()
            found[f"sections:{word}"], found[f"papers:{word}"] = row if row else (0, 0)
    return found


SEARCHES = [
    ("common word (model)", "/?q=model&in=fulltext"),
    ("word in a few % of sections (distillation)", "/?q=distillation&in=fulltext"),
    (f"rare word ({RARE_WORD})", f"/?q={RARE_WORD}&in=fulltext"),
    (f'phrase ("{PHRASE}")', f'/?q="{PHRASE.replace(" ", "+")}"&in=fulltext'),
    ("two words (distillation training)", "/?q=distillation+training&in=fulltext"),
    ("common word, newest first", "/?q=model&in=fulltext&sort=newest"),
    ("API, distillation", "/api/v1/papers?q=distillation&in=fulltext"),
    ("without in=fulltext: distillation", "/?q=distillation"),
]


def time_searches(requests: int) -> list[tuple[str, float, float, int]]:
    """(label, p50 ms, p95 ms, queries) of each search, in this process's Django."""
    import django

    django.setup()
    from django.test import Client

    client = Client()
    results = []
    for label, path in SEARCHES:
        results.append((label, *time_page(client, path, requests=requests)))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--keep", action="store_true", help="keep the database afterwards")
    options = parser.parse_args()

    base = environ.Env.db_url_config(
        os.environ.get("DATABASE_URL", "postgres://root@127.0.0.1:5432/papershelf")
    )
    server = {k: base[k] for k in ("HOST", "PORT", "USER", "PASSWORD") if base.get(k)}
    admin = psycopg.conninfo.make_conninfo(
        dbname="postgres",
        host=server.get("HOST"),
        port=server.get("PORT"),
        user=server.get("USER"),
        password=server.get("PASSWORD"),
    )
    conninfo = psycopg.conninfo.make_conninfo(admin, dbname=BENCH_DATABASE)
    user = f"{server['USER']}@" if server.get("USER") else ""
    os.environ.update(
        {
            "DATABASE_URL": f"postgres://{user}{server.get('HOST', '')}:"
            f"{server.get('PORT', 5432)}/{BENCH_DATABASE}",
            "DEBUG": "0",
            "SECRET_KEY": "benchmark-only-secret-key",
            "ALLOWED_HOSTS": "testserver",
            "SECURE_SSL_REDIRECT": "0",
            "LOG_LEVEL": "WARNING",
            "RATELIMIT_ENABLE": "0",
            # The view's own time: no shared page or catalog cache.
            "REDIS_URL": "",
            "CATALOG_CACHE_URL": "",
            "DJANGO_SETTINGS_MODULE": "config.settings",
        }
    )
    with psycopg.connect(admin, autocommit=True) as conn:
        name = sql.Identifier(BENCH_DATABASE)
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(name))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(name))
    try:
        import django
        from django.core.management import call_command

        django.setup()
        call_command("migrate", verbosity=0)
        call_command("collectstatic", "--noinput", verbosity=0)
        from django.db import connections

        connections.close_all()
        started = time.perf_counter()
        built = build(conninfo, options.papers)
        build_seconds = time.perf_counter() - started
        measured = sizes(conninfo)
        timings = time_searches(options.requests) if options.requests else []
    finally:
        if not options.keep:
            from django.db import connections

            connections.close_all()
            with psycopg.connect(admin, autocommit=True) as conn:
                name = sql.Identifier(BENCH_DATABASE)
                conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(name))
    report(options.papers, built, build_seconds, measured, timings)


def report(
    papers: int,
    built: dict[str, float],
    build_seconds: float,
    measured: dict[str, int],
    timings: list[tuple[str, float, float, int]],
) -> None:
    mb = 1024 * 1024
    stored = measured["papers"] or 1
    print(f"{papers:,} papers, {measured['sections']:,} sections,")
    characters = measured["characters"]
    print(f"{characters / 1e9:.2f} G characters ({characters / stored:,.0f} a paper)")
    print(
        f"build {build_seconds:.0f} s: paragraph pool {built['pool_seconds']:.0f} s, papers"
        f" {built['papers_seconds']:.0f} s, pool's tsvectors {built['paragraphs_seconds']:.0f} s,"
        f" sections' plan {built['plan_seconds']:.0f} s, sections {built['sections_seconds']:.0f}"
        f" s, full text rows {built['fulltext_rows_seconds']:.0f} s, sections' GIN index"
        f" {built['gin_seconds']:.0f} s, texts' GIN index {built['text_gin_seconds']:.0f} s"
    )
    print(
        f"joined tsvectors against to_tsvector of the whole section, {built['sampled']:.0f}"
        f" sampled: same lexemes in {built['same_lexemes']:.0f}, same positions too in"
        f" {built['same_vector']:.0f}"
    )
    print(
        f"whole texts' joined tsvectors against to_tsvector of the whole text,"
        f" {built['texts_sampled']:.0f} sampled: same lexemes in {built['texts_same_lexemes']:.0f}"
    )
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    print()
    print("| Storage | Total | A paper |")
    print("|---|---:|---:|")
    for label, key in (
        ("sections, all (heap, TOAST, indexes)", "sections_total"),
        ("  text as stored (compressed)", "texts"),
        ("  tsvectors as stored", "tsvectors"),
        ("  GIN index", "gin_index"),
        ("  (paper, position) index", "sections_unique_index"),
        ("full text rows, all (a paper's, with its whole text's words)", "fulltext_rows"),
        ("  the whole texts' tsvectors", "text_tsvectors"),
        ("  their GIN index", "text_gin_index"),
    ):
        value = measured[key]
        print(f"| {label} | {value / mb:,.0f} MB | {value / stored / 1024:,.1f} kB |")
    print()
    for word in ("model", "distillation", RARE_WORD):
        print(
            f"{word}: {measured[f'sections:{word}']:,} sections of"
            f" {measured[f'papers:{word}']:,} papers"
        )
    print()
    print(f"| Search | p50 | p95 | queries | target p95 {TARGET_MS:.0f} ms |")
    print("|---|---:|---:|---:|---|")
    for label, p50, p95, queries in timings:
        verdict = "met" if p95 <= TARGET_MS else "**missed**"
        print(f"| {label} | {p50:.1f} ms | {p95:.1f} ms | {queries} | {verdict} |")


if __name__ == "__main__":
    main()
