"""Log-in throttling and lock-out, shared by the site's form and the admin's.

Failed log-ins count per client address and per address and account together:
a guesser is slowed down and locked out of the account from where they guess,
never the account's owner logging in from elsewhere. Right and wrong passwords
cost the same time, so timing tells nothing.
"""

import itertools
import statistics
import time

import pytest
from django.conf import settings
from django.contrib.auth.hashers import Argon2PasswordHasher
from django.test import Client

from tests.accounts_factories import PASSWORD, UserFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_rate_limits")]
LOCKED = "Too many failed login attempts"
addresses = (f"10.{n // 250}.{n % 250}.1" for n in itertools.count(1))


def site_log_in(client: Client, login: str, password: str, *, address: str, **extra):
    return client.post(
        "/accounts/login/", {"login": login, "password": password}, REMOTE_ADDR=address, **extra
    )


def admin_log_in(client: Client, username: str, password: str, *, address: str, **extra):
    return client.post(
        "/admin/login/?next=/admin/",
        {"username": username, "password": password, "next": "/admin/"},
        REMOTE_ADDR=address,
        **extra,
    )


def logged_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


def test_the_admin_log_in_locks_out_after_repeated_failures(client):
    curator = UserFactory(is_staff=True)
    attacker = "203.0.113.7"
    for _ in range(settings.LOGIN_FAILURES_ALLOWED):
        assert admin_log_in(client, curator.username, "guess", address=attacker).status_code == 200

    refused = admin_log_in(client, curator.username, PASSWORD, address=attacker)
    assert refused.status_code == 200
    assert LOCKED in refused.content.decode()
    assert not logged_in(client)

    # The curator, elsewhere, logs in as usual.
    response = admin_log_in(Client(), curator.username, PASSWORD, address="198.51.100.20")
    assert response.status_code == 302


def test_failures_on_the_site_and_the_admin_count_toward_one_lock_out():
    curator = UserFactory(is_staff=True)
    attacker = "203.0.113.8"
    half = settings.LOGIN_FAILURES_ALLOWED // 2
    for _ in range(half):
        site_log_in(Client(), curator.email, "guess", address=attacker)
    for _ in range(settings.LOGIN_FAILURES_ALLOWED - half):
        admin_log_in(Client(), curator.username, "guess", address=attacker)

    site, admin = Client(), Client()
    on_site = site_log_in(site, curator.email, PASSWORD, address=attacker)
    on_admin = admin_log_in(admin, curator.username, PASSWORD, address=attacker)
    assert LOCKED in on_site.content.decode() and LOCKED in on_admin.content.decode()
    assert not logged_in(site) and not logged_in(admin)


def test_failures_count_toward_one_lock_out_whatever_the_case_of_the_login():
    curator = UserFactory(is_staff=True, username="curator")
    attacker = "203.0.113.12"
    logins = ["CURATOR", "Curator", "cUrAtOr", curator.email.upper(), "curator"]
    for login in logins[: settings.LOGIN_FAILURES_ALLOWED]:
        admin_log_in(Client(), login, "guess", address=attacker)

    client = Client()
    refused = admin_log_in(client, "curator", PASSWORD, address=attacker)
    assert LOCKED in refused.content.decode()
    assert not logged_in(client)


def test_unknown_logins_differing_in_case_share_one_count():
    attacker = "203.0.113.13"
    for login in ["Nobody", "NOBODY", "nobody", "NoBody", "nobodY"]:
        admin_log_in(Client(), login, "guess", address=attacker)

    refused = admin_log_in(Client(), "nobody", "guess", address=attacker)
    assert LOCKED in refused.content.decode()


def test_a_guesser_cannot_lock_the_owner_out_from_elsewhere(client):
    reader = UserFactory()
    for _ in range(settings.LOGIN_FAILURES_ALLOWED * 3):
        site_log_in(Client(), reader.email, "guess", address="203.0.113.9")

    response = site_log_in(client, reader.email, PASSWORD, address="198.51.100.30")
    assert response.status_code == 302
    assert logged_in(client)


@pytest.mark.slow  # dozens of password hashes
def test_one_address_guessing_across_many_accounts_is_slowed_down():
    readers = UserFactory.create_batch(21)
    responses = [
        site_log_in(Client(), reader.email, "guess", address="203.0.113.10") for reader in readers
    ]
    # Each account saw one failure, but the address has used up its minute.
    assert all(LOCKED not in r.content.decode() for r in responses[:20])
    assert LOCKED in responses[20].content.decode()
    same_address = site_log_in(Client(), readers[0].email, PASSWORD, address="203.0.113.10")
    assert LOCKED in same_address.content.decode()
    elsewhere = site_log_in(Client(), readers[0].email, PASSWORD, address="198.51.100.31")
    assert elsewhere.status_code == 302


