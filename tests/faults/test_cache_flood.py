"""A flood of never-repeated anonymous addresses against the production shape:
gunicorn behind nginx, the page cache in a Redis of its own (capped, evicting
least recently used keys), the Celery broker in another that never evicts.

Made-up parameters add no entries at all; legitimate but unique searches fill
the page cache up to its cap and no further, and tasks still queue. With the
page cache in the broker's Redis, as before, the same flood leaves no room for
a task.
"""

import random
import re
import shutil
import string
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from urllib.parse import urlsplit

import pytest
import requests

from tests.factories import PaperFactory, TagFactory
from tests.faults.processes import PROJECT, RedisServer, gunicorn, nginx, site_env

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
CAP = "2mb"
CAP_BYTES = 2 * 1024 * 1024
# Unique searches until the cache is full, however busy the machine: rounds
# of wrk until then, each with its own addresses, for at most this long.
FLOOD_ROUND_SECONDS = 10
FLOOD_DEADLINE_SECONDS = 240
SEARCHES = "/?q=-floodROUNDx%dx%d"
# Every request a new address, numbered per wrk thread; counts what was not a 200.
FLOOD_SCRIPT = """
local threads = {}
local counter = 0
function setup(thread)
  table.insert(threads, thread)
  thread:set("id", #threads)
end
function init(args) not_ok = 0 end
function request()
  counter = counter + 1
  return wrk.format("GET", string.format(os.getenv("FLOOD_PATH"), id, counter))
end
function response(status, headers, body) if status ~= 200 then not_ok = not_ok + 1 end end
function done(summary, latency, requests)
  local not_ok = 0
  for _, thread in ipairs(threads) do not_ok = not_ok + thread:get("not_ok") end
  io.write(string.format("RESULT requests=%d not_ok=%d errors=%d\\n", summary.requests,
    not_ok, summary.errors.connect + summary.errors.read + summary.errors.timeout))
end
"""
PUBLISH = "from ingest.tasks import ingest_source; ingest_source.delay(424242)"


@pytest.fixture
def catalog():
    # Abstracts as long and as varied as real ones, so pages compress as theirs do.
    rng = random.Random(11)
    words = [
        "".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 11))) for _ in range(3000)
    ]
    tag = TagFactory(slug="reasoning")
    for _ in range(30):
        PaperFactory(
            title=" ".join(rng.choices(words, k=12)),
            abstract=" ".join(rng.choices(words, k=220)),
            authors=[" ".join(rng.choices(words, k=2)).title() for _ in range(6)],
            tags=[tag],
        )


def flood(base: str, path: str, *, seconds: int) -> dict[str, int]:
    """wrk sending `path` % (thread, n) for a number of seconds: every request a new address."""
    with tempfile.NamedTemporaryFile("w", suffix=".lua") as script:
        script.write(FLOOD_SCRIPT)
        script.flush()
        result = subprocess.run(
            [
                shutil.which("wrk") or "/usr/bin/wrk",
                "-t2",
                "-c8",
                f"-d{seconds}s",
                "--timeout",
                "10s",
                "-s",
                script.name,
                base,
            ],
            env={"FLOOD_PATH": path},
            capture_output=True,
            text=True,
            timeout=seconds + 60,
        )
    found = re.search(r"RESULT requests=(\d+) not_ok=(\d+) errors=(\d+)", result.stdout)
    assert found, result.stdout + result.stderr
    return dict(zip(("requests", "not_ok", "errors"), map(int, found.groups()), strict=True))


def flood_until(base: str, path: str, done: Callable[[], bool]) -> dict[str, int]:
    """Rounds of flood() until done() (or the deadline); ROUND in path numbers them."""
    totals = dict.fromkeys(("requests", "not_ok", "errors"), 0)
    deadline = time.monotonic() + FLOOD_DEADLINE_SECONDS
    round_number = 0
    while True:
        round_number += 1
        result = flood(base, path.replace("ROUND", str(round_number)), seconds=FLOOD_ROUND_SECONDS)
        totals = {name: totals[name] + result[name] for name in totals}
        if done() or time.monotonic() > deadline:
            return totals


def refused_for_memory(redis: RedisServer) -> int:
    """Writes Redis refused for want of memory (OOM errors)."""
    found = re.search(r"errorstat_OOM:count=(\d+)", redis.cli("INFO", "errorstats"))
    return int(found.group(1)) if found else 0


