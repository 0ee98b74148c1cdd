"""Load test: gunicorn with production settings under wrk, over a mix of reader pages.

    python bench/load.py [--duration 60] [--connections 32]

The demo catalog is loaded into its own database (LOAD_DATABASE beside
DATABASE_URL's, dropped and recreated), static files are collected, gunicorn
serves on a free local port, and wrk drives list, filter, search and paper
pages at fixed concurrency. Prints throughput, latency percentiles and errors
as JSON; exits non-zero on any error (a socket error, a timeout or any answer
other than 200).
"""

import argparse
import collections
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlencode

import environ
import psycopg
from psycopg import sql

PROJECT = Path(__file__).resolve().parent.parent
LOAD_DATABASE = "papershelf_load"
# Counts every answer that is not a 200 across wrk's threads, and reports the
# figures as one machine-readable line.
WRK_SCRIPT = """
local threads = {}
local paths = {}
for line in io.lines(os.getenv("LOAD_PATHS")) do paths[#paths + 1] = line end

function setup(thread) table.insert(threads, thread) end
function init(args) not_ok = 0; statuses = "" end
function request() return wrk.format("GET", paths[math.random(#paths)]) end
function response(status, headers, body)
  if status ~= 200 then
    not_ok = not_ok + 1
    if #statuses < 200 then statuses = statuses .. status .. "," end
  end
end
function done(summary, latency, requests)
  local not_ok = 0
  local statuses = ""
  for _, thread in ipairs(threads) do
    not_ok = not_ok + thread:get("not_ok")
    statuses = statuses .. thread:get("statuses")
  end
  local e = summary.errors
  io.write(string.format(
    "RESULT requests=%d seconds=%.3f not_ok=%d connect=%d read=%d write=%d timeout=%d "
    .. "p50_ms=%.2f p90_ms=%.2f p99_ms=%.2f max_ms=%.2f\\n",
    summary.requests, summary.duration / 1e6, not_ok, e.connect, e.read, e.write, e.timeout,
    latency:percentile(50) / 1000, latency:percentile(90) / 1000,
    latency:percentile(99) / 1000, latency.max / 1000))
  if statuses ~= "" then io.write("STATUSES " .. statuses .. "\\n") end
end
"""


def database_url(dbname: str) -> str:
    base = os.environ.get("DATABASE_URL", "postgres://root@127.0.0.1:5432/papershelf")
    config = environ.Env.db_url_config(base)
    credentials = config.get("USER") or ""
    if config.get("PASSWORD"):
        credentials += f":{config['PASSWORD']}"
    host = f"{config.get('HOST') or '127.0.0.1'}:{config.get('PORT') or 5432}"
    return f"postgres://{credentials}{'@' if credentials else ''}{host}/{dbname}"


def recreate_database() -> None:
    config = environ.Env.db_url_config(database_url("postgres"))
    conninfo = psycopg.conninfo.make_conninfo(
        dbname="postgres",
        host=config.get("HOST") or None,
        port=config.get("PORT") or None,
        user=config.get("USER") or None,
        password=config.get("PASSWORD") or None,
    )
    with psycopg.connect(conninfo, autocommit=True) as admin:
        name = sql.Identifier(LOAD_DATABASE)
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(name))
        admin.execute(sql.SQL("CREATE DATABASE {}").format(name))


def production_env(port: int) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": database_url(LOAD_DATABASE),
        "DEBUG": "0",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "127.0.0.1",
        # wrk speaks plain HTTP to the app, as a TLS-terminating proxy would.
        "SECURE_SSL_REDIRECT": "0",
        "REDIS_URL": "",
        "LOG_LEVEL": "WARNING",
        "SITE_ROOT": f"http://127.0.0.1:{port}",
        # All the load comes from one address, which the per-address limits would
        # turn away: this measures the server (the limits have their own tests).
        "RATELIMIT_ENABLE": "0",
    }


