"""Forwarded headers are believed only from TRUSTED_PROXIES: a client reaching
gunicorn directly cannot pose as another address, escape a per-address limit
or the log-in lock-out, or claim HTTPS, whatever it writes into the headers."""

import os
import subprocess
import sys

import pytest
from django.conf import settings as django_settings
from django.core.cache import cache
from django.test import Client

from tests.accounts_factories import PASSWORD, UserFactory
from tests.factories import PaperFactory

pytestmark = pytest.mark.django_db
PROXY = "172.18.0.5"
DIRECT = "203.0.113.40"
LOCKED = "Too many failed login attempts"


@pytest.fixture(autouse=True)
def behind_a_proxy(settings):
    settings.TRUSTED_PROXIES = ["172.18.0.0/16"]
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    cache.clear()
    yield
    cache.clear()


def test_a_direct_client_is_limited_by_its_own_address_whatever_it_forwards(client, settings):
    settings.RATELIMIT_ENABLE = True
    settings.SEARCH_RATE_LIMIT = "3/m"
    PaperFactory()

    statuses = [
        client.get("/?q=a", REMOTE_ADDR=DIRECT, HTTP_X_FORWARDED_FOR=f"198.51.100.{n}").status_code
        for n in range(4)
    ]

    assert statuses == [200, 200, 200, 429]
    # Through the proxy, the address it reports is the one counted.
    proxied = client.get("/?q=a", REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR="198.51.100.1")
    assert proxied.status_code == 200


def test_a_direct_client_cannot_escape_the_log_in_lock_out_by_forwarding(settings):
    reader = UserFactory()
    for n in range(settings.LOGIN_FAILURES_ALLOWED):
        Client().post(
            "/accounts/login/",
            {"login": reader.email, "password": "guess"},
            REMOTE_ADDR=DIRECT,
            HTTP_X_FORWARDED_FOR=f"198.51.100.{n}",
        )

    refused = Client().post(
        "/accounts/login/",
        {"login": reader.email, "password": PASSWORD},
        REMOTE_ADDR=DIRECT,
        HTTP_X_FORWARDED_FOR="198.51.100.99",
    )
    assert LOCKED in refused.content.decode()


def test_only_the_proxy_can_say_the_request_came_over_https(client, settings):
    settings.SECURE_SSL_REDIRECT = True
    url = PaperFactory().get_absolute_url()

    direct = client.get(url, REMOTE_ADDR=DIRECT, HTTP_X_FORWARDED_PROTO="https")
    proxied = client.get(url, REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_PROTO="https")

    assert direct.status_code == 301
    assert direct["Location"] == f"https://testserver{url}"
    assert proxied.status_code == 200


@pytest.mark.parametrize("proxies", ["10.0.0.0/33", "not-an-address"])
def test_a_trusted_proxy_that_is_no_address_stops_the_site_from_starting(proxies):
    env = {**os.environ, "TRUSTED_PROXIES": proxies}
    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=django_settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.returncode != 0
    assert "ImproperlyConfigured: TRUSTED_PROXIES" in result.stderr
