"""The Redis caches, whose outage degrades to no caching instead of errors, told
in one warning a minute rather than a traceback a call."""

import logging
import sys
import threading
import time

from django_redis.cache import RedisCache

logger = logging.getLogger(__name__)
# A process tells of a cache it cannot reach at most this often.
OUTAGE_WARNING_SECONDS = 60


class OutageLog:
    """Stands in for django-redis's logger of ignored errors, which it calls
    with logger.exception() on every failed call: thousands of tracebacks a
    minute while Redis is down. Here a process writes one warning line a
    minute, naming the error and how many calls failed since the last line."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last_warned = -float("inf")
        self._failed = 0

    def exception(self, message: str, *args: object, **kwargs: object) -> None:
        error = sys.exc_info()[1]
        cause = getattr(error, "__cause__", None) or error
        now = time.monotonic()
        with self._lock:
            self._failed += 1
            if now - self._last_warned < OUTAGE_WARNING_SECONDS:
                return
            failed, self._failed, self._last_warned = self._failed, 0, now
        logger.warning(
            "A Redis cache cannot be reached (%s: %s); %d cache calls failed since the "
            "last warning and were treated as misses",
            type(cause).__name__,
            cause,
            failed,
        )


outage_log = OutageLog()


class QuietRedisCache(RedisCache):
    """django-redis with IGNORE_EXCEPTIONS, its errors told by outage_log."""

    def __init__(self, server: str, params: dict) -> None:
        super().__init__(server, params)
        # One log for every cache of the process: an outage of the server they
        # share is one warning a minute, not one per cache.
        self.logger = outage_log


class FailOpenRedisCache(QuietRedisCache):
    """The default cache, where add() also lets callers through.

    Locks and throttles built on add(), allauth's log-in rate limits among them,
    would otherwise read an unreachable Redis as "held by someone else" and turn
    every reader away (HTTP 429) until Redis returns. While it is down they are
    not enforced.
    """

    def add(self, *args, **kwargs) -> bool:
        added = super().add(*args, **kwargs)
        # A reachable Redis answers True or False; None means the call failed.
        return True if added is None else added
