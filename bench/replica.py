"""Reads under load on a real streaming replica, directly and through PgBouncer.

    python -m bench.replica --papers 100000

1. A private primary cluster (initdb in a temporary folder, on a free port,
   PostgreSQL's installed defaults, fsync on) gets the synthetic catalog of
   bench.corpus (without its readers: the load is anonymous).
2. A hot standby is made from its base backup (pg_basebackup -R) and streams
   the primary's WAL.
3. PgBouncer runs with deploy/pgbouncer/pgbouncer.ini in front of both.
4. In each shape (the primary alone; primary and replica, directly; both
   through PgBouncer's transaction-mode pools with DATABASE_TRANSACTION_POOLING,
   as deployed) gunicorn serves the site without a catalog cache, so every page
   reaches the database, and wrk loads a mix of anonymous list, search, paper
   and API pages, while at the same time
   - a writer on the primary changes a paper as fast as it commits (fsync on),
   - the replica's lag is read from the primary's pg_stat_replication,
   - a logged-in API reader saves a paper and at once lists their saved
     papers, again and again (the router keeps their reads on the primary: the
     paper must be there every time), and a second client with the same token
     but without the router's cookie lists them too (served by the replica:
     how often replication has not caught up yet),
   - the transactions each cluster served are counted (pg_stat_database).
5. Rewrites the "## Streaming replica and PgBouncer" section of BENCHMARKS.md.

Needs root (the clusters and PgBouncer run as the postgres user), wrk and
pgbouncer. Never touches the machine's own PostgreSQL cluster.
"""

import argparse
import datetime
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
import requests

from bench import database
from bench.clusters import (
    PostgresCluster,
    StandbyCluster,
    free_port,
    pgbouncer,
    pgbouncer_pools,
    wait_until,
)
from bench.run import CONCURRENCY, write_section, wrk_figures

SECTION = "## Streaming replica and PgBouncer"
LOAD_SECONDS = 30
PROBE_USER = "replica-probe"


@dataclass
class Shape:
    name: str
    env: dict[str, str]
    pgbouncer_port: int = 0


@dataclass
class Outcome:
    shape: str
    load: dict
    writes_per_second: float
    lags_ms: list[float] = field(default_factory=list)
    lag_bytes: list[int] = field(default_factory=list)
    primary_transactions: int = 0
    replica_transactions: int = 0
    own_writes_seen: int = 0
    own_writes: int = 0
    stale_without_cookie: int = 0
    pools: dict = field(default_factory=dict)


