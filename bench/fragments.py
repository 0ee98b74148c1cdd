"""What each per-process fragment store saves with the Redis page cache on.

    python -m bench.fragments --requests 40

It works on the catalog `make bench` built (BENCH_DATABASE), with production
settings and pages and sessions in Redis (BENCH_REDIS_URL). With the page
cache on, a store is used only where a page is rendered: after a change to
the catalog (every cached page is then rendered again), on a logged-in
reader's page from the cache (their parts are filled in), and on the
reader's own pages (the feed, For you), which are never cached. Each store
is timed on such pages with its size as configured and with 0 (rendered
every time), the two taking turns request by request so that load on the
machine falls on both alike; "after a change" moves the catalog's version
on before each request. Prints the median server time of each and the
difference, and the same in this process's CPU time (what a store saves is
Python's work; the CPU time leaves out waiting for PostgreSQL, Redis and
other processes on a busy machine).
"""

import argparse
import os
import statistics
import time
from dataclasses import dataclass

import django

from bench import database
from bench.run import REDIS_URL


@dataclass(frozen=True)
class Case:
    store: str  # the size setting
    label: str
    path: str
    reader: bool
    after_change: bool


def cases(*, tag: str, paper: str, discussion: str) -> list[Case]:
    return [
        Case("PAPER_CARD_CACHE_SIZE", "`/` after a change", "/", False, True),
        Case("PAPER_CARD_CACHE_SIZE", "tag page after a change", f"/tags/{tag}/", False, True),
        Case("PAPER_CARD_CACHE_SIZE", "`/`, reader 1, after a change", "/", True, True),
        Case("PAPER_CARD_CACHE_SIZE", "For you, reader 1", "/feed/for-you/", True, False),
        Case("INDEX_CARDS_CACHE_SIZE", "/tags/ after a change", "/tags/", False, True),
        Case("INDEX_CARDS_CACHE_SIZE", "/categories/ after a change", "/categories/", False, True),
        Case("FILTER_FORM_CACHE_SIZE", "`/` after a change", "/", False, True),
        Case(
            "FILTER_FORM_CACHE_SIZE",
            "tag + period after a change",
            f"/?tag={tag}&period=30d",
            False,
            True,
        ),
        Case("READER_PARTS_CACHE_SIZE", "`/`, reader 1, from the cache", "/", True, False),
        Case("READER_PARTS_CACHE_SIZE", "paper page, reader 1, from the cache", paper, True, False),
        Case("READER_PARTS_CACHE_SIZE", "`/`, reader 1, after a change", "/", True, True),
        Case("READER_PARTS_CACHE_SIZE", "personal feed, reader 1", "/feed/", True, False),
        Case("READER_PARTS_CACHE_SIZE", "For you, reader 1", "/feed/for-you/", True, False),
        Case("FOR_YOU_REASONS_CACHE_SIZE", "For you, reader 1", "/feed/for-you/", True, False),
        Case("COMMENT_CACHE_SIZE", "discussion, 200 comments", discussion, False, False),
        Case("COMMENT_CACHE_SIZE", "discussion, 200 comments, reader 1", discussion, True, False),
    ]


def timed(client, case: Case) -> tuple[float, float]:
    """Milliseconds of one request: elapsed, and of this process's CPU."""
    from catalog.changes import catalog_changed

    if case.after_change:
        catalog_changed()  # outside a transaction: at once
    started, cpu = time.perf_counter(), time.process_time()
    response = client.get(case.path)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    assert response.status_code == 200, (case.path, response.status_code)
    return elapsed * 1000, cpu * 1000


def measure(case: Case, client, *, requests: int) -> dict[str, tuple[float, float]]:
    """Median milliseconds (elapsed and CPU) with the store as configured, and with none."""
    from django.conf import settings

    size = getattr(settings, case.store)
    times: dict[int, list[tuple[float, float]]] = {size: [], 0: []}
    for turn in range(requests + 3):
        for each in (size, 0) if turn % 2 else (0, size):
            # Set on the settings object itself: a setting_changed signal
            # would empty every store.
            setattr(settings, case.store, each)
            measured = timed(client, case)
            if turn >= 3:  # the store filled, and both warmed up
                times[each].append(measured)
    setattr(settings, case.store, size)
    return {
        kind: (
            statistics.median(t[n] for t in times[size]),
            statistics.median(t[n] for t in times[0]),
        )
        for n, kind in enumerate(("elapsed", "cpu"))
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--only", default="", help="measure only stores or pages containing this")
    options = parser.parse_args()

    os.environ.update(database.django_env(REDIS_URL=REDIS_URL, CATALOG_CACHE_URL=REDIS_URL))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    from django.contrib.auth import get_user_model
    from django.db.models import Count
    from django.test import Client

    from bench.measure import discussion_path
    from catalog.models import Paper, Tag

    tag = Tag.objects.annotate(n=Count("papers")).order_by("-n")[10].slug
    paper = Paper.objects.visible().order_by("-id")[1000].get_absolute_url()
    anonymous, reader = Client(), Client()
    reader.force_login(get_user_model().objects.get(username="reader1"))
    print(
        "| store | page | with the store (ms) | without (ms) | saved (ms)"
        " | CPU with (ms) | CPU without (ms) | CPU saved |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for case in cases(tag=tag, paper=paper, discussion=discussion_path()):
        if options.only not in f"{case.store} {case.label}":
            continue
        found = measure(case, reader if case.reader else anonymous, requests=options.requests)
        (kept, none), (cpu_kept, cpu_none) = found["elapsed"], found["cpu"]
        print(
            f"| `{case.store}` | {case.label} | {kept:.1f} | {none:.1f} | {none - kept:.1f}"
            f" | {cpu_kept:.1f} | {cpu_none:.1f} | {(cpu_none - cpu_kept) / cpu_none:.0%} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
