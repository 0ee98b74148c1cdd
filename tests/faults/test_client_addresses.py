"""Per-address limits behind the production shape's proxy: the site counts each
client by its own address, which nginx appends to X-Forwarded-For
(nginx, on 127.0.0.1, is the one trusted proxy), not by nginx's, and a client cannot pose as another
by writing the header itself. Clients come from different loopback addresses."""

import pytest
import requests
from django.conf import settings
from requests.adapters import HTTPAdapter

from tests.accounts_factories import PASSWORD, UserFactory
from tests.factories import PaperFactory
from tests.faults.processes import gunicorn, named_redis, nginx, site_env

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
ATTACKER, READER = "127.0.0.2", "127.0.0.3"


class FromAddress(HTTPAdapter):
    """Connections from a chosen local address."""

    def __init__(self, address: str) -> None:
        self.address = address
        super().__init__()

    def init_poolmanager(self, *args, **kwargs) -> None:
        kwargs["source_address"] = (self.address, 0)
        super().init_poolmanager(*args, **kwargs)


def client_at(address: str) -> requests.Session:
    session = requests.Session()
    session.mount("http://", FromAddress(address))
    return session


def log_in(session: requests.Session, base: str, email: str, password: str) -> requests.Response:
    session.get(f"{base}/accounts/login/", timeout=10).raise_for_status()
    return session.post(
        f"{base}/accounts/login/",
        data={
            "login": email,
            "password": password,
            "csrfmiddlewaretoken": session.cookies["csrftoken"],
        },
        headers={"Referer": f"{base}/accounts/login/"},
        allow_redirects=False,
        timeout=30,
    )


@pytest.fixture
def redis():
    # The counts of the limits, in the cache.
    with named_redis(7) as url:
        yield url


def test_each_client_behind_nginx_is_limited_by_its_own_address(redis):
    PaperFactory()
    reader = UserFactory()
    env = {
        **site_env(redis=redis),
        "TRUSTED_PROXIES": "127.0.0.1",
        "RATELIMIT_ENABLE": "1",
        "SEARCH_RATE_LIMIT": "3/m",
    }

    with gunicorn(env) as web, nginx(web.removeprefix("http://")) as base:
        attacker, own = client_at(ATTACKER), client_at(READER)
        searches = [attacker.get(f"{base}/?q=a", timeout=10).status_code for _ in range(4)]
        posing = attacker.get(f"{base}/?q=a", headers={"X-Forwarded-For": READER}, timeout=10)
        elsewhere = own.get(f"{base}/?q=a", timeout=10)

        guesses = [
            log_in(client_at(ATTACKER), base, reader.email, "a wrong guess").status_code
            for _ in range(settings.LOGIN_FAILURES_ALLOWED)
        ]
        attacker_with_the_password = log_in(client_at(ATTACKER), base, reader.email, PASSWORD)
        owner = log_in(own, base, reader.email, PASSWORD)

    assert searches == [200, 200, 200, 429]
    assert posing.status_code == 429
    assert elsewhere.status_code == 200
    assert guesses == [200] * settings.LOGIN_FAILURES_ALLOWED
    assert "Too many failed login attempts" in attacker_with_the_password.text
    assert owner.status_code == 302
