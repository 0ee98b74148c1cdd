"""Benchmark of the metadata snapshot import against a raw COPY of the same rows.

    python -m bench.snapshot_import [--records 50000] [--workers N] [--reimport] [--catalog DB]

Writes a synthetic snapshot of realistic shape, imports it into a fresh
PostgreSQL database (created beside DATABASE_URL's, migrated, dropped
afterwards; with --catalog, a copy of a catalog already holding millions of
papers), and for comparison COPYs the same rows into a plain table and into
catalog_paper, whose generated tsvector and indexes bound any importer.
"""

import argparse
import datetime
import email.utils
import json
import os
import random
import resource
import tempfile
import time
from pathlib import Path

import environ
import psycopg
from psycopg import sql

from bench import database
from bench.corpus import FIRST_NAMES

# Beside the catalog benchmark's own database, so that two checkouts benchmarking
# on one server keep apart (bench.database.BENCH_DATABASE).
BENCH_DATABASE = database.BENCH_DATABASE + "_import"
CATEGORIES = [
    "cs.CL",
    "cs.LG",
    "cs.AI",
    "cs.CV",
    "cs.IR",
    "cs.RO",
    "cs.NE",
    "cs.SE",
    "cs.CR",
    "cs.DC",
    "stat.ML",
    "math.OC",
    "math.ST",
    "math.PR",
    "physics.comp-ph",
    "quant-ph",
    "eess.AS",
    "eess.IV",
    "q-bio.NC",
    "econ.EM",
    "hep-th",
    "hep-ph",
    "astro-ph.CO",
]
WORDS = [
    "model",
    "language",
    "reasoning",
    "training",
    "data",
    "learning",
    "neural",
    "network",
    "attention",
    "transformer",
    "graph",
    "optimal",
    "policy",
    "reward",
    "benchmark",
    "evaluation",
    "robust",
    "efficient",
    "sparse",
    "scaling",
    "inference",
    "representation",
    "generative",
    "diffusion",
    "retrieval",
    "agent",
    "theorem",
    "bound",
    "convergence",
    "estimator",
    "quantum",
    "field",
    "energy",
    "spectrum",
    "sample",
    "gradient",
    "loss",
    "token",
    "context",
    "memory",
    "vision",
    "speech",
]
LAST = [
    "Zhang",
    "Smith",
    "Garcia",
    "Müller",
    "Kim",
    "Nguyen",
    "Rossi",
    "Patel",
    "Ivanov",
    "Tanaka",
    "Silva",
    "Chen",
    "Brown",
]


def sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def synthetic_entry(rng: random.Random, n: int) -> dict:
    first_day = datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC) + datetime.timedelta(
        minutes=17 * n
    )
    versions = [
        {
            "version": f"v{v + 1}",
            "created": email.utils.format_datetime(first_day + datetime.timedelta(days=40 * v)),
        }
        for v in range(rng.choice((1, 1, 1, 2, 2, 3)))
    ]
    # Names drawn from a pool about as large as the record count, so authors repeat.
    authors = [
        [
            f"{rng.choice(LAST)}{rng.randrange(max(1, n // 4 + 50))}",
            f"{rng.choice(FIRST_NAMES)} {chr(65 + rng.randrange(26))}.",
            "",
        ]
        for _ in range(rng.randint(1, 9))
    ]
    title = sentence(rng, rng.randint(6, 14))
    abstract = "\n".join(sentence(rng, rng.randint(12, 25)) for _ in range(rng.randint(5, 9)))
    comment = rng.choice(
        ("", "12 pages, 4 figures", f"Code: https://github.com/lab{n % 997}/project{n}")
    )
    return {
        "id": f"{24 + n // 99999}{(n // 99999) % 12 + 1:02d}.{n % 99999 + 1:05d}",
        "submitter": " ".join(authors[0][1::-1]),
        "authors": ", ".join(f"{a[1]} {a[0]}" for a in authors),
        "title": title[: len(title) // 2] + "\n  " + title[len(title) // 2 :],
        "comments": comment or None,
        "journal-ref": None,
        "doi": f"10.1000/bench.{n}" if n % 5 == 0 else None,
        "report-no": None,
        "categories": " ".join(rng.sample(CATEGORIES, rng.randint(1, 3))),
        "license": "http://creativecommons.org/licenses/by/4.0/",
        "abstract": "  " + abstract + "\n",
        "versions": versions,
        "update_date": (first_day + datetime.timedelta(days=40 * (len(versions) - 1)))
        .date()
        .isoformat(),
        "authors_parsed": authors,
    }


def write_snapshot(path: Path, records: int) -> None:
    rng = random.Random(20240101)
    with path.open("w", encoding="utf-8") as out:
        for n in range(records):
            out.write(json.dumps(synthetic_entry(rng, n), ensure_ascii=False) + "\n")


def raw_copy(conninfo: str, path: Path, *, into_catalog: bool) -> float:
    """Seconds to read the file and COPY its rows in one statement, with no other work.

    Into a plain table of text columns, or into catalog_paper, whose generated
    search_document and indexes (holding whatever papers the database already
    has) any importer must pay for. Rolled back: the import stores the same
    papers afterwards.
    """
    with psycopg.connect(conninfo) as conn:
        if into_catalog:
            statement = (
                "COPY catalog_paper (arxiv_id, title, title_key, abstract, author_names, comment,"
                " doi, journal_ref, published_at, published_precision, updated_at, added_at,"
                " is_visible) FROM STDIN"
            )
        else:
            conn.execute(
                "CREATE TABLE bench_raw (arxiv_id text, title text, title_key text,"
                " abstract text, authors text, comments text, doi text, journal_ref text,"
                " published_at date, published_precision text, updated_at date, added_at date,"
                " is_visible boolean)"
            )
            statement = (
                "COPY bench_raw (arxiv_id, title, title_key, abstract, authors, comments, doi,"
                " journal_ref, published_at, published_precision, updated_at, added_at,"
                " is_visible) FROM STDIN"
            )
        started = time.perf_counter()
        with (
            conn.cursor() as cursor,
            cursor.copy(statement) as copy,
            path.open("rb") as lines,
        ):
            for line in lines:
                entry = json.loads(line)
                day = entry["update_date"]
                copy.write_row(
                    (
                        entry["id"],
                        entry["title"],
                        entry["title"].lower()[:300],
                        entry["abstract"],
                        entry["authors"],
                        entry["comments"] or "",
                        entry["doi"] or "",
                        entry["journal-ref"] or "",
                        day,
                        "day",
                        day,
                        day,
                        True,
                    )
                )
        seconds = time.perf_counter() - started
        conn.rollback()
        return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=50_000)
    parser.add_argument("--workers", type=int, help="import_snapshot's, by default its own")
    parser.add_argument(
        "--reimport", action="store_true", help="also time a second import of the same file"
    )
    parser.add_argument(
        "--catalog",
        metavar="DATABASE",
        help="import into a copy of this database (e.g. the catalog `make bench` built), so"
        " that every index already holds its papers, instead of into an empty one",
    )
    options = parser.parse_args()

    base = environ.Env.db_url_config(
        os.environ.get("DATABASE_URL", "postgres://root@127.0.0.1:5432/papershelf")
    )
    server = {k: base[k] for k in ("HOST", "PORT", "USER", "PASSWORD") if base.get(k)}
    admin_conninfo = psycopg.conninfo.make_conninfo(
        dbname="postgres",
        host=server.get("HOST"),
        port=server.get("PORT"),
        user=server.get("USER"),
        password=server.get("PASSWORD"),
    )
    bench_conninfo = psycopg.conninfo.make_conninfo(admin_conninfo, dbname=BENCH_DATABASE)
    user = f"{server['USER']}@" if server.get("USER") else ""
    os.environ["DATABASE_URL"] = (
        f"postgres://{user}{server.get('HOST', '')}:{server.get('PORT', 5432)}/{BENCH_DATABASE}"
    )
    os.environ.setdefault("DEBUG", "1")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

    with tempfile.TemporaryDirectory() as workdir:
        snapshot = Path(workdir) / "snapshot.jsonl"
        write_snapshot(snapshot, options.records)
        size_mb = snapshot.stat().st_size / 1e6
        with psycopg.connect(admin_conninfo, autocommit=True) as admin:
            scratch = sql.Identifier(BENCH_DATABASE)
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(scratch))
            if options.catalog:
                # A file-level copy: minutes for a few million papers, none of them re-indexed.
                template = sql.Identifier(options.catalog)
                admin.execute(sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(scratch, template))
            else:
                admin.execute(sql.SQL("CREATE DATABASE {}").format(scratch))
        try:
            import django
            from django.core.management import call_command
            from django.db import connections

            django.setup()
            call_command("migrate", verbosity=0)
            with psycopg.connect(bench_conninfo) as conn:
                (papers_before,) = conn.execute("SELECT count(*) FROM catalog_paper").fetchone()
            # The raw COPYs first, each rolled back, so that they meet the same
            # indexes the import meets.
            copy_seconds = raw_copy(bench_conninfo, snapshot, into_catalog=False)
            catalog_copy_seconds = raw_copy(bench_conninfo, snapshot, into_catalog=True)
            from ingest.pipeline import WORKERS
            from ingest.runs import import_snapshot

            workers = options.workers or WORKERS
            load_before = os.getloadavg()[0]
            rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            cpu_before = _cpu_seconds()
            started = time.perf_counter()
            run = import_snapshot(path=snapshot, workers=workers)
            import_seconds = time.perf_counter() - started
            cpu_seconds = _cpu_seconds() - cpu_before
            load_after = os.getloadavg()[0]
            rss_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            worker_rss_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
            if options.reimport:
                started = time.perf_counter()
                again = import_snapshot(path=snapshot, workers=workers)
                reimport_seconds = time.perf_counter() - started
            connections.close_all()
        finally:
            with psycopg.connect(admin_conninfo, autocommit=True) as admin:
                admin.execute(
                    sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
                        sql.Identifier(BENCH_DATABASE)
                    )
                )

    import_rate = options.records / import_seconds
    copy_rate = options.records / copy_seconds
    catalog_copy_rate = options.records / catalog_copy_seconds
    print(f"records:                 {options.records} ({size_mb:.0f} MB of JSON lines)")
    print(
        f"catalog before:          {papers_before:,} papers"
        + (f" (a copy of {options.catalog})" if options.catalog else "")
    )
    print(f"stored:                  {run.created} created, {run.skipped} skipped")
    print(
        f"import:                  {import_seconds:.1f} s, {import_rate:,.0f} records/s"
        f" ({workers} workers)"
    )
    print(
        f"  Python CPU:            {cpu_seconds:.1f} s"
        f" ({cpu_seconds / options.records * 1e6:.0f} us a record, all processes)"
    )
    if options.reimport:
        print(
            f"reimport, unchanged:     {reimport_seconds:.1f} s,"
            f" {options.records / reimport_seconds:,.0f} records/s ({again.unchanged} unchanged)"
        )
    print(f"raw COPY, plain table:   {copy_seconds:.1f} s, {copy_rate:,.0f} records/s")
    print(
        f"raw COPY, catalog_paper: {catalog_copy_seconds:.1f} s, {catalog_copy_rate:,.0f} records/s"
    )
    print(f"import / COPY into catalog_paper: {import_rate / catalog_copy_rate:.2f} (the target's)")
    print(f"import / COPY into plain table:   {import_rate / copy_rate:.2f}")
    workers_rss = f", workers {worker_rss_peak:.0f} MB each at most" if workers > 1 else ""
    print(
        f"peak RSS:                {rss_peak:.0f} MB (before the import: {rss_before:.0f} MB)"
        + workers_rss
    )
    print(f"load average:            {load_before:.1f} before, {load_after:.1f} after")
    print(f"machine:                 {os.cpu_count()} cores, {_memory_gb():.0f} GB memory")


def _cpu_seconds() -> float:
    """User and system CPU time of this process and its finished workers."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    workers = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + workers.ru_utime + workers.ru_stime


def _memory_gb() -> float:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1e9


if __name__ == "__main__":
    main()
