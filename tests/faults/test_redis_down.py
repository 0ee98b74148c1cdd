"""Redis stops under a running site: pages and logging in still work (the cache
degrades, sessions are in the database), and a task published meanwhile waits
for Redis to return instead of being lost; one that cannot wait is an error."""

import subprocess
import sys
import time

import pytest
import requests

from tests.accounts_factories import PASSWORD, UserFactory
from tests.factories import PaperFactory, TagFactory
from tests.faults.processes import PROJECT, RedisServer, gunicorn, site_env

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
PUBLISH = (
    "import time\n"
    "from ingest.tasks import ingest_source\n"
    "started = time.monotonic()\n"
    "ingest_source.delay(424242)\n"
    "print(f'published after {time.monotonic() - started:.1f}s')\n"
)


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
