"""Everything under /api/ answers in JSON, and anonymous reads are open to any origin.

The API's own views answer their errors in JSON (api.api); this catches the
rest: an address no route has, a method a route does not take, a NUL byte
refused by core.middleware, a server error. CORS is written here by hand:
GET and HEAD without credentials get `Access-Control-Allow-Origin: *`; a
preflight allows only those methods and no request headers, so a page on
another site can read the public API but never send a reader's token, and no
cookie-bearing request is ever allowed cross-site.
"""

from collections.abc import Callable
from http import HTTPStatus

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.cache import patch_vary_headers

API_PREFIX = "/api/"
CORS_METHODS = "GET, HEAD"
# Headers a cross-site script may read from an answer.
EXPOSED_HEADERS = "ETag, Last-Modified, Retry-After"
# Headers an error keeps when its body is replaced.
KEPT_HEADERS = ("Allow", "Retry-After", "WWW-Authenticate", "Cache-Control", "Vary")


class ApiMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.path_info.startswith(API_PREFIX):
            return self.get_response(request)
        if request.method == "OPTIONS":
            return preflight(request)
        response = self.get_response(request)
        if response.status_code >= 400 and not is_json(response):
            response = json_error(request, response)
        if request.method in ("GET", "HEAD") and "Authorization" not in request.headers:
            response["Access-Control-Allow-Origin"] = "*"
            response["Access-Control-Expose-Headers"] = EXPOSED_HEADERS
        patch_vary_headers(response, ["Authorization"])
        return response


def is_json(response: HttpResponse) -> bool:
    return response.get("Content-Type", "").startswith("application/json")


def preflight(request: HttpRequest) -> HttpResponse:
    response = HttpResponse(status=204)
    response["Allow"] = f"{CORS_METHODS}, OPTIONS, PUT, DELETE"
    if "Origin" in request.headers:
        response["Access-Control-Allow-Origin"] = "*"
        response["Access-Control-Allow-Methods"] = CORS_METHODS
        response["Access-Control-Max-Age"] = "86400"
    return response


def json_error(request: HttpRequest, response: HttpResponse) -> JsonResponse:
    status = response.status_code
    if status == 404:
        message = "There is nothing at this address; the API is described at /api/docs."
    elif status == 405:
        allowed = response.get("Allow", "none")
        message = f"{request.method} is not allowed here; this address takes: {allowed}."
    elif status == 400:
        message = "Bad request: the address or its parameters cannot be read."
    elif status == 503:
        retry = response.get("Retry-After", "a few")
        message = f"The service is briefly unavailable; try again in {retry} seconds."
    elif status >= 500:
        message = "Something went wrong on the server; it has been logged."
    else:
        try:
            message = f"{HTTPStatus(status).phrase}."
        except ValueError:
            message = "The request was refused."
    answer = JsonResponse({"detail": message}, status=status)
    for name in KEPT_HEADERS:
        if name in response:
            answer[name] = response[name]
    return answer
