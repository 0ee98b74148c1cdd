"""10,000 anonymous saves and follows against the production shape (gunicorn
behind nginx, the broker and the page cache in Redis servers of their own):
each is sent to log in, and none leaves a session row, a key in either Redis
or a byte of the broker's memory behind. (Each used to create a session: a
row and a broker key kept for 14 days.)"""

import re
from urllib.parse import urlsplit

import pytest
import requests
from django.contrib.sessions.models import Session

from tests.factories import CategoryFactory, PaperFactory, TagFactory
from tests.faults.processes import RedisServer, gunicorn, nginx, site_env, wrk

pytestmark = [pytest.mark.slow, pytest.mark.long, pytest.mark.django_db(transaction=True)]
POSTS = 10_000
# Posts as a browser sends them, with the CSRF cookie and token, in turn to
# each save or follow address.
FLOOD = """
local paths = {}
for path in string.gmatch(os.getenv("FLOOD_PATHS"), "[^ ]+") do paths[#paths + 1] = path end
local token = os.getenv("CSRF_TOKEN")
local n = 0
function init(args) not_ok = 0 end
function request()
  n = n + 1
  return wrk.format("POST", paths[n % #paths + 1], {
    ["Cookie"] = "csrftoken=" .. token,
    ["X-CSRFToken"] = token,
    ["Content-Length"] = "0",
  })
end
"""


@pytest.fixture
def servers():
    started = [RedisServer(), RedisServer()]
    for server in started:
        server.start()
    yield started
    for server in started:
        server.stop()


def used_memory(redis: RedisServer) -> int:
    return int(re.search(r"used_memory:(\d+)", redis.cli("INFO", "memory"))[1])


def test_ten_thousand_anonymous_posts_leave_no_session_and_no_key(servers):
    broker, cache = servers
    paper, tag, category = PaperFactory(), TagFactory(), CategoryFactory(code="cs.CL")
    paths = [
        f"/saved/{paper.pk}/save/",
        f"/tags/{tag.slug}/subscribe/",
        f"/categories/{category.code}/subscribe/",
    ]
    env = {**site_env(redis=broker.url), "CATALOG_CACHE_URL": cache.url}

    with gunicorn(env, workers=3) as web, nginx(urlsplit(web).netloc) as base:
        token = requests.get(f"{base}/", timeout=10).cookies["csrftoken"]
        sessions = Session.objects.count()
        keys = {"broker": int(broker.cli("DBSIZE")), "cache": int(cache.cli("DBSIZE"))}
        memory = used_memory(broker)
        sent = {"requests": 0, "not_ok": 0, "errors": 0}
        while sent["requests"] < POSTS:
            # Anything but the redirect to log in counts as not ok.
            result = wrk(
                base, FLOOD, seconds=10, expect=302, FLOOD_PATHS=" ".join(paths), CSRF_TOKEN=token
            )
            sent = {name: sent[name] + int(result[name]) for name in sent}
        after = {"broker": int(broker.cli("DBSIZE")), "cache": int(cache.cli("DBSIZE"))}
        memory_after = used_memory(broker)

    print(
        f"{sent['requests']:,} anonymous posts: sessions {sessions} -> "
        f"{Session.objects.count()}, keys {keys} -> {after}, broker memory "
        f"{memory:,} -> {memory_after:,} bytes"
    )
    assert sent["not_ok"] == sent["errors"] == 0
    assert Session.objects.count() == sessions
    assert after == keys
    assert abs(memory_after - memory) < 64 * 1024
