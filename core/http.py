"""HTTP for every page: the methods read-only pages answer, and who is asking.

client_ip is the client's address as the proxies in front of the site report
it. Every per-address limit asks it: allauth's log-in throttling (through the
account adapter), django-ratelimit (RATELIMIT_IP_META_KEY) and anything else
that counts by client. Forwarded headers are believed only from the addresses
in TRUSTED_PROXIES (is_trusted_proxy): client_ip, the request id
(config.logging) and config.middleware.EntryMiddleware, which drops
them from anyone else before Django reads X-Forwarded-Proto, all ask it.
"""

import ipaddress
from collections.abc import Callable
from functools import cache, wraps
from ipaddress import IPv4Network, IPv6Network
from typing import TYPE_CHECKING, Concatenate, ParamSpec, TypeVar

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.middleware.csrf import get_token
from django.views.decorators.http import require_http_methods

if TYPE_CHECKING:
    # Not imported when the module is: logging's configuration imports it before the apps load.
    from django.contrib.auth.models import User

SAFE_METHODS = ["GET", "HEAD", "OPTIONS"]
IPNetwork = IPv4Network | IPv6Network

P = ParamSpec("P")
R = TypeVar("R", bound=HttpResponseBase)


def safe_methods(
    view: Callable[Concatenate[HttpRequest, P], R],
) -> Callable[Concatenate[HttpRequest, P], R | HttpResponse]:
    """GET and HEAD reach the view; OPTIONS is answered with the methods
    allowed, as for Django's class-based views; anything else is 405."""

    @wraps(view)
    def wrapper(request: HttpRequest, /, *args: P.args, **kwargs: P.kwargs) -> R | HttpResponse:
        if request.method == "OPTIONS":
            response = HttpResponse()
            response["Allow"] = ", ".join(SAFE_METHODS)
            response["Content-Length"] = "0"
            return response
        return view(request, *args, **kwargs)

    return require_http_methods(SAFE_METHODS)(wrapper)


@cache
def _networks(addresses: tuple[str, ...]) -> tuple[IPNetwork, ...]:
    return tuple(ipaddress.ip_network(address, strict=False) for address in addresses)


def is_trusted_proxy(address: str) -> bool:
    """Whether address (a connection's peer, or an X-Forwarded-For hop) is one
    of the TRUSTED_PROXIES: the one rule for every forwarded header."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in _networks(tuple(settings.TRUSTED_PROXIES)))


def from_trusted_proxy(request: HttpRequest) -> bool:
    return is_trusted_proxy(request.META.get("REMOTE_ADDR", ""))


def client_ip(request: HttpRequest) -> str:
    """The address of whoever sent the request.

    A connection from anywhere but a trusted proxy is the client itself,
    whatever X-Forwarded-For it sends. Each trusted proxy appends the address
    it saw to that header, so reading it from the right, past the trusted
    proxies, the first other address is the client; entries further left were
    written by the client and prove nothing. An entry that is not an address
    ends the walk: no proxy we trust would write it.
    """
    address: str = request.META.get("REMOTE_ADDR", "")
    if not is_trusted_proxy(address):
        return address
    hops = [hop.strip() for hop in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    for hop in reversed([hop for hop in hops if hop]):
        try:
            address = str(ipaddress.ip_address(hop))
        except ValueError:
            return address
        if not is_trusted_proxy(address):
            return address
    # Proxies all the way: the leftmost is the best there is.
    return address


def signed_in_user(request: HttpRequest) -> "User":
    """The user of a request that only signed-in users reach (a view behind
    login_required, the admin's actions): never the anonymous user."""
    user = request.user
    if not user.is_authenticated:
        # login_required (or the admin's own check) sends everyone else away first.
        raise PermissionDenied
    return user


def page_csrf_token(request: HttpRequest) -> str:
    """The CSRF token the request's page writes into its forms: masked once a
    request (masking draws 32 random characters) and shared by every part of
    the page that writes a form (a stored page's placeholder, the reader's
    toggles, a discussion's actions)."""
    token: str | None = getattr(request, "_page_csrf_token", None)
    if token is None:
        token = get_token(request)
        # Kept on the request itself, which Django's stubs do not let have more attributes.
        request._page_csrf_token = token  # type: ignore[attr-defined]
    return token
