"""Per-address limits on what anonymous clients may ask for (django-ratelimit).

Counted in the default cache by the client's address (core.http.client_ip); over
its limit a client gets 429 (core.views.too_many_requests) until its
window passes. Logged-in readers are not limited on pages: each is one person,
and the pages they get are their own. Feeds are the same for everyone and
fetched by feed readers, which never log in: every client is limited there.
"""

from collections.abc import Callable
from typing import TypeVar

from django.conf import settings
from django.http import HttpRequest, HttpResponseBase
from django_ratelimit.decorators import ratelimit

# A view; the limit's wrapper takes and gives what it does (functools.wraps).
View = TypeVar("View", bound=Callable[..., HttpResponseBase])


def limit_per_address(
    group: str,
    setting: str,
    *,
    applies: Callable[[HttpRequest], bool] = lambda request: True,
    readers_exempt: bool = True,
) -> Callable[[View], View]:
    """Limit the requests the view answers (those for which applies() is true)
    to the rate in settings.<setting>, e.g. "60/m"; an empty one lifts it."""

    def rate(group: str, request: HttpRequest) -> str | None:
        if not applies(request) or (readers_exempt and request.user.is_authenticated):
            return None
        return getattr(settings, setting) or None

    decorator: Callable[[View], View] = ratelimit(
        group=group, key="ip", rate=rate, method=ratelimit.ALL, block=True
    )
    return decorator


def is_search(request: HttpRequest) -> bool:
    return bool(request.GET.get("q", "").strip())


limit_pages = limit_per_address("pages", "PAGE_RATE_LIMIT")
limit_searches = limit_per_address("searches", "SEARCH_RATE_LIMIT", applies=is_search)
limit_feeds = limit_per_address("feeds", "FEED_RATE_LIMIT", readers_exempt=False)
