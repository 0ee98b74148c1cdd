"""Everything under /api/ answers in JSON, and anonymous reads are open to any origin.

The API's own views answer their errors as problem details (api.api); this
catches the rest: an address no route has, a method a route does not take, a
NUL byte refused by core.middleware, a server error. HEAD is answered wherever
GET is (the GET's headers, no body), and OPTIONS with the methods of the
address asked about (404 for an address no route has). No answer varies by
cookie or language: the API reads neither, only the token. CORS is written here by hand:
GET and HEAD without credentials get `Access-Control-Allow-Origin: *`; a
preflight allows only those methods and no request headers, so a page on
another site can read the public API but never send a reader's token, and no
cookie-bearing request is ever allowed cross-site. Every answer the rate limit
counted carries its RateLimit headers, and so does an anonymous one no route
counted (api.auth.standing_of); a vote or a comment names its own allowance too.
"""

import re
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.cache import patch_vary_headers

from api.auth import allowances_of, headers_of
from api.http import PROBLEM_CONTENT_TYPE, problem

API_PREFIX = "/api/"
CORS_METHODS = "GET, HEAD"
# Headers a cross-site script may read from an answer.
EXPOSED_HEADERS = "ETag, Last-Modified, Link, Retry-After, RateLimit, RateLimit-Policy"
# Headers an error keeps when its body is replaced.
KEPT_HEADERS = ("Retry-After", "WWW-Authenticate", "Cache-Control", "Vary")
METHOD_ORDER = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
# What the session and locale middleware add to Vary; the API reads neither.
UNREAD_HEADERS = re.compile(r"^(cookie|accept-language)$")


class ApiMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.path_info.startswith(API_PREFIX):
            return self.get_response(request)
        if request.method == "OPTIONS":
            response = options(request, self.get_response)
        elif request.method == "HEAD":
            response = head(request, self.get_response)
        else:
            response = self.get_response(request)
        if response.status_code >= 400 and not is_json(response):
            response = json_error(request, response)
        if request.method in ("GET", "HEAD") and "Authorization" not in request.headers:
            response["Access-Control-Allow-Origin"] = "*"
            response["Access-Control-Expose-Headers"] = EXPOSED_HEADERS
        for name, value in headers_of(allowances_of(request)).items():
            response[name] = value
        drop_unread_vary(response)
        patch_vary_headers(response, ["Authorization"])
        return response


def is_json(response: HttpResponse) -> bool:
    content_type = response.get("Content-Type", "")
    return content_type.startswith(("application/json", PROBLEM_CONTENT_TYPE))


def allowed_methods(allow: str) -> str:
    """A route's Allow header, as it names its methods, with HEAD wherever GET
    (see head) and OPTIONS everywhere."""
    methods = {method.strip().upper() for method in allow.split(",") if method.strip()}
    if "GET" in methods:
        methods.add("HEAD")
    methods.add("OPTIONS")
    return ", ".join(method for method in METHOD_ORDER if method in methods)


def options(
    request: HttpRequest, get_response: Callable[[HttpRequest], HttpResponse]
) -> HttpResponse:
    """The methods of the address asked about: its route, asked with OPTIONS,
    answers 405 naming them (django-ninja) or answers OPTIONS itself; an
    address no route has answers 404."""
    answer = get_response(request)
    if answer.status_code == 404:
        return answer
    response = HttpResponse(status=204)
    del response["Content-Type"]  # no body, so no type
    # An address that redirects (/api/ to /api/v1/) is read with GET.
    allow = "GET" if 300 <= answer.status_code < 400 else answer.get("Allow", "")
    response["Allow"] = allowed_methods(allow)
    # A cross-site script may read anonymously, never write (see above).
    if "Origin" in request.headers:
        response["Access-Control-Allow-Origin"] = "*"
        response["Access-Control-Allow-Methods"] = CORS_METHODS
        response["Access-Control-Max-Age"] = "86400"
    return response


def head(request: HttpRequest, get_response: Callable[[HttpRequest], HttpResponse]) -> HttpResponse:
    """The GET's answer without its body (its length kept), as HTTP has it."""
    request.method = "GET"
    try:
        response = get_response(request)
    finally:
        request.method = "HEAD"
    if not response.streaming:
        length = len(response.content)
        response.content = b""
        response["Content-Length"] = str(length)
    return response


def drop_unread_vary(response: HttpResponse) -> None:
    if "Vary" in response:
        kept = [
            name.strip()
            for name in response["Vary"].split(",")
            if name.strip() and not UNREAD_HEADERS.match(name.strip().lower())
        ]
        if kept:
            response["Vary"] = ", ".join(kept)
        else:
            del response["Vary"]


def json_error(request: HttpRequest, response: HttpResponse) -> JsonResponse:
    status = response.status_code
    allowed = allowed_methods(response.get("Allow", "")) if status == 405 else ""
    if status == 404:
        message = "There is nothing at this address; the API is described at /api/docs."
    elif status == 405:
        message = f"{request.method} is not allowed here; this address takes: {allowed}."
    elif status == 400:
        message = "Bad request: the address or its parameters cannot be read."
    elif status == 503:
        retry = response.get("Retry-After", "a few")
        message = f"The service is briefly unavailable; try again in {retry} seconds."
    elif status >= 500:
        message = "Something went wrong on the server; it has been logged."
    else:
        message = "The request was refused."
    answer = JsonResponse(
        problem(status, message), status=status, content_type=PROBLEM_CONTENT_TYPE
    )
    for name in KEPT_HEADERS:
        if name in response:
            answer[name] = response[name]
    if allowed:
        answer["Allow"] = allowed
    return answer
