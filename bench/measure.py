"""Server time and SQL queries of each page, measured in-process on the benchmark database.

    python -m bench.measure --requests 50 --output timings.json

Run with DATABASE_URL pointing at the benchmark database (bench.run does).
Each page is requested a few times to warm up, then timed around Django's
test client: the whole request through the middleware, rendering included,
once for the page's own reader (anonymous but for the personal feed) and once
for reader 1, logged in with 30 subscriptions and 200 saved papers (given, with a
catalog cache, the pages logged-in readers share, their own parts filled in).
Queries are counted on one more request of each.
"""

import argparse
import json
import os
import statistics
import time
from dataclasses import asdict, dataclass

import django


@dataclass(frozen=True)
class Scenario:
    group: str
    label: str
    path: str
    target_ms: float
    reader: bool = False  # requested as a logged-in reader with 30 subscriptions


def scenarios(*, tag: str, category: str, common: str, rare: str, phrase: str) -> list[Scenario]:
    list_ms, search_ms = 25, 25
    return [
        Scenario("list", "list, no filter", "/", list_ms),
        Scenario("list", "tag", f"/?tag={tag}", list_ms),
        Scenario("list", "category", f"/?category={category}", list_ms),
        Scenario("list", "period 7d", "/?period=7d", list_ms),
        Scenario("list", "from/to dates", "/?from=2021-03-01&to=2021-03-31", list_ms),
        Scenario("list", "has code", "/?has_code=1", list_ms),
        Scenario(
            "list", "tag + period 30d + has code", f"/?tag={tag}&period=30d&has_code=1", list_ms
        ),
        Scenario("list", "tag page", f"/tags/{tag}/", list_ms),
        Scenario("list", "category page", f"/categories/{category}/", list_ms),
        # The path is a prolific author's page (below).
        Scenario("list", "author page", "", list_ms),
        # The path is the day of the paper the paper page shows (below).
        Scenario("list", "daily edition", "", list_ms),
        Scenario("trending", "/trending/ (7 days)", "/trending/", list_ms),
        Scenario("trending", "/trending/ (24 hours)", "/trending/?window=24h", list_ms),
        Scenario("trending", "sort=trending", "/?sort=trending", list_ms),
        Scenario("trending", "tag page, sort=trending", f"/tags/{tag}/?sort=trending", list_ms),
        Scenario("search", f"common word ({common})", f"/?q={common}", search_ms),
        Scenario("search", f"rare word ({rare})", f"/?q={rare}", search_ms),
        Scenario("search", f"phrase ({phrase})", f'/?q="{phrase.replace(" ", "+")}"', search_ms),
        Scenario("search", "common word, newest first", f"/?q={common}&sort=newest", search_ms),
        Scenario("pages", "page 1", "/", list_ms),
        Scenario("pages", "page 50", "/?page=50", list_ms),
        Scenario("pages", "page 5,000", "/?page=5000", list_ms),
        Scenario("paper", "paper page", "", 10),
        # The path is the discussion of a paper with 200 comments (below).
        Scenario("paper", "discussion, 200 comments", "", 25),
        Scenario("browse", "/tags/ with counts", "/tags/", 25),
        Scenario("browse", "/categories/ with counts", "/categories/", 25),
        Scenario("reader", "personal feed, 30 subscriptions", "/feed/", 25, reader=True),
        Scenario("reader", "For you, 470 recommendations", "/feed/for-you/", 25, reader=True),
        Scenario("feeds", "/feeds/latest.rss", "/feeds/latest.rss", 50),
        # The JSON API beside the list page: the same filters and the same targets.
        Scenario("api", "API papers, no filter", "/api/v1/papers", list_ms),
        Scenario("api", "API papers, tag", f"/api/v1/papers?tag={tag}", list_ms),
        Scenario(
            "api",
            "API papers, tag + period 30d + has code",
            f"/api/v1/papers?tag={tag}&period=30d&has_code=1",
            list_ms,
        ),
        Scenario(
            "api", f"API papers, common word ({common})", f"/api/v1/papers?q={common}", search_ms
        ),
        Scenario("api", "API papers, cursor 100,000 deep", "", list_ms),
        Scenario("api", "API paper", "", 10),
    ]


