"""What django-ninja leaves out of the API's OpenAPI schema: the headers each answer
carries, the statuses every operation may answer (304, 503, and 414 from the proxy
in front), examples of every parameter and error, and the optional token of the
public operations."""

from http import HTTPStatus
from typing import Any

from api.http import PROBLEM_CONTENT_TYPE, problem

RATE_LIMIT_HEADERS = {
    "RateLimit-Policy": {
        "description": "The allowance this request was counted in (IETF RateLimit header"
        ' fields): its name ("address" for anonymous requests, "token" for a token\'s),'
        " how many requests (q) per window of how many seconds (w); an upvote or a comment"
        ' also names its own ("votes"; "comments" and "comments-address"), after a comma.',
        "schema": {"type": "string"},
        "example": '"address";q=120;w=60',
    },
    "RateLimit": {
        "description": "What remains of each allowance RateLimit-Policy names (r), in its"
        " order, and the seconds until its window renews (t).",
        "schema": {"type": "string"},
        "example": '"address";r=42;t=17',
    },
}
ETAG = {
    "ETag": {
        "description": "The body's hash: send it back in If-None-Match to be told 304 while"
        " the answer is unchanged.",
        "schema": {"type": "string"},
        "example": '"2ba8a9d1a759253c8ce13b2765661ee4"',
    }
}
LINK = {
    "Link": {
        "description": 'The pages after and before this one (RFC 8288): rel="next" and'
        ' rel="prev", absolute addresses; left out when there are neither.',
        "schema": {"type": "string"},
        "example": '<https://example.org/api/v1/papers?cursor=eyJ...>; rel="next"',
    }
}
LAST_MODIFIED = {
    "Last-Modified": {
        "description": "The last change to the paper or what its page shows with it (tags,"
        " categories, authors, code links, summaries), sent when `fields` leaves out"
        " `upvotes` and `similar`, which change apart from it (If-None-Match with the"
        " ETag, the body's hash, covers those). If-Modified-Since is answered 304 when"
        " nothing changed since.",
        "schema": {"type": "string"},
        "example": "Fri, 05 Dec 2025 09:30:00 GMT",
    }
}
RETRY_AFTER = {
    "Retry-After": {
        "description": "Seconds until the limit lifts (429), or until the service is"
        " expected back (503).",
        "schema": {"type": "integer"},
        "example": 17,
    }
}
NOT_MODIFIED = {
    "description": "Not Modified: the answer is the one whose ETag was sent in If-None-Match"
    " (or has not changed since If-Modified-Since). No body.",
    "headers": {**ETAG, **RATE_LIMIT_HEADERS},
}
PROBLEM_SCHEMA = {"$ref": "#/components/schemas/Error"}
# Answered by any operation: the database out of reach (core.outages), or an
# address too long for the proxy in front (deploy/nginx).
COMMON_ERRORS = {
    414: {
        "description": "URI Too Long: the address is longer than the server reads (8 KB);"
        " answered by the proxy in front, as problem details too.",
        "detail": "The address is too long; shorten the query (q takes at most 300 characters).",
    },
    503: {
        "description": "Service Unavailable: the database cannot be reached for a moment;"
        " try again after Retry-After seconds.",
        "detail": "The service is briefly unavailable; try again in 30 seconds.",
    },
}
# What each error status's detail says, for the examples.
EXAMPLE_DETAILS = {
    400: "These parameters are not valid: limit.",
    401: "This needs a valid API token, sent as 'Authorization: Bearer <token>'; readers"
    " make tokens on their subscriptions page.",
    403: "Commenting is closed on this paper.",
    404: "There is no paper with arXiv id 2505.15034 here.",
    429: "Too many requests; try again in 17 seconds.",
}
EXAMPLE_MEMBERS: dict[int, dict[str, Any]] = {
    400: {"errors": {"limit": ["Input should be less than or equal to 100"]}},
    429: {"retry_after": 17},
}
# An example of each parameter, as a client would send it.
PARAMETER_EXAMPLES: dict[str, Any] = {
    "q": "reasoning agents",
    "tag": "agents",
    "category": "cs.AI",
    "period": "7d",
    "from": "2025-01-01",
    "to": "2025-12-31",
    "has_code": "1",
    "in": "fulltext",
    "sort": "newest",
    "window": "7d",
    "added_since": "2026-01-31T00:00:00Z",
    "updated_since": "2026-01-31T00:00:00Z",
    "cursor": "eyJsaXN0ZWRfYXQiOiIyMDI1LTEwLTAxVDAwOjAwOjAwKzAwOjAwIiwiaWQiOjQ5fQ",
    "limit": 20,
    "ids": "2505.15034",
    "fields": "id,title,authors",
    "since": "0",
    "ref": "2505.15034",
    "slug": "agents",
    "code": "cs.AI",
    "author": "kangkun-mao",
}
PATH_PARAMETERS = {
    "ref": "The paper: an arXiv id (`2505.15034`, `hep-th/9901001`, with or without"
    " version), a DOI (the paper's, or arXiv's `10.48550/arXiv.2505.15034`) or its"
    " stable id here (a number).",
    "slug": "A tag's slug, as /tags lists them.",
    "code": "A category's code, as /categories lists them (`cs.AI`).",
    "author": "An author's slug, as their page's address has it (/authors/<slug>/).",
}
SCHEME_DESCRIPTION = (
    "A reader's API token (`Authorization: Bearer <token>`), made on their subscriptions"
    " page. Needed by the /me endpoints and to comment or vote; optional elsewhere, where"
    " it counts requests against the token's allowance instead of the address's. A token"
    " that is not valid is refused (401), never read as anonymous."
)
# Public operations: anonymous, or with a token.
OPTIONAL_TOKEN: list[dict[str, list[str]]] = [{}, {"ReaderToken": []}]


