"""What requests meet on their way to a view: the health probe's answer and the
503 of a database out of reach (which config.middleware.EntryMiddleware gives),
the refusal of NUL bytes, and compression that leaves event streams alone."""

from collections.abc import Callable

import redis
from django.conf import settings
from django.core.cache import caches
from django.db import DatabaseError, connection
from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    HttpResponseBase,
    JsonResponse,
    QueryDict,
)
from django.middleware import gzip
from django.template import loader
from django_redis.cache import RedisCache

from core.http import safe_methods
from core.outages import RETRY_AFTER_SECONDS

HEALTH_CHECK_PATH = "/healthz"
# Headers only a proxy in front may set: who the client is, how it came, and
# the proxy's id for the request.
FORWARDED_HEADERS = (
    "HTTP_FORWARDED",
    "HTTP_X_FORWARDED_FOR",
    "HTTP_X_FORWARDED_HOST",
    "HTTP_X_FORWARDED_PORT",
    "HTTP_X_FORWARDED_PROTO",
    "HTTP_X_REAL_IP",
    "HTTP_X_REQUEST_ID",
)


@safe_methods
def health(request: HttpRequest) -> JsonResponse:
    parts = {"database": database_state(), "cache": cache_state(), "broker": broker_state()}
    if parts["database"] == "down":
        status = "down"
    else:
        status = "degraded" if "down" in parts.values() else "ok"
    response = JsonResponse({"status": status, **parts}, status=503 if status == "down" else 200)
    if status == "down":
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    response["Cache-Control"] = "no-store"
    return response


def database_state() -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except DatabaseError:
        return "down"
    return "ok"


def cache_state() -> str:
    """The Redis caches (django-redis): "down" if any of them is."""
    clients = [
        cache.client.get_client(write=True)
        for cache in (caches[alias] for alias in settings.CACHES)
        if isinstance(cache, RedisCache)
    ]
    if not clients:
        return "off"
    return "ok" if all(answers_ping(client) for client in clients) else "down"


def broker_state() -> str:
    url = settings.CELERY_BROKER_URL
    if not url.startswith(("redis://", "rediss://")):
        return "off"
    client = redis.Redis.from_url(url, socket_connect_timeout=1, socket_timeout=1)
    try:
        return "ok" if answers_ping(client) else "down"
    finally:
        client.close()


def answers_ping(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except (redis.RedisError, OSError):
        return False


class RejectNullBytesMiddleware:
    """Answer 400 to a NUL byte anywhere in the path or parameters.

    PostgreSQL cannot store or compare text containing NUL, so such input can
    never match anything; refusing it up front keeps it from reaching a query.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if "\x00" in request.path or has_null(request.GET):
            return bad_request(request)
        form_types = ("application/x-www-form-urlencoded", "multipart/form-data")
        if (
            request.method == "POST"
            and request.content_type in form_types
            and has_null(request.POST)
        ):
            return bad_request(request)
        return self.get_response(request)


def has_null(params: QueryDict) -> bool:
    return any("\x00" in key or any("\x00" in v for v in values) for key, values in params.lists())


def bad_request(request: HttpRequest) -> HttpResponse:
    return HttpResponseBadRequest(loader.render_to_string("400.html", request=request))


class GZipMiddleware(gzip.GZipMiddleware):
    """Django's, but for event streams (a paper's answer as it is written): it
    holds what it compresses until enough has come, and each event must reach
    the reader when it is sent."""

    def process_response(
        self, request: HttpRequest, response: HttpResponseBase
    ) -> HttpResponseBase:
        if response.get("Content-Type", "").startswith("text/event-stream"):
            return response
        return super().process_response(request, response)