def run_django(env: dict[str, str], *args: str) -> str:
    result = subprocess.run(
        [sys.executable, *args],
        cwd=database.PROJECT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode:
        sys.exit(f"{' '.join(args)} failed:\n{result.stderr}")
    return result.stdout


def build(primary: PostgresCluster, papers: int) -> None:
    env = {**os.environ, "DATABASE_URL": primary.url("postgres"), "BENCH_DATABASE": "papershelf"}
    # The load is anonymous: the readers' subscriptions and recommendations,
    # which take most of a small catalog's build, are left out.
    print(run_django(env, "-m", "bench.corpus", "--papers", str(papers), "--without-readers"))


def probe_token(env: dict[str, str]) -> str:
    """An API token of a reader with nothing saved, made on the primary."""
    script = (
        "from django.contrib.auth import get_user_model; from accounts import services; "
        f"user = get_user_model().objects.create_user({PROBE_USER!r}, 'probe@example.org'); "
        "print(services.create_api_token(user=user, name='replica benchmark')[1])"
    )
    return run_django(env, "manage.py", "shell", "-c", script).strip().splitlines()[-1]


def load_script(primary: PostgresCluster) -> str:
    """wrk's Lua: anonymous pages of every kind, in turn."""
    (tag,) = primary.sql(
        "SELECT t.slug FROM catalog_tag t JOIN catalog_papertag pt ON pt.tag_id = t.id"
        " GROUP BY t.slug ORDER BY count(*) DESC LIMIT 1"
    )[0]
    arxiv_id, paper_id = primary.sql(
        "SELECT arxiv_id, id FROM catalog_paper WHERE is_visible ORDER BY id DESC LIMIT 1"
    )[0]
    paths = [
        "/",
        f"/?tag={tag}",
        "/?category=quant-ph",
        "/?q=reasoning",
        "/?period=7d",
        f"/tags/{tag}/",
        "/trending/",
        f"/papers/{arxiv_id}/",
        "/api/v1/papers",
        f"/api/v1/papers/{paper_id}",
    ]
    quoted = ", ".join(f'"{path}"' for path in paths)
    return (
        f"paths = {{{quoted}}}\n"
        "n = 0\n"
        "request = function()\n"
        "  n = n + 1\n"
        '  return wrk.format("GET", paths[n % #paths + 1])\n'
        "end\n"
    )


def transactions(cluster: PostgresCluster) -> int:
    (count,) = cluster.sql(
        "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = 'papershelf'",
        database="postgres",
    )[0]
    return int(count)


@contextmanager
def gunicorn(env: dict[str, str]) -> Iterator[str]:
    port = free_port()
    workers = 2 * (os.cpu_count() or 1) + 1
    server = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "gunicorn"),
            "config.wsgi",
            f"--bind=127.0.0.1:{port}",
            f"--workers={workers}",
            "--log-level=warning",
        ],
        cwd=database.PROJECT,
        env=env,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: requests.get(f"{base}/healthz", timeout=5).ok, timeout=60, what="site")
        yield base
    finally:
        server.terminate()
        server.wait(timeout=30)


def write_continuously(primary: PostgresCluster, stop: threading.Event, done: list[int]) -> None:
    """Change the newest papers' comment, one commit at a time, until stopped."""
    ids = [row[0] for row in primary.sql("SELECT id FROM catalog_paper ORDER BY id DESC LIMIT 500")]
    with psycopg.connect(primary.url("papershelf"), autocommit=True) as conn:
        n = 0
        while not stop.is_set():
            conn.execute(
                "UPDATE catalog_paper SET comment = %s WHERE id = %s",
                (f"revision {n}", ids[n % len(ids)]),
            )
            n += 1
    done.append(n)


def watch_lag(primary: PostgresCluster, stop: threading.Event, outcome: Outcome) -> None:
    while not stop.is_set():
        rows = primary.sql(
            "SELECT EXTRACT(EPOCH FROM coalesce(replay_lag, '0'::interval))::float,"
            " pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)::bigint FROM pg_stat_replication",
            database="postgres",
        )
        if rows:
            outcome.lags_ms.append(rows[0][0] * 1000)
            outcome.lag_bytes.append(int(rows[0][1]))
        time.sleep(0.1)


def probe_own_writes(
    base: str, token: str, paper_ids: list[int], stop: threading.Event, outcome: Outcome
) -> None:
    """Save, list at once, unsave, list at once: as the reader (with the
    router's cookie) and as a client without it."""
    reader, cookieless = requests.Session(), requests.Session()
    for session in (reader, cookieless):
        session.headers["Authorization"] = f"Bearer {token}"
    n = 0
    while not stop.is_set():
        paper_id = paper_ids[n % len(paper_ids)]
        for method, expected in ((reader.put, True), (reader.delete, False)):
            method(f"{base}/api/v1/me/saved/{paper_id}", timeout=30).raise_for_status()
            for session in (reader, cookieless):
                items = session.get(f"{base}/api/v1/me/saved", timeout=30).json()["items"]
                seen = (paper_id in [item["id"] for item in items]) == expected
                if session is reader:
                    outcome.own_writes += 1
                    outcome.own_writes_seen += seen
                else:
                    outcome.stale_without_cookie += not seen
        n += 1


