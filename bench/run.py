"""The catalog benchmark behind `make bench`: build, measure, write BENCHMARKS.md.

    python -m bench.run --papers 1000000

1. Builds the synthetic catalog in its own database (bench.corpus), keeping
   its size, build time and peak memory with it.
2. Times every public page in-process, once with no cache and once with the
   Redis catalog cache (bench.measure).
3. Runs the snapshot import benchmark (bench.snapshot_import) on a copy of
   the catalog, so that its indexes already hold every paper.
4. Serves the site with gunicorn and loads, with wrk at concurrency 16, a
   plain Django hello-world (bench.plain, on a server of its own), the same
   view behind the site's middleware, `/` anonymous and as a logged-in
   reader, and that reader's feed and For you, with and without the cache,
   in --rounds interleaved rounds.
After each of 2 to 4 it keeps the figures in bench/results/catalog-N.json and
rewrites the "## Catalog at scale" section of BENCHMARKS.md from every size
measured (1,000,000 and 3,000,000 papers side by side); at the end it prints it.
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
# Each catalog size's latest figures, from which the section is written.
RESULTS = database.PROJECT / "bench" / "results"
SECTION = "## Catalog at scale"
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/8")
CONCURRENCY = 16
LOAD_SECONDS = 20
# gunicorn's sync workers for each server under load, its documented rule of thumb.
WORKERS = 2 * (os.cpu_count() or 1) + 1


def measure(requests: int, *, cache_url: str, output: Path, only: str = "") -> dict:
    if cache_url:
        redis.Redis.from_url(cache_url).flushdb()
    # Sessions stay in Redis, as deployed, whether or not the catalog cache is on.
    env = database.django_env(CATALOG_CACHE_URL=cache_url, REDIS_URL=REDIS_URL)
    subprocess.run(
        [
            *(sys.executable, "-m", "bench.measure", "--requests", str(requests)),
            *("--output", output, "--only", only),
        ],
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
    workers = WORKERS
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
        [sys.executable, "-m", "bench.snapshot_import", "--catalog", database.BENCH_DATABASE],
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


def run_facts(
    *,
    papers: int,
    rows: dict,
    build: dict,
    plain: dict,
    cached: dict,
    loads: dict,
    snapshot: str,
    load_before: str,
    built_here: bool,
    rounds: int,
    seconds: int,
) -> dict:
    """One run's figures, as kept in bench/results/ for the report."""
    return {
        "papers": papers,
        "database": database.BENCH_DATABASE,
        "built_here": built_here,
        "date": datetime.date.today().isoformat(),
        "machine": machine(),
        "load_before": load_before,
        "rows": rows,
        "build": build,
        "plain": plain,
        "cached": cached,
        "loads": loads,
        "snapshot": snapshot,
        "rounds": rounds,
        "seconds": seconds,
    }


def cell(timing: dict, *, reader: bool) -> str:
    """A page's p95 as taken and in CPU time, each in bold when over the target."""
    target = timing["target_ms"]
    prefix = "reader_" if reader else ""
    return " / ".join(
        f"{value:.1f}" if value <= target else f"**{value:.1f}**"
        for value in (timing[f"{prefix}p95_ms"], timing[f"{prefix}cpu_p95_ms"])
    )


def snapshot_figure(snapshot: str, name: str) -> str:
    found = re.search(rf"(?m)^{re.escape(name)}:?\s+(.*?)(?: \(the target's\))?$", snapshot)
    return found.group(1) if found else "not measured"


