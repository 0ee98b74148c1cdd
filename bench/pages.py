"""Timing one page in this process's Django, for the benchmarks that time
their own pages (bench.fulltext, bench.hybrid); Django is set up by them."""

import statistics
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from django.test import Client


def time_page(client: "Client", path: str, *, requests: int) -> tuple[float, float, int]:
    """(p50 ms, p95 ms, queries) of path, after three warm-up requests."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    for _ in range(3):
        assert client.get(path).status_code == 200, path
    timings = []
    for _ in range(requests):
        started = time.perf_counter()
        client.get(path)
        timings.append((time.perf_counter() - started) * 1000)
    with CaptureQueriesContext(connection) as captured:
        client.get(path)
    p95 = statistics.quantiles(timings, n=20)[18]
    return statistics.median(timings), p95, len(captured.captured_queries)