def memory(redis: RedisServer) -> dict[str, int]:
    info = dict(line.split(":", 1) for line in redis.cli("INFO").splitlines() if ":" in line)
    return {
        "used": int(info["used_memory"]),
        "peak": int(info["used_memory_peak"]),
        "evicted": int(info["evicted_keys"]),
        "keys": int(redis.cli("DBSIZE")),
    }


def largest_entry(redis: RedisServer) -> int:
    """Bytes of the largest key now held."""
    keys = redis.cli("--scan").split()
    return max((int(redis.cli("MEMORY", "USAGE", key) or 0) for key in keys), default=0)


def overflowed(cache: dict[str, int]) -> bool:
    return cache["evicted"] > cache["keys"]


def page_keys(redis: RedisServer) -> int:
    return len(redis.cli("--scan", "--pattern", "*catalog:page:*").split())


def publish(env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", PUBLISH],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def servers():
    started: list[RedisServer] = []

    def start(*options: str) -> RedisServer:
        server = RedisServer(*options)
        server.start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def site(broker: RedisServer, cache: RedisServer) -> dict[str, str]:
    return {
        **site_env(redis=broker.url),
        "CATALOG_CACHE_URL": cache.url,
        "TRUSTED_PROXIES": "127.0.0.1",
        # One wrk stands for a crowd of addresses: the per-address limits
        # (tests/test_rate_limits.py) would otherwise stop it first.
        "RATELIMIT_ENABLE": "0",
    }


def test_a_flood_of_new_addresses_fills_the_page_cache_to_its_cap_and_no_further(catalog, servers):
    broker = servers("--maxmemory", CAP, "--maxmemory-policy", "noeviction")
    cache = servers("--maxmemory", CAP, "--maxmemory-policy", "allkeys-lru")
    env = site(broker, cache)

    with gunicorn(env, workers=3) as web, nginx(urlsplit(web).netloc) as base:
        # The first page a worker renders is its slowest; on a busy machine it
        # could outlast the flood below.
        assert requests.get(f"{base}/", timeout=60).status_code == 200
        made_up = flood(base, "/?utm_source=%d-%d", seconds=5)
        made_up_pages = page_keys(cache)
        broker_before = memory(broker)
        # Until more pages were offered than the cache could keep, twice over.
        searches = flood_until(base, SEARCHES, lambda: overflowed(memory(cache)))
        after = memory(cache)
        largest = largest_entry(cache)
        published = publish(env)
        still_served = [requests.get(f"{base}{p}", timeout=10).status_code for p in ("/", "/?q=a")]
    broker_after = memory(broker)

    print(
        f"made-up parameters: {made_up['requests']} requests, {made_up_pages} page entry; "
        f"unique searches: {searches['requests']} requests, cache {after['used']:,} bytes "
        f"(peak {after['peak']:,}, cap {CAP_BYTES:,}, largest entry {largest:,}), "
        f"{after['keys']} keys, "
        f"{after['evicted']} evicted; broker {broker_before['used']:,} -> "
        f"{broker_after['used']:,} bytes, {broker_after['keys']} keys"
    )
    assert made_up["requests"] > 0
    assert made_up["not_ok"] == made_up["errors"] == 0
    assert made_up_pages == 1
    assert searches["not_ok"] == searches["errors"] == 0
    assert overflowed(after), "the flood never filled the cache"
    # Redis evicts before it runs a write, not after: the last page written may
    # sit on top of the cap until the next write makes room.
    assert after["used"] <= CAP_BYTES + largest
    assert published.returncode == 0, published.stderr
    assert int(broker.cli("LLEN", "ingest")) == 1  # ingest tasks have their queue
    assert still_served == [200, 200]


def test_a_page_cache_sharing_the_brokers_redis_leaves_no_room_for_tasks(catalog, servers):
    # The shape before: one capped Redis, the broker's, holding the pages too.
    shared = servers("--maxmemory", CAP, "--maxmemory-policy", "noeviction")
    # Every page the full Redis refuses is logged; here that is the point.
    env = {**site(shared, shared), "LOG_LEVEL": "CRITICAL"}

    with gunicorn(env, workers=3) as web, nginx(urlsplit(web).netloc) as base:
        searches = flood_until(base, SEARCHES, lambda: refused_for_memory(shared) > 0)
        published = publish(env)

    error = published.stderr.strip().splitlines()[-1:]
    print(f"unique searches: {searches['requests']} requests; publishing a task: {error}")
    assert published.returncode != 0
    assert "command not allowed when used memory > 'maxmemory'" in published.stderr
    assert int(shared.cli("LLEN", "ingest")) == 0
