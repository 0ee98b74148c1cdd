"""Whole catalog pages in the catalog cache (catalog.cache), for every reader."""

import re
from collections.abc import Callable, Iterable
from functools import partial, wraps

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.middleware.csrf import get_token
from django.utils import translation

from catalog import cards
from catalog.cache import (
    cache_key,
    canonical_query,
    catalog_cache,
    catalog_version,
    trending_version,
)

CSRF_PLACEHOLDER = "__catalog_csrf_token__"
CSRF_INPUT = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


def cached_page(
    view: Callable[..., HttpResponse] | None = None,
    *,
    single: Iterable[str] = (),
    multiple: Iterable[str] = (),
    trending: bool = False,
) -> Callable[..., HttpResponse]:
    """Serve the view's successful GET (and HEAD) pages from the cache.

    The view sees only the query parameters it declares (single- and
    multi-valued names), in canonical form; anything else is ignored, so
    neither made-up parameters nor reordered ones add entries. Entries are
    kept per scheme, host, language and canonical address, one for anonymous
    readers and one every logged-in reader shares: rendered with
    `cards.SlotMarkers` in place of the reader, it keeps their parts (toggles,
    chips, the account menu) as slots, filled from `request.card_slots` for
    each reader. Pages are stored with their CSRF tokens (the language menu
    posts a form) replaced by a placeholder and each reader gets their own on
    the way out. Readers with a message waiting get the view itself. Pages
    sorted by trending (all of them with trending=True, else those asked with
    sort=trending) are also keyed on the trending scores' version.
    """
    if view is None:
        return partial(cached_page, single=single, multiple=multiple, trending=trending)

    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        request.GET = canonical_query(request.GET, single=single, multiple=multiple)
        request.META["QUERY_STRING"] = request.GET.urlencode()
        if request.method not in ("GET", "HEAD") or len(messages.get_messages(request)):
            return view(request, *args, **kwargs)
        version = catalog_version()
        if version is None:
            return view(request, *args, **kwargs)
        reader = getattr(request, "card_slots", None) if request.user.is_authenticated else None
        cache = catalog_cache()
        address = request.build_absolute_uri()
        scores = (
            str(trending_version()) if trending or request.GET.get("sort") == "trending" else ""
        )
        kind = "page" if reader is None else "reader-page"
        key = cache_key(kind, version, translation.get_language() or "", address, scores)
        stored = cache.get(key)
        if stored is not None:
            content_type, body, targets = stored
            body = body.replace(CSRF_PLACEHOLDER, get_token(request))
            if reader is not None:
                body = cards.fill_slots(body, slots=reader, targets=targets)
            return HttpResponse(body, content_type=content_type)
        markers = cards.SlotMarkers()
        if reader is not None:
            request.card_slots = markers
            try:
                response = view(request, *args, **kwargs)
            finally:
                request.card_slots = reader
        else:
            response = view(request, *args, **kwargs)
        storable = response.status_code == 200 and not response.cookies
        if response.streaming or (reader is None and not storable):
            return response
        body = response.content.decode(response.charset)
        if storable:
            shared = body
            for token in set(CSRF_INPUT.findall(shared)):
                shared = shared.replace(token, CSRF_PLACEHOLDER)
            cache.set(
                key,
                (response["Content-Type"], shared, markers.targets),
                settings.CATALOG_CACHE_SECONDS,
            )
        if reader is not None:
            response.content = cards.fill_slots(body, slots=reader, targets=markers.targets)
        return response

    return wrapper
