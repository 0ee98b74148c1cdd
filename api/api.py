"""The public JSON API, /api/v1/, with its OpenAPI schema at /api/v1/openapi.json.

Every response to a GET carries an ETag (and lists a Last-Modified): a client
that sends it back (If-None-Match, If-Modified-Since) is told 304 while the
answer is unchanged. Errors are JSON with a `detail` message (api.middleware
makes sure of that for errors raised outside the API's views too).
"""

import logging
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.utils.cache import get_conditional_response, patch_vary_headers, set_response_etag
from django.utils.http import parse_http_date_safe
from ninja import NinjaAPI
from ninja.errors import AuthenticationError

from api import discussion, personal, public
from api.auth import RateLimited
from api.cursors import CursorError
from api.queries import FilterError

logger = logging.getLogger(__name__)

DESCRIPTION = """\
The catalog's papers, tags and categories, and with a token a reader's own feed,
saved papers and subscriptions.

- Lists take the list page's filters (`q`, `tag`, `category`, `period`, `from`,
  `to`, `has_code`, `sort`) and are paged by `cursor`: pass each page's
  `next_cursor` to get the next one.
- Personal endpoints (`/me/...`) need `Authorization: Bearer <token>`; readers make
  and revoke tokens on their subscriptions page.
- Anonymous requests are limited per address, token requests per token: over the
  limit the answer is 429 with `Retry-After`.
- GET answers carry an `ETag` (lists also `Last-Modified`, when their newest paper
  came); send it back in `If-None-Match` to be told 304 while nothing changed.
"""


class CatalogApi(NinjaAPI):
    def create_response(
        self,
        request: HttpRequest,
        data: Any,
        *,
        status: int | None = None,
        temporal_response: HttpResponse | None = None,
    ) -> HttpResponse:
        response = super().create_response(
            request, data, status=status, temporal_response=temporal_response
        )
        patch_vary_headers(response, ["Authorization"])
        if request.method != "GET" or response.status_code != 200:
            return response
        # The ETag is the body's hash: equal answers, equal tags, so a poller's
        # 304 means exactly "nothing changed".
        set_response_etag(response)
        conditional = get_conditional_response(
            request,
            etag=response["ETag"],
            last_modified=parse_http_date_safe(response.get("Last-Modified", "")),
            response=response,
        )
        # Given a response, Django answers it or a 304 (or 412), never None.
        return conditional if conditional is not None else response


api = CatalogApi(
    title="Papershelf API",
    version="1",
    description=DESCRIPTION,
    urls_namespace="api",
    docs_url=None,  # served at /api/docs, beside the versions (config.urls)
)


def error(request: HttpRequest, message: str, *, status: int, **extra: Any) -> HttpResponse:
    return api.create_response(request, {"detail": message, **extra}, status=status)


@api.exception_handler(RateLimited)
def too_many_requests(request: HttpRequest, exc: RateLimited) -> HttpResponse:
    response = error(
        request,
        f"Too many requests; try again in {exc.retry_after} seconds.",
        status=429,
        retry_after=exc.retry_after,
    )
    response["Retry-After"] = str(exc.retry_after)
    return response


@api.exception_handler(AuthenticationError)
def unauthorized(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    response = error(
        request,
        "This needs a valid API token, sent as 'Authorization: Bearer <token>'; "
        "readers make tokens on their subscriptions page.",
        status=401,
    )
    response["WWW-Authenticate"] = 'Bearer realm="api"'
    return response


@api.exception_handler(Http404)
def not_found(request: HttpRequest, exc: Http404) -> HttpResponse:
    return error(request, str(exc) or "Not found.", status=404)


@api.exception_handler(FilterError)
def bad_filters(request: HttpRequest, exc: FilterError) -> HttpResponse:
    return error(request, str(exc), status=400, errors=exc.errors)


@api.exception_handler(CursorError)
def bad_cursor(request: HttpRequest, exc: CursorError) -> HttpResponse:
    return error(request, str(exc), status=400)


@api.exception_handler(Exception)
def server_error(request: HttpRequest, exc: Exception) -> HttpResponse:
    # Django's own handling: logged, mailed to admins, answered 500 (as JSON,
    # by api.middleware) rather than ninja's traceback in DEBUG.
    raise exc


# Before the public router: its /papers/{path:ref} would take the comments' paths too.
api.add_router("", discussion.router)
api.add_router("", public.router)
api.add_router("/me", personal.router)
