"""The catalog benchmark behind `make bench`: build, measure, write BENCHMARKS.md.

    python -m bench.run --papers 1000000

1. Builds the synthetic catalog in its own database (bench.corpus).
2. Times every public page in-process, once with no cache and once with the
   Redis catalog cache (bench.measure).
3. Serves the site with gunicorn and loads, with wrk at concurrency 16, a
   plain Django hello-world (bench.plain, on a server of its own), the same
   view behind the site's middleware, `/` anonymous and as a logged-in
   reader, and that reader's feed and For you, with and without the cache,
   in --rounds interleaved rounds.
4. Runs the snapshot import benchmark (bench.snapshot_import), which writes
   its own section of BENCHMARKS.md.
5. Rewrites the "## Catalog at scale" section of BENCHMARKS.md and prints it.
"""

import argparse
import datetime
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import redis

from bench import corpus, database

BENCHMARKS = database.PROJECT / "BENCHMARKS.md"
SECTION = "## Catalog at scale"
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/8")
CONCURRENCY = 16
LOAD_SECONDS = 20


def measure(requests: int, *, cache_url: str, output: Path) -> dict:
    if cache_url:
        redis.Redis.from_url(cache_url).flushdb()
    # Sessions stay in Redis, as deployed, whether or not the catalog cache is on.
    env = database.django_env(CATALOG_CACHE_URL=cache_url, REDIS_URL=REDIS_URL)
    subprocess.run(
        [sys.executable, "-m", "bench.measure", "--requests", str(requests), "--output", output],
        cwd=database.PROJECT,
        env=env,
        check=True,
    )
    return json.loads(output.read_text())


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def reader_cookie(*, env: dict) -> str:
    """A session cookie of reader 1 (30 subscriptions, 200 saved papers)."""
    result = subprocess.run(
        [sys.executable, "-m", "bench.session"],
        cwd=database.PROJECT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.strip()


# What wrk loads, in this order each round: (name, server, path, as reader 1).
LOADS = (
    ("plain Django hello-world", "plain", "/hello/", False),
    ("hello-world view, the site's middleware", "site", "/hello/", False),
    ("`/`, anonymous", "site", "/", False),
    ("`/`, reader 1", "site", "/", True),
    ("`/feed/`, reader 1", "site", "/feed/", True),
    ("For you, reader 1", "site", "/feed/for-you/", True),
)
YARDSTICK = LOADS[0][0]


def serve(application: str, *, env: dict, workers: int) -> tuple[subprocess.Popen, str]:
    """gunicorn serving the WSGI application on a free port, and its base address."""
    port = free_port()
    server = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "gunicorn"),
            application,
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(workers),
            "--log-level",
            "warning",
        ],
        cwd=database.PROJECT,
        env=env,
    )
    return server, f"http://127.0.0.1:{port}"


def warm(url: str, *, headers: dict, workers: int) -> None:
    """Wait for the server, then have every worker answer the page a few times."""
    request = urllib.request.Request(url, headers=headers)  # noqa: S310 - http on 127.0.0.1
    for _ in range(100):
        try:
            for _ in range(3 * workers):
                urllib.request.urlopen(request, timeout=30).read()  # noqa: S310
            return
        except OSError:
            time.sleep(0.3)


