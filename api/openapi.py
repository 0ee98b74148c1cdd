"""The response headers the API sends, described in its OpenAPI schema: django-ninja
describes bodies only."""

from typing import Any

RATE_LIMIT_HEADERS = {
    "RateLimit-Policy": {
        "description": "The allowance this request was counted in (IETF RateLimit header"
        ' fields): its name ("address" for anonymous requests, "token" for a token\'s),'
        " how many requests (q) per window of how many seconds (w).",
        "schema": {"type": "string"},
        "example": '"address";q=120;w=60',
    },
    "RateLimit": {
        "description": "What remains of the allowance (r) and the seconds until its window"
        " renews (t).",
        "schema": {"type": "string"},
        "example": '"address";r=42;t=17',
    },
}
ETAG = {
    "ETag": {
        "description": "The body's hash: send it back in If-None-Match to be told 304 while"
        " the answer is unchanged.",
        "schema": {"type": "string"},
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
        " categories, authors, code links, summaries); not moved by its upvote count or"
        " its similar papers, which change apart from it: If-None-Match with the ETag"
        " (the body's hash) covers those. If-Modified-Since is answered 304 when nothing"
        " dated changed since.",
        "schema": {"type": "string"},
    }
}
RETRY_AFTER = {
    "Retry-After": {
        "description": "Seconds until the limit lifts.",
        "schema": {"type": "integer"},
    }
}
NOT_MODIFIED = {
    "description": "Not Modified: the answer is the one whose ETag was sent in If-None-Match"
    " (or has not changed since If-Modified-Since). No body."
}


def describe_headers(schema: dict[str, Any]) -> None:
    """Add each answer's headers, and GET's 304, to the schema's operations."""
    for operations in schema.get("paths", {}).values():
        for method, operation in operations.items():
            responses = operation.get("responses", {})
            for status, answer in responses.items():
                headers = answer.setdefault("headers", {})
                headers.update(RATE_LIMIT_HEADERS)
                if str(status) == "429":
                    headers.update(RETRY_AFTER)
                if str(status) == "200" and method == "get":
                    headers.update(ETAG)
                    answered = _schema_name(answer)
                    if answered == "PaperPage":
                        headers.update(LINK)
                    elif answered == "PaperDetail":
                        headers.update(LAST_MODIFIED)
            if method == "get":
                # Keyed as ninja keys the others: by number.
                responses.setdefault(304, NOT_MODIFIED)


def _schema_name(answer: dict[str, Any]) -> str:
    body = answer.get("content", {}).get("application/json", {}).get("schema", {})
    reference: str = body.get("$ref", "")
    return reference.rsplit("/", 1)[-1]
