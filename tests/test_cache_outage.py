"""A Redis cache that cannot be reached is a miss, told in one warning line a
minute by each process, never a traceback a call."""

import logging

import pytest

from config import redis_cache
from config.redis_cache import FailOpenRedisCache, QuietRedisCache
from core import outages
from tests.faults.processes import free_port


@pytest.fixture
def unreachable() -> str:
    return f"redis://127.0.0.1:{free_port()}/0"


def cache_at(location: str, backend=QuietRedisCache):
    options = {"IGNORE_EXCEPTIONS": True, "SOCKET_CONNECT_TIMEOUT": 0.5, "SOCKET_TIMEOUT": 0.5}
    return backend(location, {"OPTIONS": options})


@pytest.fixture
def clock(monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(outages.time, "monotonic", lambda: now[0])
    monkeypatch.setattr(redis_cache, "outage_log", outages.OutageLog(message="Redis is away"))
    return now


def outage_lines(caplog) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name.startswith(("core.outages", "django_redis"))]


def test_calls_to_an_unreachable_cache_miss_with_one_warning_a_minute(unreachable, clock, caplog):
    page_cache, default_cache = cache_at(unreachable), cache_at(unreachable, FailOpenRedisCache)

    with caplog.at_level(logging.DEBUG):
        for n in range(50):
            assert page_cache.get(f"page:{n}") is None
            page_cache.set(f"page:{n}", "body")
            assert default_cache.add(f"lock:{n}", 1) is True  # fails open
        clock[0] += 59
        assert page_cache.get("page:late") is None
        first_minute = outage_lines(caplog)
        clock[0] += 2
        assert page_cache.get("page:next-minute") is None

    [warning] = first_minute
    assert warning.levelno == logging.WARNING
    assert warning.exc_info is None
    assert warning.getMessage().startswith("Redis is away (ConnectionError: Error 111")
    [_, second] = outage_lines(caplog)
    # Every call since the first line: 150 in the loop, the late one and this one.
    assert second.getMessage().endswith("; 151 failed since the last line")
