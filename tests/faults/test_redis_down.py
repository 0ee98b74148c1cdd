"""Redis stops under a running site: pages and logging in still work (the cache
degrades, sessions are in the database), each process tells of it in one
warning a minute, and a task published meanwhile waits for Redis to return
instead of being lost; one that cannot wait is an error."""

import statistics
import subprocess
import sys
import time

import pytest
import requests

from tests.accounts_factories import PASSWORD, UserFactory
from tests.factories import PaperFactory, TagFactory
from tests.faults.processes import PROJECT, RedisServer, gunicorn, site_env, wrk

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
PUBLISH = (
    "import time\n"
    "from ingest.tasks import ingest_source\n"
    "print('publishing', flush=True)\n"
    "started = time.monotonic()\n"
    "ingest_source.delay(424242)\n"
    "print(f'published after {time.monotonic() - started:.1f}s')\n"
)
# The pages of the test above, in turn, as fast as 8 connections ask.
PAGE_MIX = """
local paths = {"/", "/?q=reasoning", "/tags/", "/tags/reasoning/", "/categories/"}
local n = 0
function init(args) not_ok = 0 end
function request() n = n + 1; return wrk.format("GET", paths[n % #paths + 1]) end
"""
ROUNDS, ROUND_SECONDS = 3, 8


@pytest.fixture
def redis():
    server = RedisServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def site_env_for(redis):
    return site_env(redis=redis.url)


def log_in(base: str, email: str) -> requests.Response:
    session = requests.Session()
    session.get(f"{base}/accounts/login/", timeout=10).raise_for_status()
    return session.post(
        f"{base}/accounts/login/",
        data={
            "login": email,
            "password": PASSWORD,
            "csrfmiddlewaretoken": session.cookies["csrftoken"],
        },
        allow_redirects=True,
        timeout=10,
    )


def publish(env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "manage.py", "shell", "-c", PUBLISH],
        cwd=PROJECT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_pages_and_log_in_work_while_redis_is_down(redis, site_env_for):
    reader = UserFactory()
    paper = PaperFactory(tags=[TagFactory(name="Reasoning", slug="reasoning")])
    pages = ["/", "/?q=reasoning", "/tags/", "/tags/reasoning/", paper.get_absolute_url()]

    with gunicorn(site_env_for) as base:
        assert [requests.get(base + p, timeout=10).status_code for p in pages] == [200] * 5
        redis.stop()

        started = time.monotonic()
        statuses = [requests.get(base + p, timeout=10).status_code for p in pages]
        logged_in = log_in(base, reader.email)
        elapsed = time.monotonic() - started

        assert statuses == [200] * 5
        assert logged_in.status_code == 200
        assert logged_in.url.endswith("/feed/")
        assert elapsed < 20, "Redis being down must not stall each page"

        redis.start()
        assert [requests.get(base + p, timeout=10).status_code for p in pages] == [200] * 5


def test_a_task_published_while_redis_is_down_is_queued_when_it_returns(redis, site_env_for):
    redis.stop()
    publisher = publish(site_env_for)
    # Once it is publishing, Redis stays away a while longer.
    assert "publishing\n" in iter(publisher.stdout.readline, ""), publisher.communicate(timeout=60)
    time.sleep(3)
    redis.start()

    out, err = publisher.communicate(timeout=60)

    assert publisher.returncode == 0, err
    assert "published after" in out
    queued = redis.cli("LRANGE", "ingest", "0", "-1")  # the ingest queue
    assert "ingest.tasks.ingest_source" in queued
    assert "424242" in queued


def test_a_task_that_cannot_wait_for_redis_fails_loudly(redis, site_env_for):
    redis.stop()

    publisher = publish(site_env_for)
    out, err = publisher.communicate(timeout=120)

    assert publisher.returncode != 0
    assert "OperationalError" in err
    assert "published after" not in out


@pytest.mark.long
def test_what_redis_down_costs_in_throughput_and_in_log_lines(redis, site_env_for, tmp_path):
    tag = TagFactory(name="Reasoning", slug="reasoning")
    PaperFactory.create_batch(30, tags=[tag])
    log = tmp_path / "gunicorn.log"

    # The same site with no Redis at all beside it computes every page too;
    # measured in turn with it, a round each, as the machine's load changes.
    with gunicorn(site_env_for, log=log) as site, gunicorn(site_env()) as without_redis:
        for base in (site, without_redis):
            wrk(base, PAGE_MIX, seconds=3)  # every page computed once (and cached)
        up = [wrk(site, PAGE_MIX, seconds=ROUND_SECONDS) for _ in range(ROUNDS)]
        redis.stop()
        down, beside = [], []
        for _ in range(ROUNDS):
            down.append(wrk(site, PAGE_MIX, seconds=ROUND_SECONDS))
            beside.append(wrk(without_redis, PAGE_MIX, seconds=ROUND_SECONDS))

    def rate(rounds: list[dict]) -> float:
        return statistics.median(r["requests"] / r["seconds"] for r in rounds)

    warnings = [line for line in log.read_text().splitlines() if "cannot be reached" in line]
    print(
        f"requests a second (median of {ROUNDS} rounds of {ROUND_SECONDS} s, 2 workers): "
        f"Redis up {rate(up):.1f}; Redis down {rate(down):.1f} ({rate(down) / rate(up):.0%} "
        f"of up); no Redis configured, in turn with it, {rate(beside):.1f} (down is "
        f"{rate(down) / rate(beside):.0%} of it); {len(warnings)} warning lines over "
        f"{sum(int(r['requests']) for r in down)} requests while down"
    )
    assert not [r for r in up + down + beside if r["not_ok"] or r["errors"]]
    # One line a minute from each of the two workers, and no traceback.
    assert 1 <= len(warnings) <= 2 * (1 + ROUNDS * 2 * ROUND_SECONDS // 60)
    assert "Traceback" not in log.read_text()