@dataclass
class Timing:
    group: str
    label: str
    path: str
    target_ms: float
    p50_ms: float
    p95_ms: float
    max_ms: float
    reader_p50_ms: float
    reader_p95_ms: float
    # CPU time of the request: this process's and its PostgreSQL backend's.
    cpu_p95_ms: float
    reader_cpu_p95_ms: float
    queries: int
    reader_queries: int
    status: int


def count_queries(client, path: str) -> int:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client.get(path)  # the reader's session is read from the cache from now on
    with CaptureQueriesContext(connection) as queries:
        client.get(path)
    return len(queries.captured_queries)


def cpu_ns(pid: int | None) -> int:
    """Nanoseconds a process has run on a CPU (the scheduler's own count):
    unlike the time a request takes, it does not grow when other work shares
    the machine's cores."""
    if pid is None:
        return 0
    with open(f"/proc/{pid}/schedstat", encoding="ascii") as stats:
        return int(stats.read().split()[0])


def backend_pid() -> int | None:
    from django.db import connection

    return connection.connection.info.backend_pid if connection.connection else None


def timed(client, path: str, requests: int, warmup: int) -> tuple[list[float], list[float], int]:
    """Sorted milliseconds of each request, sorted milliseconds of CPU time it
    took of this process and its PostgreSQL backend (on the same machine), and
    a status other than 200 if one came."""
    for _ in range(warmup):
        client.get(path)
    times, cpu_times, status = [], [], 200
    for _ in range(requests):
        backend = backend_pid()
        cpu_started = cpu_ns(os.getpid()) + cpu_ns(backend)
        started = time.perf_counter()
        response = client.get(path)
        times.append((time.perf_counter() - started) * 1000)
        cpu_times.append((cpu_ns(os.getpid()) + cpu_ns(backend) - cpu_started) / 1e6)
        if response.status_code != 200:
            status = response.status_code
    return sorted(times), sorted(cpu_times), status


def p95(times: list[float]) -> float:
    return times[max(0, round(0.95 * len(times)) - 1)]


def measure(scenario: Scenario, client, reader, requests: int, warmup: int) -> Timing:
    times, cpu_times, status = timed(client, scenario.path, requests, warmup)
    reader_times, reader_cpu_times, reader_status = timed(reader, scenario.path, requests, warmup)
    return Timing(
        group=scenario.group,
        label=scenario.label,
        path=scenario.path,
        target_ms=scenario.target_ms,
        p50_ms=statistics.median(times),
        p95_ms=p95(times),
        max_ms=times[-1],
        reader_p50_ms=statistics.median(reader_times),
        reader_p95_ms=p95(reader_times),
        cpu_p95_ms=p95(cpu_times),
        reader_cpu_p95_ms=p95(reader_cpu_times),
        queries=count_queries(client, scenario.path),
        reader_queries=count_queries(reader, scenario.path),
        status=status if status != 200 else reader_status,
    )


def with_comments(paper, *, count: int = 200):
    """The paper, given `count` comments (a reply under every fourth) by the
    benchmark's readers the first time it is asked for."""
    from django.contrib.auth import get_user_model

    from catalog.rendering import render_markdown
    from discussion.models import Comment
    from discussion.services import recount

    missing = count - Comment.objects.filter(paper=paper).count()
    if missing <= 0:
        return paper
    writers = list(get_user_model().objects.order_by("pk")[:20])
    body = "A remark on **the method**, with $x^2$ in it."
    html = render_markdown(body)
    for n in range(missing):
        parent = None
        if n % 4 == 3:
            parent = Comment.objects.filter(paper=paper, parent=None).order_by("-id").first()
        Comment.objects.create(
            paper=paper, author=writers[n % len(writers)], parent=parent, body=body, body_html=html
        )
    recount(paper.pk)
    return paper


