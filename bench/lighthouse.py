"""Lighthouse scores of the home page, a paper page and a tag page, as deployed.

    python -m bench.lighthouse [--runs 3]

The demo catalog is loaded into its own database (named after DATABASE_URL's,
with "_lighthouse", dropped and recreated), static files are collected, and
gunicorn serves it with production settings on a free local port, over plain
HTTP as behind a TLS-terminating proxy. Lighthouse 12 (from npm, through npx)
audits each page with its default mobile settings in Debian's Chromium
(CHROME_PATH); each page's scores are the median of --runs runs. Prints the
scores as JSON and exits non-zero if a page scores under 100 in accessibility,
best practices or SEO, or under 98 in performance.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import environ
import psycopg
from psycopg import sql

from bench.load import database_url, free_port, manage, wait_until_up

PROJECT = Path(__file__).resolve().parent.parent
LIGHTHOUSE = os.environ.get("LIGHTHOUSE", "lighthouse@12.8.2")
CHROMIUM = os.environ.get("CHROME_PATH", "/usr/bin/chromium")
PAGES = {
    "home": "/",
    "paper": "/papers/2505.15034/",
    "paper with math": "/papers/2505.13718/",
    "tag": "/tags/r1-reasoning/",
}
CATEGORIES = ("performance", "accessibility", "best-practices", "seo")
TARGETS = {"performance": 98, "accessibility": 100, "best-practices": 100, "seo": 100}


def database_name() -> str:
    base = environ.Env.db_url_config(
        os.environ.get("DATABASE_URL", "postgres://root@127.0.0.1:5432/papershelf")
    )
    return f"{base['NAME']}_lighthouse"


def recreate_database(name: str) -> None:
    config = environ.Env.db_url_config(database_url("postgres"))
    conninfo = psycopg.conninfo.make_conninfo(
        dbname="postgres",
        host=config.get("HOST") or None,
        port=config.get("PORT") or None,
        user=config.get("USER") or None,
        password=config.get("PASSWORD") or None,
    )
    with psycopg.connect(conninfo, autocommit=True) as admin:
        identifier = sql.Identifier(name)
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(identifier))
        admin.execute(sql.SQL("CREATE DATABASE {}").format(identifier))


def production_env(port: int, *, database: str, static_root: str) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": database_url(database),
        "DEBUG": "0",
        "SECRET_KEY": "lighthouse-only-secret-key-" + "x" * 40,
        "ALLOWED_HOSTS": "127.0.0.1",
        "SECURE_SSL_REDIRECT": "0",
        "REDIS_URL": "",
        "STATIC_ROOT": static_root,
        "LOG_LEVEL": "WARNING",
        "SITE_ROOT": f"http://127.0.0.1:{port}",
    }


def audit(url: str, report: Path, *, attempts: int = 3) -> dict[str, int]:
    """One Lighthouse run's category scores. Lighthouse now and then fails to record
    a page load's trace (NO_NAVSTART) and asks to be run again: so it is, a few times."""
    for attempt in range(1, attempts + 1):
        finished = subprocess.run(
            [
                "npx",
                "--yes",
                LIGHTHOUSE,
                url,
                f"--only-categories={','.join(CATEGORIES)}",
                "--output=json",
                f"--output-path={report}",
                "--quiet",
                "--chrome-flags=--headless=new --no-sandbox --disable-gpu",
            ],
            env={**os.environ, "CHROME_PATH": CHROMIUM},
            timeout=300,
        )
        if finished.returncode == 0 or attempt == attempts:
            break
    finished.check_returncode()
    result = json.loads(report.read_text())
    return {name: round(result["categories"][name]["score"] * 100) for name in CATEGORIES}


def run(*, runs: int) -> dict:
    port = free_port()
    database = database_name()
    with tempfile.TemporaryDirectory() as scratch:
        env = production_env(port, database=database, static_root=str(Path(scratch) / "static"))
        recreate_database(database)
        manage(env, "migrate", "--noinput")
        manage(env, "load_demo")
        manage(env, "collectstatic", "--noinput")
        base = f"http://127.0.0.1:{port}"
        server = subprocess.Popen(
            [
                str(Path(sys.executable).with_name("gunicorn")),
                "config.wsgi",
                f"--bind=127.0.0.1:{port}",
                "--workers=3",
                "--log-level=warning",
            ],
            cwd=PROJECT,
            env=env,
        )
        try:
            wait_until_up(f"{base}/healthz", server)
            scores = {}
            for name, path in PAGES.items():
                runs_of_page = [
                    audit(f"{base}{path}", Path(scratch) / f"{name}-{n}.json") for n in range(runs)
                ]
                scores[name] = {
                    "path": path,
                    **{
                        category: statistics.median_low(run[category] for run in runs_of_page)
                        for category in CATEGORIES
                    },
                    "runs": runs_of_page,
                }
        finally:
            server.terminate()
            server.wait(timeout=30)
    return scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="audits of each page")
    args = parser.parse_args()
    scores = run(runs=args.runs)
    print(json.dumps(scores, indent=2))
    short = [
        f"{name} {category} {page[category]} < {target}"
        for name, page in scores.items()
        for category, target in TARGETS.items()
        if page[category] < target
    ]
    if short:
        raise SystemExit("Under target: " + "; ".join(short))


if __name__ == "__main__":
    main()
