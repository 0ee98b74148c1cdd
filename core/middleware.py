"""What every request meets first: forwarded headers checked, the health probe,
the 503 of a database out of reach, the refusal of NUL bytes, and compression
that leaves event streams alone."""

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

from core.http import from_trusted_proxy, safe_methods
from core.outages import RETRY_AFTER_SECONDS, database_unavailable, is_database_unreachable

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


class ForwardedHeadersMiddleware:
    """Drop the forwarded headers of a request that did not come from one of
    TRUSTED_PROXIES, before anything reads them: Django itself believes
    X-Forwarded-Proto (SECURE_PROXY_SSL_HEADER), and a client reaching
    gunicorn directly could otherwise claim to be anyone, over HTTPS."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not from_trusted_proxy(request):
            for name in FORWARDED_HEADERS:
                request.META.pop(name, None)
        return self.get_response(request)


class HealthCheckMiddleware:
    """Answer a load balancer's probe of /healthz before any other middleware.

    Probes come over plain HTTP to the instance's own address: placed first, the
    answer depends on neither the HTTPS redirect nor ALLOWED_HOSTS. It names
    the database, the Redis caches and the broker, each "ok", "down" or "off"
    (not configured); the site is unhealthy (503) only without its database,
    and "degraded" while a Redis is down.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path_info != HEALTH_CHECK_PATH:
            return self.get_response(request)
        return health(request)


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


class DatabaseUnavailableMiddleware:
    """Answer a view that fails because the database cannot be reached with a
    short 503 and Retry-After (core.outages), not a 500 with a traceback per
    request: monitoring tells an outage from a bug, clients know when to come
    back. Such an error raised outside a view (a middleware reading the
    session) gets the same answer from core.views.server_error."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if is_database_unreachable(exception):
            return database_unavailable(request, exception)
        return None


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