@pytest.mark.slow  # dozens of password hashes
def test_behind_a_proxy_each_client_is_counted_by_its_own_address(settings):
    settings.TRUSTED_PROXIES = ["172.18.0.0/16"]
    readers = UserFactory.create_batch(21)
    proxy = "172.18.0.5"
    for reader in readers:
        site_log_in(
            Client(), reader.email, "guess", address=proxy, HTTP_X_FORWARDED_FOR="203.0.113.11"
        )

    # Another client behind the same proxy is not held back by the first one's failures.
    other = Client()
    response = site_log_in(
        other, readers[0].email, PASSWORD, address=proxy, HTTP_X_FORWARDED_FOR="198.51.100.32"
    )
    assert response.status_code == 302
    # A client cannot pose as another by writing the header itself: the proxy
    # appends the address it saw, and only that entry is believed.
    spoofing = site_log_in(
        Client(),
        readers[1].email,
        PASSWORD,
        address=proxy,
        HTTP_X_FORWARDED_FOR="198.51.100.33, 203.0.113.11",
    )
    assert LOCKED in spoofing.content.decode()


class HashCounter:
    def __init__(self, monkeypatch) -> None:
        self.count = 0
        for name in ("verify", "encode"):
            original = getattr(Argon2PasswordHasher, name)

            def counted(hasher, *args, _original=original, **kwargs):
                self.count += 1
                return _original(hasher, *args, **kwargs)

            monkeypatch.setattr(Argon2PasswordHasher, name, counted)

    def during(self, attempt) -> int:
        self.count = 0
        attempt()
        return self.count


def test_every_log_in_attempt_costs_exactly_one_password_hash(monkeypatch):
    curator = UserFactory(is_staff=True)
    hashes = HashCounter(monkeypatch)

    def attempt(log_in, login, password):
        return lambda: log_in(Client(), login, password, address=next(addresses))

    attempts = {
        "admin, right password": attempt(admin_log_in, curator.username, PASSWORD),
        "admin, wrong password": attempt(admin_log_in, curator.username, "guess"),
        "admin, unknown account": attempt(admin_log_in, "nobody", "guess"),
        "admin, by email": attempt(admin_log_in, curator.email, "guess"),
        "site, right password": attempt(site_log_in, curator.email, PASSWORD),
        "site, wrong password": attempt(site_log_in, curator.email, "guess"),
        "site, unknown account": attempt(site_log_in, "nobody@example.com", "guess"),
    }
    assert {name: hashes.during(run) for name, run in attempts.items()} == dict.fromkeys(
        attempts, 1
    )


@pytest.mark.slow  # timed over many log-ins
@pytest.mark.parametrize(
    ("log_in", "login"),
    [(admin_log_in, "username"), (site_log_in, "email")],
    ids=["admin", "site"],
)
def test_a_wrong_password_takes_as_long_as_the_right_one(log_in, login):
    user = UserFactory(is_staff=True)

    def timed(password: str) -> float:
        client = Client()
        started = time.perf_counter()
        log_in(client, getattr(user, login), password, address=next(addresses))
        elapsed = time.perf_counter() - started
        assert logged_in(client) == (password == PASSWORD)
        return elapsed

    timed(PASSWORD)  # warm up: templates, connections
    right, wrong, ratios = [], [], []
    # In pairs, one attempt right after the other (either first, in turn), each
    # pair's own ratio taken: a busy moment on the machine (other tests running
    # beside these) slows both of a pair alike, and only a few pairs.
    for n in range(12):
        order = ("right", "wrong") if n % 2 == 0 else ("wrong", "right")
        pair = {
            kind: timed(PASSWORD if kind == "right" else "wrong password guess") for kind in order
        }
        right.append(pair["right"])
        wrong.append(pair["wrong"])
        ratios.append(pair["wrong"] / pair["right"])
    ratio = statistics.median(ratios)
    figures = (
        f"median of 12 pairs: wrong {statistics.median(wrong) * 1000:.0f} ms, "
        f"right {statistics.median(right) * 1000:.0f} ms, ratio {ratio:.2f}"
    )
    print(figures)
    assert 0.75 < ratio < 1.33, figures
