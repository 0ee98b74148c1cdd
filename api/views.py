from dataclasses import dataclass, field
from functools import cache
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from api.api import api
from core.http import safe_methods

METHODS = ("get", "put", "post", "patch", "delete")
# A part of the OpenAPI schema, as JSON.
Json = dict[str, Any]


@dataclass(frozen=True)
class Parameter:
    name: str
    where: str  # query, path
    required: bool
    kind: str  # what values it takes, as a reader reads it
    description: str


@dataclass(frozen=True)
class Endpoint:
    method: str
    path: str
    summary: str
    description: str
    needs_token: bool
    parameters: list[Parameter] = field(default_factory=list)
    returns: str = ""  # the schema of the success answer
    fields: list[Parameter] = field(default_factory=list)  # its top-level fields
    errors: list[tuple[str, str]] = field(default_factory=list)  # (status, meaning)


@safe_methods
def docs(request: HttpRequest) -> HttpResponse:
    """The API's reference, read from its OpenAPI schema (/api/v1/openapi.json) and
    shown in the site's own page, light or dark, in the reader's language."""
    info, groups = reference()
    return render(request, "api/docs.html", {"info": info, "groups": groups})


@cache
def reference() -> tuple[Json, list[tuple[str, list[Endpoint]]]]:
    """The schema's endpoints grouped by tag, in the schema's order (once per process)."""
    schema = api.get_openapi_schema()
    schemas = schema.get("components", {}).get("schemas", {})
    groups: dict[str, list[Endpoint]] = {}
    for path, operations in schema["paths"].items():
        for method in METHODS:
            operation = operations.get(method)
            if operation is None:
                continue
            success = operation["responses"].get("200", {})
            returned = _ref_name(
                success.get("content", {}).get("application/json", {}).get("schema", {})
            )
            endpoint = Endpoint(
                method=method.upper(),
                path=path,
                summary=operation.get("summary", ""),
                description=operation.get("description", ""),
                needs_token=bool(operation.get("security")),
                parameters=[_parameter(p) for p in operation.get("parameters", [])],
                returns=returned,
                fields=_fields(schemas.get(returned, {})),
                errors=[
                    (status, answer.get("description", ""))
                    for status, answer in sorted(operation["responses"].items())
                    if status != "200"
                ],
            )
            groups.setdefault((operation.get("tags") or [""])[0], []).append(endpoint)
    return schema["info"], list(groups.items())


def _parameter(parameter: Json) -> Parameter:
    return Parameter(
        name=parameter["name"],
        where=parameter["in"],
        required=bool(parameter.get("required")),
        kind=_kind(parameter.get("schema", {})),
        description=parameter.get("description", ""),
    )


def _fields(schema: Json) -> list[Parameter]:
    required = set(schema.get("required", []))
    return [
        Parameter(
            name=name,
            where="",
            required=name in required,
            kind=_kind(value),
            description=value.get("description", ""),
        )
        for name, value in schema.get("properties", {}).items()
    ]


def _ref_name(schema: Json) -> str:
    ref: str = schema.get("$ref", "")
    return ref.rpartition("/")[2]


def _kind(schema: Json) -> str:
    """A schema as a short phrase: "string", "one of 1d, 7d", "list of string", "PaperItem"."""
    if "$ref" in schema:
        return _ref_name(schema)
    if "anyOf" in schema:
        kinds = [_kind(s) for s in schema["anyOf"] if s.get("type") != "null"]
        return " or ".join(kinds) or "null"
    if "allOf" in schema and len(schema["allOf"]) == 1:
        return _kind(schema["allOf"][0])
    if "enum" in schema:
        return "one of " + ", ".join(str(value) for value in schema["enum"])
    kind: str = schema.get("type", "any")
    if kind == "array":
        return "list of " + _kind(schema.get("items", {}))
    bounds = [
        f"{word} {schema[key]}"
        for key, word in (("minimum", "from"), ("maximum", "to"), ("maxLength", "at most"))
        if key in schema
    ]
    return kind + (f" ({', '.join(bounds)})" if bounds else "")
