"""What the list's hybrid search costs at scale: the words' matches and the
papers nearest in meaning, the search box's suggestions and "did you mean".

    python -m bench.hybrid --papers 100000 [--requests 20] [--keep]

Builds the synthetic catalog of bench/corpus.py in its own database
(BENCH_DATABASE, by default papershelf_hybrid, beside DATABASE_URL's), fits
the tf-idf + SVD model on it and stores every paper's vector and neighbours
(`manage.py build_vectors`, as a worker does nightly, timed), then asks each
page below in this process, without page or catalog cache, and reports its
median and 95th percentile time and its queries. The corpus's words are the
demo's, drawn by Zipf's law, so a search meets the selectivities it meets on
arXiv; its authors are drawn from a pool of generated names.
"""

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import psycopg
from psycopg import sql

os.environ.setdefault("BENCH_DATABASE", "papershelf_hybrid")

# Imported after: bench.database reads BENCH_DATABASE as it is imported.
from bench import corpus, database
from bench.pages import time_page

SEARCHES = [
    ("hybrid: common word (reasoning)", "/?q=reasoning"),
    ("hybrid: two words (chain of thought length)", "/?q=chain+of+thought+length"),
    ("hybrid: rare pair (multi-agent debate)", "/?q=multi-agent+debate"),
    ("hybrid: phrase and exclusion", '/?q="policy+optimization"+-reward'),
    ("hybrid: with a filter (a category)", "/?q=verifier&category=cs.CL"),
    ("hybrid: no word matches (misspelt)", "/?q=reinforcment+learnin"),
    ("lexical alone: common word, newest first", "/?q=reasoning&sort=newest"),
    ("lexical alone: two words, newest first", "/?q=chain+of+thought+length&sort=newest"),
    ("suggestions as typed: 're'", "/search/suggestions/?q=re"),
    ("suggestions as typed: 'reinf'", "/search/suggestions/?q=reinf"),
    ("suggestions as typed: an author's name", "/search/suggestions/?q={author}"),
]


def time_pages(requests: int) -> list[tuple[str, float, float, int]]:
    """(label, p50 ms, p95 ms, queries) of each page, in this process's Django."""
    import django

    django.setup()
    from django.core.management import call_command
    from django.test import Client

    from catalog.models import Author

    call_command("collectstatic", "--noinput", verbosity=0)  # pages name their hashed files

    # A real author's surname, as a reader would start typing it.
    author = Author.objects.order_by("pk").values_list("name", flat=True)[500].split()[-1][:5]
    client = Client()
    results = []
    for label, path in SEARCHES:
        path = path.format(author=author.lower())
        results.append((label, *time_page(client, path, requests=requests)))
    return results


def time_neighbours(requests: int) -> tuple[float, float]:
    """p50 and p95 ms of the nearest papers alone: the query embedded, the index searched."""
    from catalog.search import papers_near_query

    timings = []
    for _ in range(requests):
        started = time.perf_counter()
        assert papers_near_query("chain of thought length")
        timings.append((time.perf_counter() - started) * 1000)
    return statistics.median(timings), statistics.quantiles(timings, n=20)[18]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--keep", action="store_true", help="keep the database afterwards")
    options = parser.parse_args()

    vectors_dir = Path(tempfile.mkdtemp(prefix="bench-hybrid-"))
    os.environ.update(VECTOR_DIR=str(vectors_dir), EMBEDDING_BACKEND="tfidf")
    conninfo = database.create()
    try:
        database.migrate()
        corpus.load(conninfo, options.papers)
        started = time.perf_counter()
        database.manage("build_vectors", "--verbosity", "0")
        vectors_seconds = time.perf_counter() - started
        # The view's own time: no shared page or catalog cache.
        os.environ.update(database.django_env(REDIS_URL="", CATALOG_CACHE_URL=""))
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
        pages = time_pages(options.requests)
        neighbours = time_neighbours(options.requests)
        from django.db import connections

        connections.close_all()
    finally:
        if not options.keep:
            with psycopg.connect(database.server_conninfo("postgres"), autocommit=True) as admin:
                name = sql.Identifier(database.BENCH_DATABASE)
                admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(name))
    print(f"{options.papers:,} papers; vectors and neighbours built in {vectors_seconds:.0f} s")
    print(f"nearest papers alone: p50 {neighbours[0]:.1f} ms, p95 {neighbours[1]:.1f} ms")
    print(f"{'page':58} {'p50 ms':>8} {'p95 ms':>8} {'queries':>8}")
    for label, p50, p95, queries in pages:
        print(f"{label:58} {p50:8.1f} {p95:8.1f} {queries:8d}")


if __name__ == "__main__":
    main()
