"""The database out of reach: every page a short 503 with Retry-After, the API
its JSON 503, /healthz saying which part is down, one log line a minute. The
connection is made to fail for real: the site is pointed at a closed port.
(tests/faults/test_database_down.py stops a real server under gunicorn.)"""

import logging

import psycopg
import pytest
from django.db import OperationalError, connection
from django.test import Client

from core import outages
from core.outages import is_database_unreachable
from tests.accounts_factories import UserFactory
from tests.factories import PaperFactory, TagFactory
from tests.faults.processes import RedisServer, free_port
from tests.services import redis_db_url

pytestmark = pytest.mark.django_db(transaction=True)
PAGES = ["/", "/?q=reasoning", "/tags/", "/tags/reasoning/", "/categories/", "/trending/"]


@pytest.fixture
def database_down(settings, monkeypatch):
    """From here on every new connection is refused, as by a stopped server."""
    settings.DEBUG = False  # the error pages production shows
    monkeypatch.setattr(
        outages, "database_outage", outages.OutageLog(message="DB away", level=logging.ERROR)
    )
    connection.close()
    monkeypatch.setitem(connection.settings_dict, "PORT", free_port())
    yield
    connection.close()


@pytest.fixture
def catalog():
    PaperFactory(tags=[TagFactory(name="Reasoning", slug="reasoning")])


def test_every_page_is_a_short_503_with_retry_after(catalog, database_down):
    client = Client(raise_request_exception=False)

    responses = [client.get(path) for path in PAGES]

    assert [r.status_code for r in responses] == [503] * len(PAGES)
    for response in responses:
        assert response["Retry-After"] == "30"
        assert response["Cache-Control"] == "no-store"
        assert response["Content-Type"].startswith("text/html")
        assert "back in a moment" in response.content.decode()


def test_a_logged_in_reader_whose_session_cannot_be_read_gets_the_503_too(catalog, settings):
    client = Client(raise_request_exception=False)
    client.force_login(UserFactory())
    settings.DEBUG = False
    connection.close()
    port = connection.settings_dict["PORT"]
    connection.settings_dict["PORT"] = free_port()
    try:
        # The session is read by a middleware, before any view.
        response = client.get("/tags/")
    finally:
        connection.close()
        connection.settings_dict["PORT"] = port

    assert response.status_code == 503
    assert response["Retry-After"] == "30"


def test_the_api_answers_its_json_503(catalog, database_down):
    response = Client(raise_request_exception=False).get("/api/v1/papers")

    assert response.status_code == 503
    assert response["Content-Type"] == "application/problem+json"
    assert response["Retry-After"] == "30"
    assert response.json() == {
        "type": "about:blank",
        "title": "Service Unavailable",
        "status": 503,
        "detail": "The service is briefly unavailable; try again in 30 seconds.",
    }


def test_the_health_check_says_the_database_is_down(database_down):
    response = Client().get("/healthz")

    assert response.status_code == 503
    assert response["Retry-After"] == "30"
    assert response.json() == {
        "status": "down",
        "database": "down",
        "cache": "off",
        "broker": "off",
    }


def test_an_outage_is_logged_once_a_minute_without_a_traceback(catalog, database_down, caplog):
    client = Client(raise_request_exception=False)
    with caplog.at_level(logging.INFO):
        for path in PAGES:
            client.get(path)

    lines = [r for r in caplog.records if r.levelno >= logging.WARNING]
    [line] = lines
    assert line.name == "core.outages"
    assert line.levelno == logging.ERROR
    assert line.exc_info is None
    assert line.getMessage().startswith("DB away (OperationalError: connection failed")


def test_the_site_answers_again_once_the_database_is_back(catalog, database_down, monkeypatch):
    client = Client(raise_request_exception=False)
    assert client.get("/").status_code == 503
    monkeypatch.undo()
    connection.close()

    assert client.get("/").status_code == 200


@pytest.mark.parametrize(
    ("cause", "unreachable"),
    [
        (psycopg.OperationalError("connection refused"), True),  # never reached the server
        (psycopg.errors.AdminShutdown("terminating connection"), True),
        (psycopg.errors.CannotConnectNow("the database system is starting up"), True),
        (psycopg.errors.ConnectionFailure("connection failure"), True),
        (psycopg.errors.QueryCanceled("canceling statement due to statement timeout"), False),
        (psycopg.errors.DeadlockDetected("deadlock detected"), False),
    ],
)
def test_only_an_unreachable_server_is_an_outage_other_errors_stay_500s(cause, unreachable):
    error = OperationalError(str(cause))
    error.__cause__ = cause

    assert is_database_unreachable(error) is unreachable


@pytest.fixture
def redis_server():
    server = RedisServer()
    server.start()
    yield server
    server.stop()


def test_the_health_check_names_the_cache_and_the_broker(settings, redis_server):
    location = redis_server.url
    settings.CACHES = {
        **settings.CACHES,
        "default": {"BACKEND": "config.redis_cache.FailOpenRedisCache", "LOCATION": location},
    }
    settings.CELERY_BROKER_URL = redis_db_url(11)

    up = Client().get("/healthz")
    redis_server.stop()
    down = Client().get("/healthz")

    assert up.status_code == 200
    assert up.json() == {"status": "ok", "database": "ok", "cache": "ok", "broker": "ok"}
    assert down.status_code == 200
    assert down.json() == {"status": "degraded", "database": "ok", "cache": "down", "broker": "ok"}
