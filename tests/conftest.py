"""Fixtures shared by the suite's test files.

The stand-ins for outside services (arXiv's API and listing feeds, its OAI-PMH
endpoint, a language model, Sentry) live in their own modules, with what a
test scripts them with (Fault, entry_id...); here they are started for a test
and the settings pointed at them. Factories stay in their factory modules.
"""

import os
import time
from collections.abc import Iterator

import django_ratelimit.core
import pytest
import redis
from django.conf import settings
from django.core.cache import cache, caches
from django.test import Client
from django.utils import translation

from ingest.http import SourceHttp
from tests import arxiv_server, sources_server
from tests.accounts_factories import CuratorFactory
from tests.arxiv_server import FakeArxiv, recorded_entries
from tests.fake_llm_server import FakeLLMServer, running_fake_llm
from tests.oai_server import FakeSleep, running_oai
from tests.sentry_server import FakeSentry
from tests.services import redis_db_url
from tests.sources_server import FakeSources

# The Redis database of the catalog cache in tests where a stale page must fail.
CATALOG_CACHE_REDIS = redis_db_url(8)


@pytest.fixture(autouse=True)
def site_language() -> Iterator[None]:
    """Each test starts in the site's language: a request's LocaleMiddleware
    leaves the language it chose active in the thread, and a test reading a
    translated label outside a request would otherwise read the last one's."""
    translation.activate(settings.LANGUAGE_CODE)
    yield
    translation.deactivate()


@pytest.fixture(autouse=True)
def vector_dir(settings, tmp_path):
    """Each test's own directory of text vectors (the tf-idf model, the neighbours'
    index): the one `make run` fills holds another database's paper ids, which a
    search would find as papers "related in meaning" to its words."""
    settings.VECTOR_DIR = tmp_path / "vectors"
    return settings.VECTOR_DIR


class _StoppedClock:
    def __init__(self, now: float) -> None:
        self.now = now

    def time(self) -> float:
        return self.now


@pytest.fixture(autouse=True)
def rate_limit_window(monkeypatch) -> None:
    """Each test's rate limits count in one window: django-ratelimit's windows
    are fixed (a key's minute ends at a jittered second), so a test counting
    five requests against "4/m" would otherwise pass its window's end at a
    random moment now and then and see its count start again."""
    monkeypatch.setattr(django_ratelimit.core, "time", _StoppedClock(time.time()))


@pytest.fixture
def fake_arxiv(settings) -> Iterator[FakeArxiv]:
    """The fake arXiv serving 100 recorded entries, with the client set to page
    by 10 and to wait and retry briefly, so fault tests take a fraction of a second."""
    with arxiv_server.running(recorded_entries()) as server:
        settings.ARXIV_API_URL = server.url
        settings.ARXIV_LISTING_URL = server.listing_url
        settings.ARXIV_PAGE_SIZE = 10
        settings.ARXIV_DELAY_SECONDS = 0
        settings.ARXIV_REQUEST_TIMEOUT = 0.5
        settings.ARXIV_MAX_RETRIES = 3
        settings.ARXIV_RETRY_BASE_WAIT = 0.01
        settings.ARXIV_RETRY_MAX_WAIT = 2
        yield server


@pytest.fixture(autouse=True)
def no_outside_sources(settings) -> None:
    """Crossref, OpenReview and the ACL Anthology at an address nothing answers on,
    unless a test serves them (fake_sources): tests never reach the network."""
    settings.CROSSREF_API_URL = "http://127.0.0.1:9/crossref"
    settings.OPENREVIEW_API_URL = "http://127.0.0.1:9/openreview"
    settings.ACL_ANTHOLOGY_URL = "http://127.0.0.1:9/acl"


@pytest.fixture
def fake_sources(settings, fake_arxiv) -> Iterator[FakeSources]:
    """Crossref, OpenReview and the ACL Anthology served from recorded answers, with
    the fake arXiv's brief waits and retries, and no delay between requests."""
    with sources_server.running() as server:
        settings.CROSSREF_API_URL = server.url("crossref")
        settings.OPENREVIEW_API_URL = server.url("openreview")
        settings.ACL_ANTHOLOGY_URL = server.url("acl")
        settings.CROSSREF_DELAY_SECONDS = 0
        settings.OPENREVIEW_DELAY_SECONDS = 0
        settings.ACL_ANTHOLOGY_DELAY_SECONDS = 0
        yield server


@pytest.fixture
def oai_server(settings):
    """An OAI-PMH endpoint on 127.0.0.1 answering from a script, one step per
    request, and a client of it (http) whose retry waits are observed (sleep)."""
    with running_oai() as server:
        settings.ARXIV_OAI_URL = server.url
        settings.ARXIV_DELAY_SECONDS = 0.2
        server.sleep = FakeSleep()
        server.http = SourceHttp(
            user_agent="Papershelf-test/1.0 (mailto:test@example.org)",
            # Generous, so a busy machine never turns a scripted answer into a timeout.
            timeout=10,
            max_retries=2,
            retry_base_wait=1,
            retry_max_wait=60,
            sleep=server.sleep,
        )
        yield server


@pytest.fixture
def fake_llm(settings) -> Iterator[FakeLLMServer]:
    """The openai summary backend pointed at a scripted chat-completions server."""
    with running_fake_llm(settings) as server:
        yield server


@pytest.fixture
def fake_sentry() -> Iterator[FakeSentry]:
    fake = FakeSentry().start()
    yield fake
    fake.stop()


@pytest.fixture
def redis_cache(settings):
    """The catalog cache in this suite's Redis, for tests where a stale page must
    fail: anonymous pages are then served from it until the catalog version is
    bumped. Its keys are this test process's own, emptied before and after: the
    processes of a parallel run (pytest -n) share the Redis database."""
    prefix = f"tests-{os.getpid()}"
    settings.CACHES = {
        **settings.CACHES,
        "catalog": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": CATALOG_CACHE_REDIS,
            "KEY_PREFIX": prefix,
            "OPTIONS": {"IGNORE_EXCEPTIONS": True, "SOCKET_CONNECT_TIMEOUT": 0.5},
        },
    }
    server = redis.Redis.from_url(CATALOG_CACHE_REDIS)

    def empty() -> None:
        keys = list(server.scan_iter(match=f"{prefix}:*", count=1000))
        if keys:
            server.delete(*keys)

    empty()
    yield caches["catalog"]
    empty()
    server.close()


@pytest.fixture
def fresh_rate_limits():
    """allauth counts (log-in) attempts in the default cache: each test's count its own."""
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def curator_client(client) -> Client:
    client.force_login(CuratorFactory())
    return client
