"""What every request meets first: the health probe and the refusal of NUL bytes."""

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

from core.http import safe_methods

HEALTH_CHECK_PATH = "/healthz"


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
