"""Where a page's server time goes: SQL, template rendering, and the rest, per request.

    python -m bench.profile --path / --path "/?tag=..." [--reader] [--requests 200] [--top 25]

It works on the catalog `make bench` built (BENCH_DATABASE), with production
settings, sessions in Redis (BENCH_REDIS_URL) and no page cache (with --cache,
pages in that Redis too, as production keeps them). Each page is
requested through Django's test client, as bench.measure times it; SQL is
timed around every query the page runs, rendering around each top-level
template render (the nested ones count in their parent). With --top,
cProfile's heaviest functions (by own time) follow each page.
"""

import argparse
import cProfile
import io
import os
import pstats
import statistics
import time
from contextlib import contextmanager

import django

from bench import database
from bench.run import REDIS_URL


@contextmanager
def timed_sql(spent: list[float]):
    from django.db import connection

    def wrapper(execute, sql, params, many, context):
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            spent.append(time.perf_counter() - started)

    with connection.execute_wrapper(wrapper):
        yield


@contextmanager
def timed_rendering(spent: list[float]):
    from django.template.backends.django import Template

    original = Template.render
    depth = [0]

    def render(self, *args, **kwargs):
        depth[0] += 1
        started = time.perf_counter()
        try:
            return original(self, *args, **kwargs)
        finally:
            depth[0] -= 1
            if depth[0] == 0:
                spent.append(time.perf_counter() - started)

    Template.render = render
    try:
        yield
    finally:
        Template.render = original


def profile(client, path: str, *, requests: int, top: int) -> None:
    for _ in range(5):
        client.get(path)
    totals, sql_shares, render_shares = [], [], []
    profiler = cProfile.Profile()
    for _ in range(requests):
        sql, rendering = [], []
        with timed_sql(sql), timed_rendering(rendering):
            started = time.perf_counter()
            if top:
                profiler.enable()
            client.get(path)
            if top:
                profiler.disable()
            total = time.perf_counter() - started
        totals.append(total)
        sql_shares.append(sum(sql))
        render_shares.append(sum(rendering))
    total_ms = statistics.median(totals) * 1000
    sql_ms = statistics.median(sql_shares) * 1000
    render_ms = statistics.median(render_shares) * 1000
    print(
        f"{path}\n  median {total_ms:.1f} ms: SQL {sql_ms:.1f} ms ({sql_ms / total_ms:.0%}),"
        f" rendering {render_ms:.1f} ms ({render_ms / total_ms:.0%}),"
        f" the rest {total_ms - sql_ms - render_ms:.1f} ms"
    )
    if top:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(top)
        print("\n".join("    " + line for line in out.getvalue().splitlines()[6:]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--path", action="append", required=True)
    parser.add_argument("--reader", action="store_true", help="as reader1, logged in")
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--top", type=int, default=0)
    parser.add_argument("--cache", action="store_true", help="catalog pages in Redis")
    options = parser.parse_args()

    cache_url = REDIS_URL if options.cache else ""
    os.environ.update(database.django_env(REDIS_URL=REDIS_URL, CATALOG_CACHE_URL=cache_url))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    database.manage("collectstatic", "--noinput", "--verbosity", "0")
    django.setup()
    from django.contrib.auth import get_user_model
    from django.test import Client

    client = Client()
    if options.reader:
        client.force_login(get_user_model().objects.get(username="reader1"))
    for path in options.path:
        profile(client, path, requests=options.requests, top=options.top)


if __name__ == "__main__":
    main()
