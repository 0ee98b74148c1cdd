"""The Redis caches, whose outage degrades to no caching instead of errors, told
in one warning a minute rather than a traceback a call."""

import sys
from typing import Any

from django_redis.cache import RedisCache

from core.outages import OutageLog

# One log for every cache of the process: an outage of the server they share
# is one line a minute, not one per cache.
outage_log = OutageLog(message="A Redis cache cannot be reached: its calls were treated as misses")


class IgnoredErrors:
    """Stands in for django-redis's logger of the errors it ignores, which it
    calls with logger.exception() on every failed call (thousands of tracebacks
    a minute while Redis is down): each goes to outage_log instead."""

    def exception(self, *args: object, **kwargs: object) -> None:
        outage_log.failed(sys.exc_info()[1])


class QuietRedisCache(RedisCache):
    """django-redis with IGNORE_EXCEPTIONS, its errors told by outage_log."""

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self.logger = IgnoredErrors()


class FailOpenRedisCache(QuietRedisCache):
    """The default cache, where add() also lets callers through.

    Locks and throttles built on add(), allauth's log-in rate limits among them,
    would otherwise read an unreachable Redis as "held by someone else" and turn
    every reader away (HTTP 429) until Redis returns. While it is down they are
    not enforced.
    """

    def add(self, *args: Any, **kwargs: Any) -> bool:
        added: bool | None = super().add(*args, **kwargs)
        # A reachable Redis answers True or False; None means the call failed.
        return True if added is None else added
