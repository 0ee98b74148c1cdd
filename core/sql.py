"""Several rows' text as one column, so a page gets a list inside another
query instead of a query of its own: string_agg on PostgreSQL, group_concat
on SQLite. Fields are joined by FIELD and rows by ROW, two control characters
no title, name, slug or code holds."""

from typing import Any

from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import (
    Aggregate,
    Expression,
    F,
    Model,
    QuerySet,
    Subquery,
    TextField,
    Value,
)
from django.db.models.functions import Concat
from django.db.models.sql.compiler import SQLCompiler

FIELD = "\x1f"
ROW = "\x1e"


class JoinedText(Aggregate):
    function = "STRING_AGG"
    output_field = TextField()

    def __init__(self, expression: Expression | F | str, **extra: Any) -> None:
        super().__init__(expression, Value(ROW), **extra)

    def as_sqlite(
        self, compiler: SQLCompiler, connection: BaseDatabaseWrapper, **extra_context: Any
    ) -> tuple[str, tuple[str | int, ...]]:
        return super().as_sql(compiler, connection, function="GROUP_CONCAT", **extra_context)


def joined_rows(rows: QuerySet[Model], *, by: str, fields: list[str]) -> Subquery:
    """A subquery giving, for the outer row, `fields` of every row of `rows`
    whose `by` column is the outer row's key (rows filtered on OuterRef)."""
    parts: list[Value | str] = []
    for field in fields:
        if parts:
            parts.append(Value(FIELD))
        parts.append(field)
    expression = Concat(*parts, output_field=TextField()) if len(parts) > 1 else parts[0]
    return Subquery(
        rows.order_by().values(by).annotate(joined=JoinedText(expression)).values("joined")[:1],
        output_field=TextField(),
    )


def split_rows(text: str | None) -> list[list[str]]:
    """The rows of a joined column, each a list of its fields."""
    if not text:
        return []
    return [row.split(FIELD) for row in text.split(ROW)]
