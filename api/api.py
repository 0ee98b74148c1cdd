"""The public JSON API, /api/v1/, with its OpenAPI schema at /api/v1/openapi.json.

Every response to a GET carries an ETag, the hash of its body: a client that
sends it back (If-None-Match) is told 304 while the answer is unchanged. Lists
carry no Last-Modified, since no one date says when a list last changed (a
paper hidden or tagged changes it without being the newest). Errors are
problem details (RFC 9457, `application/problem+json`) with a `detail` message
in words, and `errors` by parameter when parameters were refused, whichever
check refused them; api.middleware makes sure of that for errors raised
outside the API's views too.
"""

import logging
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.utils.cache import get_conditional_response, patch_vary_headers, set_response_etag
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.openapi.schema import OpenAPISchema

from api import discussion, personal, public
from api.auth import RateLimited
from api.cursors import CursorError
from api.http import PROBLEM_CONTENT_TYPE, Refused, problem
from api.queries import FilterError

logger = logging.getLogger(__name__)

DESCRIPTION = """\
The catalog's papers, tags and categories, and with a token a reader's own feed,
saved papers, subscriptions and upvotes (`PUT`/`DELETE /papers/{ref}/upvote`).

- Lists take the list page's filters (`q`, `tag`, `category`, `period`, `from`,
  `to`, `has_code`, `sort`) and are paged by `cursor`: pass each page's
  `next_cursor` to get the next one.
- Personal endpoints (`/me/...`) need `Authorization: Bearer <token>`; readers make
  and revoke tokens on their subscriptions page.
- Anonymous requests are limited per address, token requests per token: over the
  limit the answer is 429 with `Retry-After`.
- GET answers carry an `ETag`; send it back in `If-None-Match` to be told 304
  while nothing changed. HEAD is answered wherever GET is.
- Errors are problem details (RFC 9457): `application/problem+json` with `status`,
  `title`, `detail` in words and, when parameters were refused, `errors`: the
  messages for each parameter.
"""


class CatalogApi(NinjaAPI):
    def get_openapi_schema(
        self, *, path_prefix: str | None = None, path_params: dict[str, Any] | None = None
    ) -> OpenAPISchema:
        """The schema, with every error answer's body described as what it is
        sent as: problem details, application/problem+json."""
        schema = super().get_openapi_schema(path_prefix=path_prefix, path_params=path_params)
        for operations in schema.get("paths", {}).values():
            for operation in operations.values():
                for status, answer in operation.get("responses", {}).items():
                    content = answer.get("content", {})
                    if int(status) >= 400 and "application/json" in content:
                        content[PROBLEM_CONTENT_TYPE] = content.pop("application/json")
        return schema

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
        conditional = get_conditional_response(request, etag=response["ETag"], response=response)
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
    response = api.create_response(request, problem(status, message, **extra), status=status)
    response["Content-Type"] = PROBLEM_CONTENT_TYPE
    return response


@api.exception_handler(ValidationError)
def invalid_parameters(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    # The same answer as the list's own filter gives (FilterError): 400, the
    # messages by parameter ("limit", or "body.parent" for a JSON member).
    errors: dict[str, list[str]] = {}
    for each in exc.errors:
        location = [str(part) for part in each.get("loc", ())]
        if location[:1] in (["query"], ["path"]):
            location = location[1:]
        errors.setdefault(".".join(location) or "request", []).append(str(each.get("msg", "")))
    names = ", ".join(errors)
    return error(request, f"These parameters are not valid: {names}.", status=400, errors=errors)


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


@api.exception_handler(HttpError)
def http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    # ninja's own refusals, such as a body that is not JSON.
    return error(request, f"{exc.message.rstrip('.')}.", status=exc.status_code)


@api.exception_handler(Refused)
def refused(request: HttpRequest, exc: Refused) -> HttpResponse:
    return error(request, exc.message, status=exc.status)


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
api.add_router("", personal.papers_router)
api.add_router("", public.router)
api.add_router("/me", personal.router)
