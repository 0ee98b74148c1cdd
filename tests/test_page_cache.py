"""Anonymous pages in the catalog cache: one entry per canonical page, per host
and scheme, stored compressed, never outliving the catalog version they were
rendered under. (The cache's memory bound under a flood is a fault test:
tests/faults/test_cache_flood.py.)"""

import pytest
import redis
from django.core.cache import caches

from catalog import cache as catalog_cache
from tests.factories import PaperFactory, TagFactory
from tests.services import redis_db_url

pytestmark = pytest.mark.django_db
TEST_REDIS = redis_db_url(9)


@pytest.fixture
def server(settings):
    """The catalog cache as configured in production, on this suite's own Redis database."""
    settings.CACHES = {
        **settings.CACHES,
        "catalog": {**settings.CATALOG_CACHE_REDIS, "LOCATION": TEST_REDIS},
    }
    server = redis.Redis.from_url(TEST_REDIS)
    server.flushdb()
    yield server
    server.flushdb()


def page_keys(server) -> list[bytes]:
    return server.keys("*catalog:page:*")


def test_unknown_parameters_neither_make_new_entries_nor_reach_the_page(client, server):
    PaperFactory()
    client.get("/")
    responses = [client.get(f"/?utm_source=mail&x={n}") for n in range(5)]

    assert len(page_keys(server)) == 1
    assert all(r.status_code == 200 for r in responses)
    assert all("utm_source" not in r.content.decode() for r in responses)


def test_order_repeats_and_empty_fields_of_known_parameters_share_one_entry(client, server):
    a, b = TagFactory(slug="a"), TagFactory(slug="b")
    PaperFactory(tags=[a, b])
    variants = [
        "/?tag=a&tag=b&q=study",
        "/?q=study&tag=b&tag=a",
        "/?tag=b&tag=a&tag=b&q=other&q=study",
        # The filter form sends every field, filled or not.
        "/?q=study&period=&has_code=&tag=a&tag=b&from=&to=",
    ]
    pages = [client.get(path) for path in variants]

    assert len(page_keys(server)) == 1
    assert all("A study of reasoning" in page.content.decode() for page in pages)


def test_each_host_and_scheme_has_its_own_entry(client, server, settings):
    settings.ALLOWED_HOSTS = ["testserver", "mirror.example"]
    settings.TRUSTED_PROXY_COUNT = 1
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    paper = PaperFactory()
    url = paper.get_absolute_url()

    client.get(url, HTTP_HOST="mirror.example")
    client.get(url, HTTP_X_FORWARDED_PROTO="https")
    page = client.get(url).content.decode()

    assert f'<link rel="canonical" href="http://testserver{url}">' in page
    assert len(page_keys(server)) == 3


def test_pages_are_stored_compressed(client, server):
    PaperFactory.create_batch(20)
    page = client.get("/").content

    (key,) = page_keys(server)
    assert server.strlen(key) < len(page) / 3


def test_a_lost_version_never_brings_back_pages_of_an_older_one(client, server):
    paper = PaperFactory(title="First title")
    client.get("/")
    paper.title = "Second title"
    paper.save()
    catalog_cache.bump_catalog_version()
    assert "Second title" in client.get("/").content.decode()

    # Evicted, as a cache under memory pressure may do with any key.
    caches["catalog"].delete(catalog_cache.VERSION_KEY)

    assert "Second title" in client.get("/").content.decode()


def test_head_is_answered_from_the_cache_like_get(client, server, django_assert_num_queries):
    PaperFactory()
    client.get("/")

    with django_assert_num_queries(0):
        response = client.head("/")
    assert response.status_code == 200
    assert response.content == b""
