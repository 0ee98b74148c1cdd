"""Per-address limits on anonymous pages, searches and feeds, and the client
address every per-address limit counts by."""

import pytest
from django.core.cache import cache
from django.test import Client, RequestFactory

from core.http import client_ip
from tests.accounts_factories import UserFactory
from tests.factories import PaperFactory, TagFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def limits(settings):
    # The suite runs with the limits off (so many tests from one address do
    # not trip them); here they are on, small, and counted afresh.
    settings.RATELIMIT_ENABLE = True
    settings.PAGE_RATE_LIMIT = "6/m"
    settings.SEARCH_RATE_LIMIT = "3/m"
    settings.FEED_RATE_LIMIT = "2/m"
    cache.clear()
    yield
    cache.clear()


def statuses(client: Client, path: str, times: int, **extra) -> list[int]:
    return [client.get(path, **extra).status_code for _ in range(times)]


def test_searches_are_limited_per_address_with_a_page_that_says_so(client):
    PaperFactory()

    assert statuses(client, "/?q=reasoning", 3) == [200] * 3
    refused = client.get("/?q=other")
    assert refused.status_code == 429
    assert int(refused["Retry-After"]) > 0
    assert "Too many requests" in refused.content.decode()
    # Browsing goes on; so do searches from elsewhere.
    assert client.get("/").status_code == 200
    assert client.get("/?q=reasoning", REMOTE_ADDR="198.51.100.7").status_code == 200


def test_pages_are_limited_per_address_cached_or_not(client):
    tag = TagFactory(slug="agents")
    PaperFactory(tags=[tag])
    paths = ["/", "/tags/", "/tags/agents/", "/categories/", "/", "/"]

    assert [client.get(path).status_code for path in paths] == [200] * 6
    assert client.get("/").status_code == 429
    assert client.get("/", REMOTE_ADDR="198.51.100.8").status_code == 200


def test_feeds_are_limited_per_address(client):
    PaperFactory()

    assert statuses(client, "/feeds/latest.rss", 3) == [200, 200, 429]
    assert client.get("/feeds/latest.atom", REMOTE_ADDR="198.51.100.9").status_code == 200


def test_logged_in_readers_are_not_limited(client):
    PaperFactory()
    client.force_login(UserFactory())

    assert statuses(client, "/?q=reasoning", 8) == [200] * 8


def test_health_checks_are_never_limited(client):
    assert statuses(client, "/healthz", 10) == [200] * 10


def test_behind_a_proxy_each_client_is_limited_on_its_own(client, settings):
    settings.TRUSTED_PROXIES = ["172.18.0.0/16"]
    PaperFactory()
    proxy = {"REMOTE_ADDR": "172.18.0.5"}

    assert statuses(client, "/?q=a", 4, HTTP_X_FORWARDED_FOR="203.0.113.1", **proxy)[-1] == 429
    assert client.get("/?q=a", HTTP_X_FORWARDED_FOR="203.0.113.2", **proxy).status_code == 200
    # Writing the header oneself changes nothing: the proxy appends what it saw.
    spoofed = "198.51.100.1, 203.0.113.1"
    assert client.get("/?q=a", HTTP_X_FORWARDED_FOR=spoofed, **proxy).status_code == 429


PROXY, INNER_PROXIES = "192.0.2.1", "10.0.0.0/8"


@pytest.mark.parametrize(
    ("proxies", "forwarded_for", "expected"),
    [
        ([], "", "192.0.2.1"),
        ([], "203.0.113.5", "192.0.2.1"),  # no proxy: the header is the client's claim
        ([PROXY], "", "192.0.2.1"),  # came past the proxy
        ([PROXY], "203.0.113.5", "203.0.113.5"),
        ([PROXY], "198.51.100.1, 203.0.113.5", "203.0.113.5"),
        ([PROXY, INNER_PROXIES], "198.51.100.1, 203.0.113.5, 10.0.0.2", "203.0.113.5"),
        ([PROXY, INNER_PROXIES], "203.0.113.5", "203.0.113.5"),  # skipped the outer proxy
        ([PROXY], "2001:db8::1", "2001:db8::1"),
        ([PROXY], "not-an-address", "192.0.2.1"),
        ([PROXY], " , ", "192.0.2.1"),
        (["10.9.9.9"], "203.0.113.5", "192.0.2.1"),  # a proxy, but not this peer
    ],
)
def test_the_client_address_believes_only_the_trusted_proxies(
    settings, proxies, forwarded_for, expected
):
    settings.TRUSTED_PROXIES = proxies
    request = RequestFactory().get("/", REMOTE_ADDR="192.0.2.1", HTTP_X_FORWARDED_FOR=forwarded_for)

    assert client_ip(request) == expected
