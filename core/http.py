"""HTTP for every page: the methods read-only pages answer, and who is asking.

client_ip is the client's address as the proxies in front of the site report
it. Every per-address limit asks it: allauth's log-in throttling (through the
account adapter), django-ratelimit (RATELIMIT_IP_META_KEY) and anything else
that counts by client.
"""

import ipaddress
from collections.abc import Callable
from functools import wraps

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_http_methods

SAFE_METHODS = ["GET", "HEAD", "OPTIONS"]


def safe_methods(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """GET and HEAD reach the view; OPTIONS is answered with the methods
    allowed, as for Django's class-based views; anything else is 405."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if request.method == "OPTIONS":
            response = HttpResponse()
            response["Allow"] = ", ".join(SAFE_METHODS)
            response["Content-Length"] = "0"
            return response
        return view(request, *args, **kwargs)

    return require_http_methods(SAFE_METHODS)(wrapper)


def client_ip(request: HttpRequest) -> str:
    """The address of whoever sent the request.

    With no proxy in front (TRUSTED_PROXY_COUNT = 0) that is the connection's
    own address. Behind N trusted proxies, each appending the address it saw to
    X-Forwarded-For, it is the N-th entry from the right: the one the outermost
    trusted proxy recorded. Entries further left were written by the client and
    prove nothing. A request with fewer entries than proxies skipped some of
    them (a direct connection to an inner one), so its leftmost entry is the
    best there is.
    """
    remote = request.META.get("REMOTE_ADDR", "")
    count = settings.TRUSTED_PROXY_COUNT
    if count <= 0:
        return remote
    hops = [hop.strip() for hop in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    hops = [hop for hop in hops if hop]
    if not hops:
        return remote
    candidate = hops[-min(count, len(hops))]
    try:
        return str(ipaddress.ip_address(candidate))
    except ValueError:
        # Not an address: a proxy we trust would never write this.
        return remote
