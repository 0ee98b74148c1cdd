"""Who is asking the API, and how often they may.

Anonymous requests are counted per client address (core.http.client_ip, so
trusted proxies are seen through), token requests per token, each in the
default cache by django-ratelimit; over the limit the answer is 429 with
Retry-After (api.api's handler for RateLimited). Every answer says where its
client stands, as the IETF's RateLimit header fields have it
(draft-ietf-httpapi-ratelimit-headers): `RateLimit-Policy` the allowance and
its window, `RateLimit` what remains of it and the seconds until it renews
(api.middleware writes them from the usage limit() kept on the request). A
write with an allowance of its own (votes, comments) names it too, after the
request's: `"token";r=530;t=50, "votes";r=0;t=9`, so a client sees it run
down before its 429.
"""

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from django_ratelimit.core import _split_rate, get_usage
from ninja.security import HttpBearer

from accounts.models import ApiToken
from accounts.selectors import api_token_for_secret
from core.http import client_ip


class RateLimited(Exception):
    def __init__(self, retry_after: int) -> None:
        super().__init__("Too many requests.")
        self.retry_after = retry_after


class Anonymous:
    """request.auth of a request without a token."""

    def __bool__(self) -> bool:
        return True


ANONYMOUS = Anonymous()
# The policies' names in the RateLimit headers, by the group counted in.
POLICIES = {
    "api": "address",
    "api-token": "token",
    "votes": "votes",
    "comment-reader": "comments",
    "comment-address": "comments-address",
}


@dataclass(frozen=True)
class Usage:
    """Where a client stands against the allowance its request was counted in."""

    policy: str
    quota: int
    window: int
    remaining: int
    reset: int

    def headers(self) -> dict[str, str]:
        name = f'"{self.policy}"'
        return {
            "RateLimit-Policy": f"{name};q={self.quota};w={self.window}",
            "RateLimit": f"{name};r={self.remaining};t={self.reset}",
        }


def headers_of(usages: list[Usage]) -> dict[str, str]:
    """The RateLimit header fields naming every allowance in `usages`, as lists."""
    each = [usage.headers() for usage in usages]
    return {name: ", ".join(fields[name] for fields in each) for name in each[0]} if each else {}


def limit(request: HttpRequest, *, group: str, key: str, rate: str) -> None:
    """Count the request against `key`'s allowance; RateLimited once it is spent.
    The usage is kept as request.rate_limit_usage, for the answer's headers."""
    if not rate:
        return
    usage = get_usage(
        request, group=group, key=lambda group, request: key, rate=rate, increment=True
    )
    if not usage:
        return  # limits are off (RATELIMIT_ENABLE)
    counted = _as_usage(usage, group=group, rate=rate)
    request.rate_limit_usage = counted  # type: ignore[attr-defined]
    if usage["should_limit"]:
        raise RateLimited(retry_after=counted.reset)


def usage_of(request: HttpRequest) -> Usage | None:
    """The usage limit() last counted the request in, if any."""
    found = getattr(request, "rate_limit_usage", None)
    return found if isinstance(found, Usage) else None


def note_allowances(request: HttpRequest, *allowances: tuple[str, str, str]) -> None:
    """Keep where the client stands in these (group, key, rate) allowances, which
    the request was counted in apart from limit(), for the answer's headers."""
    found = [_usage(request, group=group, key=key, rate=rate) for group, key, rate in allowances]
    request.rate_limit_allowances = [usage for usage in found if usage is not None]  # type: ignore[attr-defined]


def allowances_of(request: HttpRequest) -> list[Usage]:
    """Where the client stands: standing_of(), then what note_allowances() kept."""
    standing = standing_of(request)
    noted = getattr(request, "rate_limit_allowances", [])
    return ([standing] if standing is not None else []) + list(noted)


def standing_of(request: HttpRequest) -> Usage | None:
    """Where the client stands: the usage its request was counted in, or for an
    anonymous request no route counted (an address the API does not have, a
    method a route does not take, OPTIONS), its address's allowance as it is."""
    counted = usage_of(request)
    if counted is not None or "Authorization" in request.headers:
        return counted
    return _usage(request, group="api", key=client_ip(request), rate=settings.API_RATE_LIMIT)


def _usage(request: HttpRequest, *, group: str, key: str, rate: str) -> Usage | None:
    """The allowance as it stands, the request not counted."""
    if not rate:
        return None
    usage = get_usage(
        request, group=group, key=lambda group, request: key, rate=rate, increment=False
    )
    return _as_usage(usage, group=group, rate=rate) if usage else None


def _as_usage(usage: dict[str, Any], *, group: str, rate: str) -> Usage:
    _, window = _split_rate(rate)
    return Usage(
        policy=POLICIES.get(group, group),
        quota=usage["limit"],
        window=window,
        remaining=max(0, usage["limit"] - usage["count"]),
        reset=max(1, int(usage["time_left"])),
    )


def presented_secret(request: HttpRequest) -> str | None:
    """The token in `Authorization: Bearer <token>`, "" for any other Authorization,
    None when there is none."""
    header = request.headers.get("Authorization")
    if header is None:
        return None
    scheme, _, secret = header.partition(" ")
    return secret.strip() if scheme.lower() == "bearer" else ""


def token_for(request: HttpRequest, secret: str) -> ApiToken | None:
    token = api_token_for_secret(secret=secret) if secret else None
    if token is not None:
        limit(
            request, group="api-token", key=f"token:{token.pk}", rate=settings.API_TOKEN_RATE_LIMIT
        )
    return token


class ReaderToken(HttpBearer):
    """The personal endpoints: a reader's token, required."""

    def __call__(self, request: HttpRequest) -> ApiToken | None:
        secret = presented_secret(request)
        if not secret:
            # Someone guessing tokens is counted as anonymous.
            limit(request, group="api", key=client_ip(request), rate=settings.API_RATE_LIMIT)
            return None
        return self.authenticate(request, secret)

    def authenticate(self, request: HttpRequest, token: str) -> ApiToken | None:
        found = token_for(request, token)
        if found is None:
            limit(request, group="api", key=client_ip(request), rate=settings.API_RATE_LIMIT)
        return found


def reader_of(request: HttpRequest) -> User:
    """The reader whose token a personal endpoint was called with: ninja keeps
    what ReaderToken returned as request.auth, and lets no request without a
    valid token through."""
    token = getattr(request, "auth", None)
    if not isinstance(token, ApiToken):
        raise PermissionDenied
    return token.user


def public(request: HttpRequest) -> ApiToken | Anonymous | None:
    """The public endpoints: anyone, counted per address; a request that sends a
    token is counted per token instead, and refused if the token is not valid (so
    a made-up token is no way around the address's limit)."""
    secret = presented_secret(request)
    if secret is None:
        limit(request, group="api", key=client_ip(request), rate=settings.API_RATE_LIMIT)
        return ANONYMOUS
    found = token_for(request, secret)
    if found is None:
        limit(request, group="api", key=client_ip(request), rate=settings.API_RATE_LIMIT)
    return found
