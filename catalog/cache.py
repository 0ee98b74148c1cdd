"""The catalog cache: shared reads and pages, dropped whenever the catalog changes.

Every key carries the catalog version, a counter in the cache that any write
to papers, tags, categories, code links, summaries or images bumps once its
transaction commits, through the one write path (catalog.changes). Old
entries are never deleted, only no longer asked for, and expire on their own.

The cache is the "catalog" alias: Redis shared by every web process, or a
dummy that stores nothing when no Redis is configured, since a per-process
memory cache could not be invalidated from the process that writes. A Redis
that is down or slow makes every lookup a miss (django-redis ignores its
errors), so pages are computed as if there were no cache.
"""

import hashlib
import time
from collections.abc import Callable, Iterable
from typing import TypeVar

from django.conf import settings
from django.core.cache import BaseCache, caches
from django.http import QueryDict
from django.utils.http import urlencode

VERSION_KEY = "catalog:version"
TRENDING_VERSION_KEY = "catalog:trending-version"
VOTES_VERSION_KEY = "catalog:votes-version"

T = TypeVar("T")


def catalog_cache() -> BaseCache:
    return caches["catalog"]


def catalog_version() -> int | None:
    """The current version, or None when there is no working cache."""
    return current_version(VERSION_KEY)


def bump_catalog_version() -> None:
    """Make every cached read and page stale; call after the change has committed."""
    bump_version(VERSION_KEY)


def current_version(key: str) -> int | None:
    """A version counter kept in the catalog cache under key (started when
    missing), or None when there is no working cache."""
    cache = catalog_cache()
    version: int | None = cache.get(key)
    if version is None:
        cache.add(key, _first_version(), timeout=None)
        version = cache.get(key)
    return version


def bump_version(key: str) -> None:
    """Move a version counter on: entries stored under the old one are left behind."""
    cache = catalog_cache()
    try:
        cache.incr(key)
    except ValueError:  # no version yet, or it was evicted
        cache.add(key, _first_version(), timeout=None)


def trending_version() -> int:
    """The trending scores' version: pages sorted by trending are cached under it."""
    version: int | None = catalog_cache().get(TRENDING_VERSION_KEY)
    return version or 0


def bump_trending_version() -> None:
    """Make pages sorted by trending stale (after the scores' refresh has committed);
    other pages, which do not show the scores, are kept."""
    catalog_cache().set(TRENDING_VERSION_KEY, _first_version(), timeout=None)


def votes_version() -> int:
    """The upvote counts' version: pages sorted by votes are cached under it."""
    version: int | None = catalog_cache().get(VOTES_VERSION_KEY)
    return version or 0


def bump_votes_version() -> None:
    """Make pages sorted by votes stale (after a vote or a recount has committed)."""
    catalog_cache().set(VOTES_VERSION_KEY, _first_version(), timeout=None)


def reader_version_key(*, user_id: int) -> str:
    """The counter a reader's own changes (their row, subscriptions, saved
    papers, upvotes) move on: their cached row and ids, and their own pages
    (page_cache.cached_page(own=True)), are kept under it."""
    return f"reader:{user_id}:version"


def keep_reader_version(user: object, version: int) -> None:
    """Note on the user object the reader version its row and ids were read
    under (the reader cache does, on every logged-in request), for the
    reader's own pages to be stored under: a version read later could be one
    a change moved to after the ids were read."""
    # The user model's stubs do not let it have more attributes.
    user._reader_version = version  # type: ignore[attr-defined]


def reader_version(user: object) -> int | None:
    """The version keep_reader_version noted, or None (no working cache)."""
    version: int | None = getattr(user, "_reader_version", None)
    return version


def keep_catalog_version(user: object, version: int | None) -> None:
    """Note on the user object the catalog version read with the reader's
    entry (in the same round trip to the cache), for the page cache to use
    rather than asking for it again."""
    # The user model's stubs do not let it have more attributes.
    user._catalog_version = version  # type: ignore[attr-defined]


def noted_catalog_version(user: object) -> int | None:
    """The catalog version keep_catalog_version noted for this request's
    reader, or None (an anonymous reader, or none was stored)."""
    version: int | None = getattr(user, "_catalog_version", None)
    return version


def _first_version() -> int:
    # The clock in milliseconds: a version lost to eviction starts again above
    # any the entries still stored were made under (bumps are far fewer than
    # milliseconds), so none of them is ever served again.
    return time.time_ns() // 1_000_000


def cache_key(kind: str, version: int, *parts: str) -> str:
    digest = hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:32]
    return f"catalog:{kind}:{version}:{digest}"


def cached_read(name: str, compute: Callable[[], T], *key_parts: str) -> T:
    """compute() once per catalog version (and key_parts), shared by every process."""
    version = catalog_version()
    if version is None:
        return compute()
    cache, key = catalog_cache(), cache_key(name, version, *key_parts)
    value: T | None = cache.get(key)
    if value is None:
        value = compute()
        cache.set(key, value, settings.CATALOG_CACHE_SECONDS)
    return value


def canonical_query(
    query: QueryDict, *, single: Iterable[str] = (), multiple: Iterable[str] = ()
) -> QueryDict:
    """The query string as the page reads it: only the names it knows, in one
    order, empty fields dropped, the last value of a single-valued name and
    each value of a multi-valued one once, sorted."""
    pairs: list[tuple[str, str]] = []
    for name in sorted({*single, *multiple}):
        values = [value.strip() for value in query.getlist(name)]
        values = [value for value in values if value]
        kept = sorted(set(values)) if name in multiple else values[-1:]
        pairs.extend((name, value) for value in kept)
    return QueryDict(urlencode(pairs))
