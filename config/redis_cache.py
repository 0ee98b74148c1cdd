"""The default cache: Redis, whose outage degrades to no caching instead of errors."""

from django_redis.cache import RedisCache


class FailOpenRedisCache(RedisCache):
    """django-redis with IGNORE_EXCEPTIONS, where add() also lets callers through.

    Locks and throttles built on add(), allauth's log-in rate limits among them,
    would otherwise read an unreachable Redis as "held by someone else" and turn
    every reader away (HTTP 429) until Redis returns. While it is down they are
    not enforced; each ignored error is logged (DJANGO_REDIS_LOG_IGNORED_EXCEPTIONS).
    """

    def add(self, *args, **kwargs) -> bool:
        added = super().add(*args, **kwargs)
        # A reachable Redis answers True or False; None means the call failed.
        return True if added is None else added