def run_shape(
    shape: Shape, primary: PostgresCluster, standby: StandbyCluster, script: Path, token: str
) -> Outcome:
    print(f"Load: {shape.name}")
    paper_ids = [
        row[0]
        for row in primary.sql(
            "SELECT id FROM catalog_paper WHERE is_visible ORDER BY id DESC LIMIT 20"
        )
    ]
    with gunicorn(shape.env) as base:
        for _ in range(50):  # every worker connects and warms up
            requests.get(f"{base}/", timeout=60).raise_for_status()
        wait_until(standby.caught_up, timeout=120, what="the replica")
        outcome = Outcome(shape=shape.name, load={}, writes_per_second=0.0)
        before = transactions(primary), transactions(standby)
        stop, writes = threading.Event(), []
        threads = [
            threading.Thread(target=write_continuously, args=(primary, stop, writes)),
            threading.Thread(target=watch_lag, args=(primary, stop, outcome)),
            threading.Thread(target=probe_own_writes, args=(base, token, paper_ids, stop, outcome)),
        ]
        for thread in threads:
            thread.start()
        started = time.perf_counter()
        try:
            result = subprocess.run(
                [
                    *("wrk", "-t2", f"-c{CONCURRENCY}", f"-d{LOAD_SECONDS}s", "--latency"),
                    # A page slower than wrk's default 2 s still counts, as a slow page.
                    *("--timeout", "10s"),
                    *("-s", str(script), base),
                ],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            if shape.pgbouncer_port:
                outcome.pools = pgbouncer_pools(shape.pgbouncer_port)
        finally:
            stop.set()
            for thread in threads:
                thread.join(timeout=60)
        elapsed = time.perf_counter() - started
    # Backends report their counts within a second of going idle.
    time.sleep(2)
    outcome.load = wrk_figures(result, workers=2 * (os.cpu_count() or 1) + 1)
    outcome.writes_per_second = sum(writes) / elapsed
    outcome.primary_transactions = transactions(primary) - before[0]
    outcome.replica_transactions = transactions(standby) - before[1]
    print(
        f"  {outcome.load['requests_per_second']:.0f} requests/s,"
        f" transactions {outcome.primary_transactions} / {outcome.replica_transactions},"
        f" lag max {max(outcome.lags_ms, default=0):.1f} ms,"
        f" own writes seen {outcome.own_writes_seen} of {outcome.own_writes}"
    )
    return outcome


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, round(share * len(ordered)) - 1)] if ordered else 0.0


