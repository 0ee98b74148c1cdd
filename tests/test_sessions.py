"""Sessions: a logged-out reader's save or follow waits for their log-in in a
signed cookie and creates no session (no row, no Redis key), however many are
posted; sessions are read through a Redis apart from the broker; expired
ones are deleted nightly."""

import datetime

import pytest
import redis
from django.contrib.sessions.backends.db import SessionStore
from django.contrib.sessions.models import Session
from django.core.cache import caches
from django.test import Client
from django.utils import timezone

from accounts.models import SavedPaper, Subscription
from accounts.services import PENDING_COOKIE, PENDING_MOST
from config.schedule import BEAT_SCHEDULE
from core.tasks import clear_expired_sessions
from tests.accounts_factories import PASSWORD, UserFactory
from tests.factories import CategoryFactory, PaperFactory, TagFactory
from tests.services import redis_db_url

pytestmark = pytest.mark.django_db
SESSION_REDIS = redis_db_url(12)


@pytest.fixture
def sessions_in_redis(settings):
    """Sessions as deployed: in the database, read through a Redis cache."""
    settings.CACHES = {
        **settings.CACHES,
        "sessions": {"BACKEND": "config.redis_cache.QuietRedisCache", "LOCATION": SESSION_REDIS},
    }
    settings.SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
    settings.SESSION_CACHE_ALIAS = "sessions"
    server = redis.Redis.from_url(SESSION_REDIS)
    server.flushdb()
    yield server
    server.flushdb()
    caches["sessions"].close()


def anonymous_posts(client: Client, paths: list[str], times: int) -> list[int]:
    """Posts as a browser sends them: with the CSRF cookie and token, no session."""
    client.get("/")
    token = client.cookies["csrftoken"].value
    return [
        client.post(paths[n % len(paths)], HTTP_X_CSRFTOKEN=token).status_code for n in range(times)
    ]


def test_anonymous_saves_and_follows_create_no_session(sessions_in_redis):
    paper, tag, category = PaperFactory(), TagFactory(), CategoryFactory(code="cs.CL")
    paths = [
        f"/saved/{paper.pk}/save/",
        f"/tags/{tag.slug}/subscribe/",
        f"/categories/{category.code}/subscribe/",
    ]
    sessions, keys = Session.objects.count(), sessions_in_redis.dbsize()

    statuses = []
    for _ in range(10):  # ten browsers, thirty posts each
        client = Client(enforce_csrf_checks=True)
        statuses += anonymous_posts(client, paths, 30)
        assert "sessionid" not in client.cookies
        assert PENDING_COOKIE in client.cookies

    assert statuses == [302] * 300
    assert Session.objects.count() == sessions
    assert sessions_in_redis.dbsize() == keys


def test_what_was_asked_before_logging_in_is_done_once_at_log_in(client):
    reader = UserFactory()
    paper, tag = PaperFactory(), TagFactory()
    client.post(f"/saved/{paper.pk}/save/")
    client.post(f"/tags/{tag.slug}/subscribe/")
    client.post(f"/saved/{paper.pk}/save/")  # asked twice, kept once

    response = client.post("/accounts/login/", {"login": reader.email, "password": PASSWORD})

    assert response.status_code == 302
    assert SavedPaper.objects.filter(user=reader, paper=paper).count() == 1
    assert Subscription.objects.filter(user=reader, tag=tag).exists()
    # The cookie is spent: unsaving, then logging in again, saves nothing anew.
    assert client.cookies[PENDING_COOKIE].value == ""
    client.post(f"/saved/{paper.pk}/unsave/")
    client.logout()
    client.post("/accounts/login/", {"login": reader.email, "password": PASSWORD})
    assert not SavedPaper.objects.filter(user=reader).exists()


def test_only_the_most_recent_requests_are_kept(client):
    reader = UserFactory()
    papers = PaperFactory.create_batch(PENDING_MOST + 5)
    for paper in papers:
        client.post(f"/saved/{paper.pk}/save/")

    client.post("/accounts/login/", {"login": reader.email, "password": PASSWORD})

    saved = set(SavedPaper.objects.filter(user=reader).values_list("paper_id", flat=True))
    assert saved == {paper.pk for paper in papers[-PENDING_MOST:]}


@pytest.mark.parametrize("value", ["", "forged", '[["paper", 1]]', "W1sicGFwZXIiLCAxXV0:forged"])
def test_a_cookie_not_signed_by_the_site_does_nothing(client, value):
    reader = UserFactory()
    paper = PaperFactory()
    client.cookies[PENDING_COOKIE] = value.replace("1", str(paper.pk))

    response = client.post("/accounts/login/", {"login": reader.email, "password": PASSWORD})

    assert response.status_code == 302
    assert not SavedPaper.objects.exists()


def test_expired_sessions_are_deleted_nightly():
    live, expired = SessionStore(), SessionStore()
    live.create()
    expired.set_expiry(timezone.now() - datetime.timedelta(seconds=1))
    expired.create()

    clear_expired_sessions()

    assert list(Session.objects.values_list("session_key", flat=True)) == [live.session_key]
    [entry] = [e for e in BEAT_SCHEDULE.values() if e["task"] == clear_expired_sessions.name]
    assert (entry["schedule"].minute, entry["schedule"].hour) == ({15}, {3})
