"""The catalog cache: shared reads and anonymous pages, dropped whenever the catalog changes.

Every key carries the catalog version, a counter in the cache that any write
to papers, tags, categories, code links, summaries or images bumps once its
transaction commits (see catalog.signals; bulk ingest bumps it itself). Old
entries are never deleted, only no longer asked for, and expire on their own.

The cache is the "catalog" alias: Redis shared by every web process, or a
dummy that stores nothing when no Redis is configured, since a per-process
memory cache could not be invalidated from the process that writes. A Redis
that is down or slow makes every lookup a miss (django-redis ignores its
errors), so pages are computed as if there were no cache.
"""

import hashlib
import re
import time
from collections.abc import Callable, Iterable
from functools import partial, wraps
from typing import TypeVar

from django.conf import settings
from django.contrib import messages
from django.core.cache import caches
from django.http import HttpRequest, HttpResponse, QueryDict
from django.middleware.csrf import get_token
from django.utils import translation
from django.utils.http import urlencode

VERSION_KEY = "catalog:version"
CSRF_PLACEHOLDER = "__catalog_csrf_token__"
CSRF_INPUT = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')

T = TypeVar("T")


def _cache():
    return caches["catalog"]


def catalog_version() -> int | None:
    """The current version, or None when there is no working cache."""
    cache = _cache()
    version = cache.get(VERSION_KEY)
    if version is None:
        cache.add(VERSION_KEY, _first_version(), timeout=None)
        version = cache.get(VERSION_KEY)
    return version


def bump_catalog_version() -> None:
    """Make every cached read and page stale; call after the change has committed."""
    cache = _cache()
    try:
        cache.incr(VERSION_KEY)
    except ValueError:  # no version yet, or it was evicted
        cache.add(VERSION_KEY, _first_version(), timeout=None)


def _first_version() -> int:
    # The clock in milliseconds: a version lost to eviction starts again above
    # any the entries still stored were made under (bumps are far fewer than
    # milliseconds), so none of them is ever served again.
    return time.time_ns() // 1_000_000


def _key(kind: str, version: int, *parts: str) -> str:
    digest = hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:32]
    return f"catalog:{kind}:{version}:{digest}"


def cached_read(name: str, compute: Callable[[], T], *key_parts: str) -> T:
    """compute() once per catalog version (and key_parts), shared by every process."""
    version = catalog_version()
    if version is None:
        return compute()
    cache, key = _cache(), _key(name, version, *key_parts)
    value = cache.get(key)
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
    pairs = []
    for name in sorted({*single, *multiple}):
        values = [value.strip() for value in query.getlist(name)]
        values = [value for value in values if value]
        kept = sorted(set(values)) if name in multiple else values[-1:]
        pairs.extend((name, value) for value in kept)
    return QueryDict(urlencode(pairs))


def cached_for_anonymous(
    view: Callable[..., HttpResponse] | None = None,
    *,
    single: Iterable[str] = (),
    multiple: Iterable[str] = (),
) -> Callable[..., HttpResponse]:
    """Serve the view's successful GET (and HEAD) pages to anonymous readers from the cache.

    The view sees only the query parameters it declares (single- and
    multi-valued names), in canonical form; anything else is ignored, so
    neither made-up parameters nor reordered ones add entries. Entries are
    kept per scheme, host, language and canonical address. The page is stored
    with its CSRF tokens (the language menu and the reader buttons post forms)
    replaced by a placeholder and each reader gets their own on the way out.
    Readers who are logged in or have a message waiting get the view itself.
    """
    if view is None:
        return partial(cached_for_anonymous, single=single, multiple=multiple)

    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        request.GET = canonical_query(request.GET, single=single, multiple=multiple)
        request.META["QUERY_STRING"] = request.GET.urlencode()
        if (
            request.method not in ("GET", "HEAD")
            or request.user.is_authenticated
            or len(messages.get_messages(request))
        ):
            return view(request, *args, **kwargs)
        version = catalog_version()
        if version is None:
            return view(request, *args, **kwargs)
        cache = _cache()
        address = request.build_absolute_uri()
        key = _key("page", version, translation.get_language() or "", address)
        stored = cache.get(key)
        if stored is not None:
            content_type, body = stored
            body = body.replace(CSRF_PLACEHOLDER, get_token(request))
            return HttpResponse(body, content_type=content_type)
        response = view(request, *args, **kwargs)
        if response.status_code == 200 and not response.streaming and not response.cookies:
            body = response.content.decode(response.charset)
            for token in set(CSRF_INPUT.findall(body)):
                body = body.replace(token, CSRF_PLACEHOLDER)
            cache.set(key, (response["Content-Type"], body), settings.CATALOG_CACHE_SECONDS)
        return response

    return wrapper