def report(*, papers: int, outcomes: list[Outcome], load: tuple[str, str]) -> str:
    lines = [
        SECTION,
        "",
        f"Written by `make bench-replica` (`python -m bench.replica --papers {papers}`) on"
        f" {datetime.date.today().isoformat()}: {papers:,} synthetic papers (bench.corpus,"
        " without readers) in a private primary cluster (initdb, PostgreSQL's installed"
        " defaults, fsync on), a hot standby made from its base backup (`pg_basebackup -R`)"
        " streaming its WAL, and"
        " PgBouncer with `deploy/pgbouncer/pgbouncer.ini` (transaction-mode pools for the"
        " primary and the replica, `DATABASE_TRANSACTION_POOLING=1`), all on this one"
        f" {os.cpu_count()}-core machine, which other work shared during the run (load average"
        f" {load[0]} before, {load[1]} after). gunicorn ({2 * (os.cpu_count() or 1) + 1} sync"
        " workers, no catalog cache, so every page reaches the database) serves anonymous"
        " list, tag, category, search, period, trending, paper and API pages in turn to wrk"
        f" ({CONCURRENCY} connections, {LOAD_SECONDS} s), while a writer on the primary changes"
        " a paper as fast as it commits, an API reader saves and unsaves a paper and lists"
        " their saved papers at once after each write, and a second client with the same"
        " token but without the router's cookie lists them too. Transactions are counted on"
        " each cluster (`pg_stat_database`; the primary's include the writer's commits, writes/s"
        f" times {LOAD_SECONDS} s); the lag is `pg_stat_replication`'s `replay_lag`"
        " and the WAL not yet replayed, read every 0.1 s. The standby streams in every shape;"
        " in the first the site does not read from it.",
        "",
        "| shape | requests/s | latency p50 / p99 | errors | transactions: primary / replica"
        " | writes/s | replica lag p95 / max | WAL behind, max | reader's own writes seen"
        " | without the cookie, stale | PgBouncer pools (clients, server connections) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for outcome in outcomes:
        pools = ", ".join(
            f"`{name}` {clients} / {servers}"
            for name, (clients, servers) in sorted(outcome.pools.items())
        )
        lines.append(
            f"| {outcome.shape} | {outcome.load['requests_per_second']:.0f} |"
            f" {outcome.load['p50']} / {outcome.load['p99']} | {outcome.load['errors']} |"
            f" {outcome.primary_transactions:,} / {outcome.replica_transactions:,} |"
            f" {outcome.writes_per_second:.0f} |"
            f" {percentile(outcome.lags_ms, 0.95):.1f} ms / {max(outcome.lags_ms, default=0):.1f}"
            f" ms | {max(outcome.lag_bytes, default=0) / 1024:.0f} kB |"
            f" {outcome.own_writes_seen} of {outcome.own_writes} |"
            f" {outcome.stale_without_cookie} of {outcome.own_writes} | {pools or '-'} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=100_000)
    options = parser.parse_args()
    for tool in ("wrk", "pgbouncer", "runuser"):
        if not shutil.which(tool) and not Path("/usr/sbin", tool).exists():
            sys.exit(f"{tool} is missing")
    if os.geteuid() != 0:
        sys.exit("run as root: the private clusters and PgBouncer run as the postgres user")
    # Stopped (timeout, kill), it still stops its clusters: the finally below runs.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("stopped"))
    load_before = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    primary = PostgresCluster(durable=True)
    standby: StandbyCluster | None = None
    try:
        primary.init()
        print(f"Building {options.papers:,} papers in a private primary on port {primary.port}")
        build(primary, options.papers)
        site = database.django_env(CATALOG_CACHE_URL="", REDIS_URL="")
        database.manage("collectstatic", "--noinput", "--verbosity", "0")
        token = probe_token({**site, "DATABASE_URL": primary.url("papershelf")})
        print("Base backup into the standby")
        standby = StandbyCluster(primary)
        standby.init()
        wait_until(standby.caught_up, timeout=600, what="the replica")
        outcomes = []
        with (
            pgbouncer({"postgres": primary.port, "replica": standby.port}) as bouncer,
            tempfile.NamedTemporaryFile("w", suffix=".lua") as script,
        ):
            script.write(load_script(primary))
            script.flush()
            pooled = f"postgres://root@127.0.0.1:{bouncer}"
            shapes = [
                Shape(
                    "primary alone",
                    {**site, "DATABASE_URL": primary.url("papershelf")},
                ),
                Shape(
                    "primary + replica, direct",
                    {
                        **site,
                        "DATABASE_URL": primary.url("papershelf"),
                        "DATABASE_REPLICA_URL": standby.url("papershelf"),
                    },
                ),
                Shape(
                    "primary + replica through PgBouncer (transaction pools)",
                    {
                        **site,
                        "DATABASE_URL": f"{pooled}/papershelf",
                        "DATABASE_REPLICA_URL": f"{pooled}/papershelf_replica",
                        "DATABASE_TRANSACTION_POOLING": "1",
                    },
                    pgbouncer_port=bouncer,
                ),
            ]
            outcomes = [
                run_shape(shape, primary, standby, Path(script.name), token) for shape in shapes
            ]
        load_after = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    finally:
        if standby:
            standby.destroy()
        primary.destroy()
    section = report(papers=options.papers, outcomes=outcomes, load=(load_before, load_after))
    write_section(section, title=SECTION)
    print(section)


if __name__ == "__main__":
    main()
