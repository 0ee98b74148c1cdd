"""The public JSON API, /api/v1/, with its OpenAPI schema at /api/v1/openapi.json.

Every response to a GET carries an ETag, the hash of its body: a client that
sends it back (If-None-Match) is told 304 while the answer is unchanged. Lists
carry no Last-Modified, since no one date says when a list last changed (a
paper hidden or tagged changes it without being the newest); one paper carries
its own, its changed_at, when its fields leave out its upvotes and similar
papers (they change apart from it: the ETag alone covers them). A query parameter
no route declares is refused (400), not ignored. Errors are
problem details (RFC 9457, `application/problem+json`) with a `detail` message
in words, and `errors` by parameter when parameters were refused, whichever
check refused them; api.middleware makes sure of that for errors raised
outside the API's views too.
"""

import functools
import logging
from collections.abc import Callable
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.utils.cache import get_conditional_response, patch_vary_headers, set_response_etag
from django.utils.http import parse_http_date_safe
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.openapi.schema import OpenAPISchema
from ninja.operation import Operation

from api import discussion, personal, public, sync
from api.auth import RateLimited
from api.cursors import CursorError
from api.http import PROBLEM_CONTENT_TYPE, Refused, problem
from api.openapi import describe_operations
from api.queries import FilterError

logger = logging.getLogger(__name__)

DESCRIPTION = """\
The catalog's papers, tags and categories, and with a token a reader's own feed,
saved papers, subscriptions and upvotes (`PUT`/`DELETE /papers/{ref}/upvote`).

- Lists take the list page's filters (`q`, `tag`, `category`, `period`, `from`,
  `to`, `has_code`, `sort`) and are paged by `cursor`: pass each page's
  `next_cursor` (or `previous_cursor`) to get the next (or previous) one; the
  `Link` header names both pages too. `total` says how many papers the list
  holds, exactly or as an estimate (`total_is_estimate`). A search sorted by
  relevance ranks only its newest `ranked_of` matches (`capped` says when there
  are more) and pages over them as they stood when its first page was read.
- `GET /papers?ids=...` looks up to 100 papers up at once, by arXiv id, DOI or
  stable id, in the order asked; those not here are listed in `missing`.
- `fields=id,title,...` answers items with only the fields named.
- A query parameter an endpoint does not take is refused (400), not ignored.
- Keeping a copy: `GET /changes?since=<token>` lists every paper added, changed,
  hidden, merged or removed since the token, each once at its latest state, in
  commit order, with the token to pass next (`next_since`); without `since`, from
  the start. `GET /dump` names the nightly dump of every visible paper (JSON Lines,
  gzip) with its SHA-256 and the token to follow `/changes` from. Lists also take
  `added_since`, `updated_since` and `sort=added|updated`, and items carry
  `added_at` and `updated_at` (the last change here).
- Personal endpoints (`/me/...`) need `Authorization: Bearer <token>`; readers make
  and revoke tokens on their subscriptions page.
- Anonymous requests are limited per address, token requests per token: over the
  limit the answer is 429 with `Retry-After`. Every answer says where the client
  stands: `RateLimit-Policy: "address";q=120;w=60` (the allowance, per window in
  seconds) and `RateLimit: "address";r=42;t=17` (what remains, and the seconds
  until the window renews), as the IETF draft has them.
- GET answers carry an `ETag`; send it back in `If-None-Match` to be told 304
  while nothing changed. One paper asked without its upvotes and similar papers
  (`fields=`) also carries `Last-Modified`, for `If-Modified-Since`. HEAD is
  answered wherever GET is.
- Errors are problem details (RFC 9457): `application/problem+json` with `status`,
  `title`, `detail` in words and, when parameters were refused, `errors`: the
  messages for each parameter.
"""


class CatalogApi(NinjaAPI):
    def get_openapi_schema(
        self, *, path_prefix: str | None = None, path_params: dict[str, Any] | None = None
    ) -> OpenAPISchema:
        """The schema, with every error answer's body described as what it is
        sent as (problem details, application/problem+json), and what ninja
        leaves out (api.openapi)."""
        schema = super().get_openapi_schema(path_prefix=path_prefix, path_params=path_params)
        for operations in schema.get("paths", {}).values():
            for operation in operations.values():
                for status, answer in operation.get("responses", {}).items():
                    content = answer.get("content", {})
                    if int(status) >= 400 and "application/json" in content:
                        content[PROBLEM_CONTENT_TYPE] = content.pop("application/json")
        describe_operations(schema)
        return schema

    def create_temporal_response(self, request: HttpRequest) -> HttpResponse:
        # Called once the request is let in (token, rate), before its parameters
        # are read: the first place a route's refusal of unknown ones can go.
        unknown = sorted(set(request.GET) - getattr(request, "api_parameters", set(request.GET)))
        if unknown:
            raise UnknownParameters(unknown)
        return super().create_temporal_response(request)

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
        last_modified = parse_http_date_safe(response.get("Last-Modified", ""))
        conditional = get_conditional_response(
            request, etag=response["ETag"], last_modified=last_modified, response=response
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


class UnknownParameters(Exception):
    def __init__(self, names: list[str]) -> None:
        super().__init__("Unknown parameters.")
        self.names = names


def refuse_unknown_parameters(
    run: Callable[..., HttpResponseBase],
) -> Callable[..., HttpResponseBase]:
    """Every route's run, told the query parameters the route declares: any
    other is refused (CatalogApi.create_temporal_response) rather than silently
    ignored, which would answer a misspelt filter with the whole list."""
    operation = getattr(run, "__self__", None)
    if not isinstance(operation, Operation):
        raise TypeError("Decorate the operation's own run method.")
    declared = {
        name
        for model in operation.models
        if model.__ninja_param_source__ == "query"
        for name in getattr(model, "__ninja_flatten_map__", model.model_fields)
    }

    @functools.wraps(run)
    def checked(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        request.api_parameters = declared  # type: ignore[attr-defined]
        return run(request, *args, **kwargs)

    return checked


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
        if location[:1] == ["query"]:
            # A parameter by its own name: not the schema grouping it, nor an
            # index among its repeats (query, lookup, ids, 0: "ids").
            location = [part for part in location[2:] if not part.isdigit()] or location[1:]
        elif location[:1] == ["path"]:
            location = location[1:]
        elif location[:1] == ["body"] and len(location) > 2:
            # A JSON member by its own name, not the view's argument holding it
            # (body, payload, parent: "body.parent").
            location = ["body", *location[2:]]
        errors.setdefault(".".join(location) or "request", []).append(str(each.get("msg", "")))
    names = ", ".join(errors)
    return error(request, f"These parameters are not valid: {names}.", status=400, errors=errors)


@api.exception_handler(UnknownParameters)
def unknown_parameters(request: HttpRequest, exc: UnknownParameters) -> HttpResponse:
    declared = sorted(getattr(request, "api_parameters", ()))
    takes = f"it takes: {', '.join(declared)}" if declared else "it takes none"
    message = f"This address does not take these parameters: {', '.join(exc.names)}; {takes}."
    errors = {name: ["Not a parameter of this address."] for name in exc.names}
    return error(request, message, status=400, errors=errors)


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
api.add_router("", sync.router)
api.add_router("/me", personal.router)
api.add_decorator(refuse_unknown_parameters, mode="view")
