"""The catalog cache on this suite's own Redis database, for tests where a stale
page must fail: anonymous pages are then served from it until the catalog
version is bumped."""

import pytest
import redis
from django.core.cache import caches

from tests.services import redis_db_url

TEST_REDIS = redis_db_url(8)


@pytest.fixture(name="redis_cache")
def redis_cache_fixture(settings):
    """The catalog cache in Redis, emptied before and after."""
    settings.CACHES = {
        **settings.CACHES,
        "catalog": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": TEST_REDIS,
            "OPTIONS": {"IGNORE_EXCEPTIONS": True, "SOCKET_CONNECT_TIMEOUT": 0.5},
        },
    }
    server = redis.Redis.from_url(TEST_REDIS)
    server.flushdb()
    yield caches["catalog"]
    server.flushdb()