def manage(env: dict[str, str], *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=PROJECT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return result.stdout


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def request_mix(env: dict[str, str]) -> list[str]:
    """List, filter, search and paper pages, in the proportions readers ask for them."""
    script = (
        "import json\n"
        "from catalog.models import Paper, Tag, Category\n"
        "papers = list(Paper.objects.visible().exclude(arxiv_id=None)"
        ".values_list('arxiv_id', 'title')[:40])\n"
        "tags = list(Tag.objects.values_list('slug', flat=True)[:10])\n"
        "categories = list(Category.objects.values_list('code', flat=True)[:5])\n"
        "print(json.dumps({'papers': papers, 'tags': tags, 'categories': categories}))\n"
    )
    found = json.loads(manage(env, "shell", "-c", script).strip().splitlines()[-1])
    words = sorted(
        {w for _, title in found["papers"] for w in re.findall(r"[a-z]{5,}", title.lower())}
    )
    # Canonical addresses only: the site redirects a default spelled out (`sort=newest`
    # without a query, `sort=relevance` with one) to the address without it.
    lists = ["/", "/?page=2", "/tags/", "/categories/", "/?period=365d"]
    filters = [f"/?{urlencode({'tag': slug})}" for slug in found["tags"]]
    filters += [f"/tags/{slug}/" for slug in found["tags"]]
    filters += [
        f"/?{urlencode({'category': code, 'period': '30d'})}" for code in found["categories"]
    ]
    searches = [f"/?{urlencode({'q': word})}" for word in words[:30]]
    searches += [f"/?{urlencode({'q': word, 'sort': 'newest'})}" for word in words[30:40]]
    papers = [f"/papers/{arxiv_id}/" for arxiv_id, _ in found["papers"]]
    if not (found["tags"] and words and papers):
        raise SystemExit("The demo catalog came up empty; nothing to load-test.")
    return lists * 4 + filters + searches + papers


def wait_until_up(url: str, process: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit("gunicorn exited before it served a page.")
        try:
            with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 (local)
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"gunicorn did not answer {url} within {timeout:.0f}s.")


def run(*, duration: int, connections: int, workers: int) -> dict:
    wrk = shutil.which("wrk")
    if not wrk:
        raise SystemExit("wrk is missing: `make load` installs Debian's wrk package.")
    port = free_port()
    env = production_env(port)
    recreate_database()
    manage(env, "migrate", "--noinput")
    manage(env, "load_demo")
    manage(env, "collectstatic", "--noinput")
    paths = request_mix(env)
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [
            str(Path(sys.executable).with_name("gunicorn")),
            "config.wsgi",
            f"--bind=127.0.0.1:{port}",
            f"--workers={workers}",
            "--log-level=warning",
        ],
        cwd=PROJECT,
        env=env,
    )
    try:
        wait_until_up(f"{base}/healthz", server)
        with tempfile.TemporaryDirectory() as scratch:
            (Path(scratch) / "paths.txt").write_text("\n".join(paths) + "\n")
            (Path(scratch) / "mix.lua").write_text(WRK_SCRIPT)
            result = subprocess.run(
                [
                    wrk,
                    f"--threads={min(4, connections)}",
                    f"--connections={connections}",
                    f"--duration={duration}s",
                    "--timeout=10s",
                    f"--script={Path(scratch) / 'mix.lua'}",
                    base,
                ],
                env={**os.environ, "LOAD_PATHS": str(Path(scratch) / "paths.txt")},
                capture_output=True,
                text=True,
                check=True,
                timeout=duration + 60,
            )
    finally:
        server.terminate()
        server.wait(timeout=30)
    line = next(line for line in result.stdout.splitlines() if line.startswith("RESULT "))
    figures = {key: float(value) for key, value in re.findall(r"(\w+)=([\d.]+)", line)}
    errors = sum(figures[k] for k in ("not_ok", "connect", "read", "write", "timeout"))
    # A sample of the answers other than 200, by status, to say what failed.
    sampled = next((x for x in result.stdout.splitlines() if x.startswith("STATUSES ")), "")
    statuses = collections.Counter(s for s in sampled.removeprefix("STATUSES ").split(",") if s)
    return {
        "duration_s": figures["seconds"],
        "connections": connections,
        "gunicorn_workers": workers,
        "distinct_urls": len(set(paths)),
        "requests": int(figures["requests"]),
        "requests_per_s": round(figures["requests"] / figures["seconds"], 1),
        "latency_ms": {p: figures[f"{p}_ms"] for p in ("p50", "p90", "p99", "max")},
        "errors": int(errors),
        "error_detail": {
            k: int(figures[k]) for k in ("not_ok", "connect", "read", "write", "timeout")
        },
        "sampled_statuses": dict(statuses),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=60, help="seconds of load")
    parser.add_argument("--connections", type=int, default=32, help="concurrent connections")
    parser.add_argument("--workers", type=int, default=2 * (os.cpu_count() or 1) + 1)
    args = parser.parse_args()
    report = run(duration=args.duration, connections=args.connections, workers=args.workers)
    print(json.dumps(report, indent=2))
    if report["errors"]:
        raise SystemExit(f"{report['errors']} requests failed under load.")


if __name__ == "__main__":
    main()