def report(runs: list[dict]) -> str:
    """The section: every measured catalog size side by side, the smallest first."""
    sizes = " and ".join(f"{run['papers']:,}" for run in runs)
    lines = [
        SECTION,
        "",
        f"Written by `make bench` from its runs at {sizes} papers (their figures are kept in"
        " `bench/results/`; a run at another size adds its columns). Each run builds the"
        " synthetic catalog in its own database (`BENCH_DATABASE`, by default"
        " `papershelf_scale`), times every page in-process, loads the site with wrk and"
        " benchmarks the snapshot import:",
        "",
    ]
    lines += [
        f"- {run['papers']:,} papers: `make bench N={run['papers']}"
        f" BENCH_DATABASE={run['database']}`"
        + (
            ""
            if run["built_here"]
            else f" (built by `python -m bench.corpus --papers {run['papers']}`, then measured by"
            f" `python -m bench.run --reuse-corpus --requests {run['plain']['requests']}`, the"
            " two halves of the same run)"
        )
        + f", {run['date']}, {run['plain']['requests']} requests a page; {run['machine']};"
        f" load average before measuring {run['load_before']}."
        for run in runs
    ]
    lines += [
        "",
        "The machine was shared with other work during every run (the load averages above);"
        " absolute times vary with it from run to run, query counts do not.",
        "",
        "**The catalog and its build.**",
        "",
        "| | " + " | ".join(f"{run['papers']:,} papers" for run in runs) + " | command |",
        "| --- | " + " | ".join("---" for _ in runs) + " | --- |",
    ]
    build_rows = [
        (
            "database size",
            lambda run: f"{run['build'].get('database_bytes', 0) / 2**30:.1f} GB",
            "`make bench N=<papers>`",
        ),
        (
            "build: COPY, indexes, VACUUM ANALYZE, readers",
            lambda run: f"{run['build'].get('build_seconds', 0) / 60:.0f} minutes",
            "`make bench N=<papers>`",
        ),
        (
            "peak memory of the build: main process / largest child",
            lambda run: (
                f"{run['build'].get('peak_rss_mb', 0)} MB /"
                f" {run['build'].get('child_peak_rss_mb', 0)} MB"
            ),
            "`make bench N=<papers>`",
        ),
        (
            "rows: author links / category links / tag links",
            lambda run: (
                f"{run['rows']['catalog_paperauthor']:,} /"
                f" {run['rows']['catalog_paper_categories']:,} /"
                f" {run['rows']['catalog_papertag']:,}"
            ),
            "`make bench N=<papers>`",
        ),
        (
            "snapshot import, 50,000 records into a copy of the catalog",
            lambda run: snapshot_figure(run["snapshot"], "import"),
            "`python -m bench.snapshot_import --catalog $BENCH_DATABASE`",
        ),
        (
            "raw COPY of the same rows into `catalog_paper`",
            lambda run: snapshot_figure(run["snapshot"], "raw COPY, catalog_paper"),
            "the same",
        ),
        (
            "import / raw COPY into `catalog_paper` (target: at least 0.55)",
            lambda run: snapshot_figure(run["snapshot"], "import / COPY into catalog_paper"),
            "the same",
        ),
        (
            "peak memory of the import",
            lambda run: snapshot_figure(run["snapshot"], "peak RSS"),
            "the same",
        ),
    ]
    for label, value, command in build_rows:
        lines.append(f"| {label} | " + " | ".join(value(run) for run in runs) + f" | {command} |")
    lines += [
        "",
        "**Server time**, measured in-process around Django's test client (middleware,"
        " queries and rendering), DEBUG off, the p95 of each run's requests a page (above)"
        " after warm-up, in ms (bold: over its target): as taken / in CPU time, that of the"
        " Django process and of its PostgreSQL backend (`/proc/<pid>/schedstat`), which other"
        " work on the machine does not lengthen as it does the time taken, though it still"
        " raises it (caches shared with that work; the Redis server's CPU is left out)."
        " *No cache*: the catalog cache is off, every request runs its queries."
        " *Cached*: the Redis catalog cache, as deployed: an anonymous reader gets the stored"
        " page, reader 1 (logged in, 30 subscriptions, 200 saved papers) the page logged-in"
        " readers share with their own parts filled in; the personal feed and For you are the"
        " reader's own entries. Queries are those of one request at the largest size, anonymous"
        " (reader 1), without and with the cache. Each row's command measures that page again"
        " on a built catalog (`BENCH_DATABASE` naming it).",
        "",
        "| page | target p95 | "
        + " | ".join(
            f"{run['papers'] // 1_000_000}M no cache | {run['papers'] // 1_000_000}M cached"
            f" | {run['papers'] // 1_000_000}M reader 1, no cache"
            f" | {run['papers'] // 1_000_000}M reader 1, cached"
            for run in runs
        )
        + " | queries | command |",
        "| --- | --- | " + " | ".join("--- | --- | --- | ---" for _ in runs) + " | --- | --- |",
    ]
    by_label = [
        (
            {t["label"]: t for t in run["plain"]["timings"]},
            {t["label"]: t for t in run["cached"]["timings"]},
        )
        for run in runs
    ]
    worst_queries = 0
    for timing in runs[-1]["plain"]["timings"]:
        label, target = timing["label"], timing["target_ms"]
        hit = by_label[-1][1][label]
        worst_queries = max(worst_queries, timing["queries"], timing["reader_queries"])
        cells = []
        for plain, cached in by_label:
            if label not in plain:
                cells.append("- | - | - | -")
                continue
            cells.append(
                " | ".join(
                    cell(timings[label], reader=reader)
                    for reader in (False, True)
                    for timings in (plain, cached)
                )
            )
        lines.append(
            f"| {label} | {target:.0f} ms | "
            + " | ".join(cells)
            + f" | {timing['queries']} ({timing['reader_queries']}),"
            f" {hit['queries']} ({hit['reader_queries']})"
            f' | `python -m bench.run --reuse-corpus --only "{label}"` |'
        )
    for run in runs:
        deep = {t["label"]: t["p95_ms"] for t in run["plain"]["timings"]}
        lines += [
            "",
            f"At {run['papers']:,} papers, page 5,000's p95 is"
            f" {deep['page 5,000'] / deep['page 1']:.1f}x page 1's without the cache (target: at"
            " most 2x).",
        ]
    lines += [
        "",
        f"**Throughput** through gunicorn ({WORKERS} sync workers each), wrk with"
        f" {CONCURRENCY} connections for {runs[-1]['seconds']} s a load, in"
        f" {runs[-1]['rounds']} rounds, each loading every page once in turn; the median"
        " round's figures. The yardstick is a plain Django hello-world (`bench/plain.py`:"
        " `startproject`'s middleware, none of the site's settings) on a server of its own"
        " beside the site's; then the same view behind the site's middleware, `/` anonymous,"
        " and `/`, the personal feed and For you for reader 1 (sessions and pages in Redis"
        " when there is a cache, the page logged-in readers share with reader 1's parts"
        " filled in, the feed and For you reader 1's own entries) (targets, with the cache:"
        " reader 1's `/` at least 1/4 of the plain hello-world, their feed and For you at"
        " least 1/6, anonymous `/` at least 1/3; no errors). Command: `python -m bench.run"
        " --reuse-corpus --throughput` (the Redis rows).",
        "",
        "| papers | catalog cache | page | requests/s | of hello-world | latency p50"
        " | latency p99 | errors |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for run in runs:
        lines += [f"| {run['papers']:,} {row}" for row in throughput_rows(run["loads"])]
        if not run["loads"]:
            lines.append(f"| {run['papers']:,} | not measured | | | | | | |")
    for run in runs:
        if run["snapshot"]:
            lines += [
                "",
                f"Snapshot import at {run['papers']:,} papers, as `bench/snapshot_import.py`"
                " prints it:",
                "",
                "```",
                run["snapshot"],
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


def write_section(section: str, *, title: str = SECTION) -> None:
    """Replace a benchmark's section of BENCHMARKS.md (this one's by default),
    keeping every other section."""
    text = BENCHMARKS.read_text(encoding="utf-8") if BENCHMARKS.exists() else "# Benchmarks\n"
    parts = re.split(r"(?m)^(?=## )", text)
    kept = [part for part in parts if not part.startswith(title)]
    head, rest = kept[0], kept[1:]
    BENCHMARKS.write_text(
        head.rstrip("\n") + "\n\n" + section + "".join("\n" + p.rstrip("\n") + "\n" for p in rest),
        encoding="utf-8",
    )


def save(run: dict) -> list[dict]:
    """Keep this run's figures beside the other sizes'; returns every size's, smallest first."""
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"catalog-{run['papers']}.json").write_text(json.dumps(run, indent=1) + "\n")
    runs = [json.loads(path.read_text()) for path in RESULTS.glob("catalog-*.json")]
    return sorted(runs, key=lambda each: each["papers"])


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
    parser.add_argument(
        "--only",
        default="",
        help="on the catalog an earlier run built, only time the pages whose label contains"
        " this, without and with the cache, and print them (BENCHMARKS.md is left as it is)",
    )
    options = parser.parse_args()
    if not shutil.which("wrk"):
        sys.exit("wrk is missing: apt-get install -y wrk")
    if options.throughput:
        database.manage("collectstatic", "--noinput", "--verbosity", "0")
        loads = throughput(cache_url=REDIS_URL, rounds=options.rounds, seconds=options.seconds)
        print("\n".join(throughput_rows({"Redis": loads})))
        return
    if options.only:
        with tempfile.TemporaryDirectory() as workdir:
            for name, cache_url in (("no cache", ""), ("Redis catalog cache", REDIS_URL)):
                print(name)
                measure(
                    options.requests,
                    cache_url=cache_url,
                    output=Path(workdir) / "only.json",
                    only=options.only,
                )
        return

    if options.reuse_corpus:
        rows = database.row_counts()
        options.papers = rows["catalog_paper"]
    else:
        print(f"Building {options.papers:,} papers in {database.BENCH_DATABASE}")
        rows = corpus.build(options.papers)
    build = database.build_facts()
    load_before = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    database.manage("collectstatic", "--noinput", "--verbosity", "0")

    with tempfile.TemporaryDirectory() as workdir:
        print("Server time, no cache")
        plain = measure(options.requests, cache_url="", output=Path(workdir) / "plain.json")
        print("Server time, Redis catalog cache")
        cached = measure(
            options.requests, cache_url=REDIS_URL, output=Path(workdir) / "cached.json"
        )
    plain["requests"] = options.requests
    # The figures are kept and written after each stage, so that a run cut
    # short still reports what it measured (the rest says "not measured").
    run = run_facts(
        papers=options.papers,
        rows=rows,
        build=build,
        plain=plain,
        cached=cached,
        loads={},
        snapshot="",
        load_before=load_before,
        built_here=not options.reuse_corpus,
        rounds=options.rounds,
        seconds=options.seconds,
    )
    write_section(report(save(run)))
    print("Snapshot import")
    run["snapshot"] = snapshot_import()
    write_section(report(save(run)))
    print("Throughput")
    run["loads"] = {
        cache_name: throughput(cache_url=url, rounds=options.rounds, seconds=options.seconds)
        for cache_name, url in (("none", ""), ("Redis", REDIS_URL))
    }
    section = report(save(run))
    write_section(section)
    print(section)


if __name__ == "__main__":
    main()