def describe_operations(schema: dict[str, Any]) -> None:
    """Add what ninja leaves out (see above) to the schema's operations."""
    schemes = schema.get("components", {}).get("securitySchemes", {})
    if "ReaderToken" in schemes:
        schemes["ReaderToken"]["description"] = SCHEME_DESCRIPTION
    for operations in schema.get("paths", {}).values():
        for method, operation in operations.items():
            operation.setdefault("security", OPTIONAL_TOKEN)
            for parameter in operation.get("parameters", []):
                describe_parameter(parameter)
            responses = operation.get("responses", {})
            for status, common in COMMON_ERRORS.items():
                responses.setdefault(status, common_error(status, common))
            for status, answer in responses.items():
                if int(status) >= 400:
                    problem_example(int(status), answer)
                headers = answer.setdefault("headers", {})
                headers.update(RATE_LIMIT_HEADERS)
                if str(status) == "429":
                    headers.update(RETRY_AFTER)
                is_json = "application/json" in answer.get("content", {})
                if str(status) == "200" and method == "get" and is_json:
                    headers.update(ETAG)
                    answered = _schema_name(answer)
                    if answered == "PaperPage":
                        headers.update(LINK)
                    elif answered == "PaperDetail":
                        headers.update(LAST_MODIFIED)
                if str(status) == "503":
                    headers.update(RETRY_AFTER)
            if method == "get":
                # Keyed as ninja keys the others: by number.
                responses.setdefault(304, NOT_MODIFIED)


def describe_parameter(parameter: dict[str, Any]) -> None:
    name = parameter["name"]
    if parameter["in"] == "path" and not parameter.get("description"):
        parameter["description"] = PATH_PARAMETERS.get(name, "")
    if name in PARAMETER_EXAMPLES and "example" not in parameter:
        example = PARAMETER_EXAMPLES[name]
        is_list = parameter.get("schema", {}).get("type") == "array"
        parameter["example"] = [example] if is_list else example


def common_error(status: int, common: dict[str, str]) -> dict[str, Any]:
    return {
        "description": common["description"],
        "content": {PROBLEM_CONTENT_TYPE: {"schema": PROBLEM_SCHEMA}},
    }


def problem_example(status: int, answer: dict[str, Any]) -> None:
    """An example body for an error answer: problem details as the API sends them."""
    content = answer.get("content", {}).get(PROBLEM_CONTENT_TYPE)
    if content is None or "example" in content:
        return
    detail = EXAMPLE_DETAILS.get(status) or COMMON_ERRORS.get(status, {}).get("detail")
    content["example"] = problem(
        status, detail or HTTPStatus(status).phrase, **EXAMPLE_MEMBERS.get(status, {})
    )


def _schema_name(answer: dict[str, Any]) -> str:
    body = answer.get("content", {}).get("application/json", {}).get("schema", {})
    reference: str = body.get("$ref", "")
    return reference.rsplit("/", 1)[-1]
