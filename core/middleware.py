"""What every request meets first: forwarded headers checked, the health probe,
and the refusal of NUL bytes."""

from collections.abc import Callable

from django.db import connection
from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    JsonResponse,
    QueryDict,
)
from django.template import loader

from core.http import from_trusted_proxy, safe_methods

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
    answer depends on neither the HTTPS redirect nor ALLOWED_HOSTS, only on the
    database being reachable.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path_info != HEALTH_CHECK_PATH:
            return self.get_response(request)
        return health(request)


@safe_methods
def health(request: HttpRequest) -> JsonResponse:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    response = JsonResponse({"status": "ok"})
    response["Cache-Control"] = "no-store"
    return response


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