def discussion_path() -> str:
    """The discussion page of the benchmark's discussed paper, given its 200 comments."""
    from catalog.models import Paper

    discussed = with_comments(Paper.objects.visible().order_by("-id")[1001])
    if discussed.arxiv_id:
        return f"/papers/{discussed.arxiv_id}/discussion/"
    return f"/p/{discussed.pk}/discussion/"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--only", default="", help="measure only labels containing this")
    parser.add_argument("--output", default="")
    options = parser.parse_args()

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    from django.contrib.auth import get_user_model
    from django.db.models import Count
    from django.test import Client

    from catalog.models import Author, Category, Paper, Tag

    # A mid-sized tag and category: the busiest are easy for a newest-first scan.
    tags = Tag.objects.annotate(n=Count("papers")).order_by("-n")
    categories = Category.objects.annotate(n=Count("papers")).order_by("-n")
    chosen = {
        "tag": tags[10].slug,
        "category": categories[5].code,
        "common": "reasoning",
        "rare": "thinkingtuning",
        "phrase": "language models",
    }
    paper = Paper.objects.visible().order_by("-id")[1000]
    # A prolific author, as the tag is a mid-sized tag.
    author = Author.objects.annotate(n=Count("papers")).order_by("-n")[10]
    # The cursor the API hands out after the 100,000th paper of the whole list.
    from api.cursors import encode
    from catalog.models import NEWEST_FIRST

    deep = Paper.objects.visible().order_by(*NEWEST_FIRST)[min(100_000, Paper.objects.count() // 2)]
    deep_cursor = encode({"listed_at": deep.listed_at.isoformat(), "id": deep.pk})
    anonymous, reader = Client(), Client()
    reader.force_login(get_user_model().objects.get(username="reader1"))
    results = []
    for scenario in scenarios(**chosen):
        if scenario.label == "paper page":
            scenario = Scenario(**{**asdict(scenario), "path": paper.get_absolute_url()})
        if scenario.label == "author page":
            scenario = Scenario(**{**asdict(scenario), "path": author.get_absolute_url()})
        if scenario.label == "discussion, 200 comments":
            scenario = Scenario(**{**asdict(scenario), "path": discussion_path()})
        if scenario.label == "daily edition":
            day = paper.announced_or_added_at.date().isoformat()
            scenario = Scenario(**{**asdict(scenario), "path": f"/daily/{day}/"})
        if scenario.label == "API paper":
            scenario = Scenario(**{**asdict(scenario), "path": f"/api/v1/papers/{paper.pk}"})
        if scenario.label == "API papers, cursor 100,000 deep":
            path = f"/api/v1/papers?cursor={deep_cursor}"
            scenario = Scenario(**{**asdict(scenario), "path": path})
        if options.only and options.only not in scenario.label:
            continue
        client = reader if scenario.reader else anonymous
        timing = measure(scenario, client, reader, options.requests, options.warmup)
        results.append(asdict(timing))
        print(
            f"  {timing.label:40} p50 {timing.p50_ms:7.1f} ms  p95 {timing.p95_ms:7.1f} ms"
            f"  reader p50 {timing.reader_p50_ms:7.1f} ms  p95 {timing.reader_p95_ms:7.1f} ms"
            f"  CPU p95 {timing.cpu_p95_ms:5.1f} / {timing.reader_cpu_p95_ms:5.1f} ms"
            f"  {timing.queries:2} / {timing.reader_queries:2} queries  {timing.status}",
            flush=True,
        )
    if options.output:
        with open(options.output, "w", encoding="utf-8") as out:
            json.dump({"chosen": chosen, "timings": results}, out, indent=1)


if __name__ == "__main__":
    main()