def throughput(*, cache_url: str, rounds: int = 1, seconds: int = LOAD_SECONDS) -> dict:
    """Requests a second through gunicorn, wrk at CONCURRENCY: a plain Django
    hello-world (bench.plain) as the yardstick, the same view behind the
    site's middleware (bench.hello), `/` for an anonymous reader, and `/`,
    the personal feed and For you for reader 1. Each round loads every page
    once, one after another, so the machine's other work falls on all of them
    alike; each figure is the median round's. With a cache_url, Redis holds
    what production keeps there (pages, sessions); without, there is none."""
    if cache_url:
        redis.Redis.from_url(cache_url).flushdb()
    workers = 2 * (os.cpu_count() or 1) + 1
    env = database.django_env(CATALOG_CACHE_URL=cache_url, REDIS_URL=cache_url)
    servers = {
        "site": serve("bench.hello:application", env=env, workers=workers),
        "plain": serve("bench.plain:application", env=env, workers=workers),
    }
    cookie = reader_cookie(env=env)
    runs: dict[str, list[dict]] = {name: [] for name, *_ in LOADS}
    try:
        for _name, server, path, as_reader in LOADS:
            headers = {"Cookie": cookie} if as_reader else {}
            warm(servers[server][1] + path, headers=headers, workers=workers)
        for _ in range(rounds):
            for name, server, path, as_reader in LOADS:
                header = ["-H", f"Cookie: {cookie}"] if as_reader else []
                wrk = ["wrk", "-t2", f"-c{CONCURRENCY}", f"-d{seconds}s", "--latency", *header]
                result = subprocess.run(
                    [*wrk, servers[server][1] + path],
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout
                runs[name].append(wrk_figures(result, workers=workers))
    finally:
        for server, _base in servers.values():
            server.terminate()
            server.wait(timeout=30)
    loads = {}
    for name, results in runs.items():
        ranked = sorted(results, key=lambda each: each["requests_per_second"])
        loads[name] = {**ranked[len(ranked) // 2], "rounds": len(ranked)}
    return loads


def wrk_figures(result: str, *, workers: int) -> dict:
    errors = re.search(r"Socket errors: (.*)", result)
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", result)
    return {
        "workers": workers,
        "requests_per_second": float(re.search(r"Requests/sec:\s+([\d.]+)", result).group(1)),
        "p50": re.search(r"(?m)^\s+50%\s+(\S+)", result).group(1),
        "p99": re.search(r"(?m)^\s+99%\s+(\S+)", result).group(1),
        "errors": (errors.group(1) if errors else "none")
        + (f"; {non_2xx.group(1)} non-2xx" if non_2xx else ""),
    }


def snapshot_import() -> str:
    """Run the snapshot import benchmark; its figures, as it prints them."""
    if not (database.PROJECT / "bench" / "snapshot_import.py").exists():
        return ""
    result = subprocess.run(
        [sys.executable, "-m", "bench.snapshot_import"],
        cwd=database.PROJECT,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode:
        # Its figures are missing from the report, which says why; the rest stands.
        print(result.stderr, file=sys.stderr)
        return (
            f"failed (exit status {result.returncode}): {result.stderr.strip().splitlines()[-1:]}"
        )
    print(result.stdout)
    return result.stdout.strip()


def machine() -> str:
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    with database.psycopg.connect(database.server_conninfo("postgres")) as conn:
        server = conn.execute("SHOW server_version").fetchone()[0]
        shared = conn.execute("SHOW shared_buffers").fetchone()[0]
    return (
        f"{os.cpu_count()} cores, {memory:.0f} GB memory, PostgreSQL {server}"
        f" (shared_buffers {shared}, otherwise as installed); load average at the end {load}"
    )


def verdict(value: float, target: float) -> str:
    return "met" if value <= target else "**missed**"


def report(
    *,
    papers: int,
    rows: dict,
    load_seconds: float,
    plain: dict,
    cached: dict,
    loads: dict,
    snapshot: dict,
    rounds: int,
    seconds: int,
) -> str:
    lines = [
        SECTION,
        "",
        f"Written by `make bench` (`python -m bench.run --papers {papers}`) on"
        f" {datetime.date.today().isoformat()}. N = {papers:,} papers; {machine()}.",
        "",
        f"The synthetic catalog ({rows['catalog_paperauthor']:,} author links to"
        f" {rows['catalog_author']:,} authors, {rows['catalog_paper_categories']:,} category"
        f" links over {rows['catalog_category']} categories, {rows['catalog_papertag']:,} tag"
        f" links over {rows['catalog_tag']} tags, {rows['catalog_codelink']:,} code links,"
        f" {rows['catalog_summary']:,} summaries, {rows['auth_user']:,} readers with"
        f" {rows['accounts_subscription']:,} subscriptions and"
        f" {rows.get('catalog_readersignal', 0):,} synthetic trending signals) "
        + (
            f"loaded by COPY in {load_seconds / 60:.1f} minutes, indexes and VACUUM ANALYZE"
            " included."
            if load_seconds
            else "built by an earlier run."
        ),
        "",
        "Server time is measured in-process around Django's test client (middleware, queries"
        f" and rendering), {plain['requests']} requests per page after warm-up, DEBUG off."
        " *No cache*: the catalog cache is off, every request runs its queries. *Cached*: the"
        " Redis catalog cache, as deployed: an anonymous reader gets the stored page, reader 1"
        " (logged in, 30 subscriptions, 200 saved papers) the page logged-in readers share with"
        " their own parts filled in; the personal feed and For you are the reader's own"
        " entries (one per reader). Queries are those of one request, for the page's reader"
        " (anonymous but for the personal feed and For you) and for reader 1; sessions are"
        " read from Redis in both modes, as deployed.",
        "",
        "| page | URL | no cache p50 / p95 (ms) | cached p50 / p95 (ms)"
        " | reader 1, no cache p50 / p95 (ms) | reader 1, cached p50 / p95 (ms)"
        " | queries, no cache (reader 1) | queries, cached (reader 1) | target p95"
        " | no cache | cached | reader 1, no cache | reader 1, cached |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    cached_by_label = {t["label"]: t for t in cached["timings"]}
    worst_queries = 0
    for timing in plain["timings"]:
        hit = cached_by_label[timing["label"]]
        worst_queries = max(worst_queries, timing["queries"], timing["reader_queries"])
        target = timing["target_ms"]
        lines.append(
            f"| {timing['label']} | `{timing['path']}` | {timing['p50_ms']:.1f} /"
            f" {timing['p95_ms']:.1f} | {hit['p50_ms']:.1f} / {hit['p95_ms']:.1f} |"
            f" {timing['reader_p50_ms']:.1f} / {timing['reader_p95_ms']:.1f} |"
            f" {hit['reader_p50_ms']:.1f} / {hit['reader_p95_ms']:.1f} |"
            f" {timing['queries']} ({timing['reader_queries']}) |"
            f" {hit['queries']} ({hit['reader_queries']}) | {target:.0f} ms |"
            f" {verdict(timing['p95_ms'], target)} | {verdict(hit['p95_ms'], target)} |"
            f" {verdict(timing['reader_p95_ms'], target)} |"
            f" {verdict(hit['reader_p95_ms'], target)} |"
        )
    deep = {t["label"]: t["p95_ms"] for t in plain["timings"]}
    lines += [
        "",
        f"Deep pages: page 5,000 p95 is {deep['page 5,000'] / deep['page 1']:.1f}x page 1's"
        " without the cache (target: at most 2x).",
        "",
        f"Throughput through gunicorn ({loads['Redis']['`/`, anonymous']['workers']} sync"
        f" workers each), wrk with {CONCURRENCY} connections for {seconds} s a load, in"
        f" {rounds} rounds, each loading every page once in turn; the median round's figures."
        " The yardstick is a plain Django hello-world (`bench/plain.py`: `startproject`'s"
        " middleware, none of the site's settings) on a server of its own beside the site's;"
        " then the same view behind the site's middleware, `/` anonymous, and `/`, the"
        " personal feed and For you for reader 1 (sessions and pages in Redis when there is a"
        " cache, the page logged-in readers share with reader 1's parts filled in, the feed"
        " and For you reader 1's own entries) (targets, with the cache: reader 1's `/` at"
        " least 1/4 of the plain hello-world, their feed and For you at least 1/6, anonymous"
        " `/` at least 1/3; no errors):",
        "",
        "| catalog cache | page | requests/s | of hello-world | latency p50 | latency p99"
        " | errors |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    lines += throughput_rows(loads)
    if snapshot:
        lines += [
            "",
            "Snapshot import as `bench/snapshot_import.py` prints it (more in its own section):",
            "",
            "```",
            snapshot,
            "```",
        ]
    lines += ["", f"Most SQL queries on one page: {worst_queries} (target: 8)."]
    return "\n".join(lines) + "\n"


def throughput_rows(loads: dict) -> list[str]:
    """The throughput table's rows: each page's requests a second against hello-world's."""
    rows = []
    for cache_name, pages in loads.items():
        hello = pages[YARDSTICK]["requests_per_second"]
        for name, result in pages.items():
            rows.append(
                f"| {cache_name} | {name} | {result['requests_per_second']:.0f} |"
                f" 1/{hello / result['requests_per_second']:.1f} | {result['p50']} |"
                f" {result['p99']} | {result['errors']} |"
            )
    return rows


def write_section(section: str) -> None:
    """Replace this benchmark's section of BENCHMARKS.md, keeping every other section."""
    text = BENCHMARKS.read_text(encoding="utf-8") if BENCHMARKS.exists() else "# Benchmarks\n"
    parts = re.split(r"(?m)^(?=## )", text)
    kept = [part for part in parts if not part.startswith(SECTION)]
    head, rest = kept[0], kept[1:]
    BENCHMARKS.write_text(
        head.rstrip("\n") + "\n\n" + section + "".join("\n" + p.rstrip("\n") + "\n" for p in rest),
        encoding="utf-8",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=1_000_000)
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument(
        "--reuse-corpus",
        action="store_true",
        help="measure the catalog an earlier run built instead of building it again",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="load every page this many times, in turns, and report the median round",
    )
    parser.add_argument("--seconds", type=int, default=LOAD_SECONDS, help="each load's length")
    parser.add_argument(
        "--throughput",
        action="store_true",
        help="on the catalog an earlier run built, only load the pages with wrk, with the"
        " Redis cache as deployed, and print the table (BENCHMARKS.md is left as it is)",
    )
    options = parser.parse_args()
    if not shutil.which("wrk"):
        sys.exit("wrk is missing: apt-get install -y wrk")
    if options.throughput:
        database.manage("collectstatic", "--noinput", "--verbosity", "0")
        loads = throughput(cache_url=REDIS_URL, rounds=options.rounds, seconds=options.seconds)
        print("\n".join(throughput_rows({"Redis": loads})))
        return

    if options.reuse_corpus:
        rows, load_seconds = database.row_counts(), 0.0
        options.papers = rows["catalog_paper"]
    else:
        print(f"Building {options.papers:,} papers in {database.BENCH_DATABASE}")
        started = time.perf_counter()
        conninfo = database.create()
        database.migrate()
        rows = corpus.load(conninfo, options.papers)
        rows.update(database.add_readers())
        load_seconds = time.perf_counter() - started
    database.manage("collectstatic", "--noinput", "--verbosity", "0")

    with tempfile.TemporaryDirectory() as workdir:
        print("Server time, no cache")
        plain = measure(options.requests, cache_url="", output=Path(workdir) / "plain.json")
        print("Server time, Redis catalog cache")
        cached = measure(
            options.requests, cache_url=REDIS_URL, output=Path(workdir) / "cached.json"
        )
    plain["requests"] = options.requests
    print("Throughput")
    loads = {
        cache_name: throughput(cache_url=url, rounds=options.rounds, seconds=options.seconds)
        for cache_name, url in (("none", ""), ("Redis", REDIS_URL))
    }
    print("Snapshot import")
    snapshot = snapshot_import()
    section = report(
        papers=options.papers,
        rows=rows,
        load_seconds=load_seconds,
        plain=plain,
        cached=cached,
        loads=loads,
        snapshot=snapshot,
        rounds=options.rounds,
        seconds=options.seconds,
    )
    write_section(section)
    print(section)


if __name__ == "__main__":
    main()
