"""Tag and category paper counts for the index pages.

Counting every tag's or category's papers reads every link row (seconds at a
million papers), so the database keeps the counts itself: triggers append a
part (+n or -n) to TagCount or CategoryCount whenever links or a paper's
visibility change, a count is the sum of its parts, and `fold` folds the
parts into one row each on a schedule. Reads are exact at once, whatever
wrote to the catalog.

The triggers and the recount are SQL files in catalog/sql, one a database
for the triggers, which recount() loads as the migrations that set the
triggers do; each file's VISIBLE(x) is the visible-paper condition
(catalog.models.VISIBLE) on the catalog_paper row x.
"""

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias, TypedDict

from django.db import DEFAULT_DB_ALIAS, connection, connections, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.models import Count, IntegerField, Manager, OuterRef, QuerySet, Subquery, Sum
from django.db.models.expressions import CombinedExpression
from django.db.models.functions import Coalesce

from catalog.models import (
    Author,
    Category,
    CategoryCount,
    PaperAuthor,
    Tag,
    TagCount,
    visible_sql,
)

SQL_FILES = Path(__file__).resolve().parent / "sql"
TRIGGERS = "paper_counts.{vendor}.sql"
# The change log's trigger on catalog_paper (catalog.sync), set with the
# count triggers once its table exists.
CHANGE_LOG = "paper_changes.{vendor}.sql"
# The author links' copy of their paper's listed_at and visibility, set once
# the migrations have given the links those columns.
AUTHOR_LINKS = "author_links.{vendor}.sql"
AUTHOR_LINKS_REFILL = "author_links.refill.sql"
RECOUNT = "paper_counts.recount.sql"
VISIBLE_IN_SQL = re.compile(r"\bVISIBLE\((\w+)\)")

# (count model, its target column, the target model)
COUNTED = ((TagCount, "tag_id", Tag), (CategoryCount, "category_id", Category))


class PaperCount(TypedDict):
    """What with_tag_counts and with_category_counts give each row."""

    paper_count: int


if TYPE_CHECKING:
    from core.typing import WithAnnotations

    # Rows of with_tag_counts, with_category_counts and with_author_counts.
    CountedTag: TypeAlias = WithAnnotations[Tag, PaperCount]
    CountedCategory: TypeAlias = WithAnnotations[Category, PaperCount]
    CountedAuthor: TypeAlias = WithAnnotations[Author, PaperCount]


def _count_of(
    parts: Manager[TagCount] | Manager[CategoryCount], target: str, *, ref: str = "pk"
) -> Coalesce:
    total = parts.filter(**{target: OuterRef(ref)}).values(target).annotate(n=Sum("papers"))
    return Coalesce(Subquery(total.values("n"), output_field=IntegerField()), 0)


def with_tag_counts(tags: QuerySet[Tag]) -> "QuerySet[CountedTag]":
    """The tags, each with its number of visible papers as `paper_count`."""
    return tags.annotate(paper_count=_count_of(TagCount.objects, "tag"))


def with_category_counts(categories: QuerySet[Category]) -> "QuerySet[CountedCategory]":
    """The categories, each with its number of visible papers as `paper_count`."""
    return categories.annotate(paper_count=_count_of(CategoryCount.objects, "category"))


def papers_of(*, tag_ref: str, category_ref: str) -> CombinedExpression:
    """The number of visible papers of the tag or category that a row's
    columns tag_ref and category_ref name (0 for neither: each count is)."""
    return _count_of(TagCount.objects, "tag", ref=tag_ref) + _count_of(
        CategoryCount.objects, "category", ref=category_ref
    )


def with_author_counts(authors: QuerySet[Author]) -> "QuerySet[CountedAuthor]":
    """The authors, each with its number of visible papers as `paper_count`:
    counted, not maintained, off the index of the links' copy of their
    paper's visibility (catalog/sql/author_links.*.sql), a few thousand
    entries for the most prolific."""
    links = PaperAuthor.objects.filter(author=OuterRef("pk"), visible=True).order_by()
    counted = links.values("author").annotate(n=Count("*")).values("n")
    return authors.annotate(paper_count=Coalesce(Subquery(counted, output_field=IntegerField()), 0))


def tags_with_counts() -> "QuerySet[CountedTag]":
    """Every tag with its number of visible papers, by name."""
    return with_tag_counts(Tag.objects.all()).order_by("name")


def categories_with_counts() -> "QuerySet[CountedCategory]":
    """The categories with visible papers and their number, by code."""
    return with_category_counts(Category.objects.all()).filter(paper_count__gt=0).order_by("code")


def fold() -> None:
    """Fold each target's parts into one row, dropping the parts of deleted
    tags and categories; parts appended meanwhile are left for the next fold."""
    for model, target, targets in COUNTED:
        table = model._meta.db_table
        with transaction.atomic(), connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                # One statement, one snapshot: what it deletes is what it sums.
                cursor.execute(
                    f"WITH folded AS (DELETE FROM {table} RETURNING {target}, papers)"  # noqa: S608
                    f" INSERT INTO {table} ({target}, papers)"
                    f" SELECT {target}, sum(papers) FROM folded"
                    f" WHERE {target} IN (SELECT id FROM {targets._meta.db_table})"
                    f" GROUP BY {target} HAVING sum(papers) <> 0"
                )
            else:
                # SQLite has one writer at a time: nothing is appended in between.
                cursor.execute(
                    f"CREATE TEMP TABLE folded AS SELECT {target}, sum(papers) AS papers"  # noqa: S608
                    f" FROM {table} WHERE {target} IN (SELECT id FROM {targets._meta.db_table})"
                    f" GROUP BY {target} HAVING sum(papers) <> 0"
                )
                cursor.execute(f"DELETE FROM {table}")  # noqa: S608
                cursor.execute(
                    f"INSERT INTO {table} ({target}, papers) SELECT {target}, papers FROM folded"  # noqa: S608
                )
                cursor.execute("DROP TABLE folded")


def recount(*, using: str = DEFAULT_DB_ALIAS) -> None:
    """Set the triggers as catalog/sql has them, count every target again
    from its links and give every author link its paper's listed_at and
    visibility again: for a catalog written with the triggers disabled (a bulk
    load with session_replication_role = replica) or without them. Run it
    when nothing else writes to the catalog."""
    database = connections[using]
    with transaction.atomic(using=using), database.cursor() as cursor:
        triggers = trigger_files(database)
        refill = [AUTHOR_LINKS_REFILL] if AUTHOR_LINKS in triggers else []
        for name in (*triggers, RECOUNT, *refill):
            for statement in sql_statements(name, connection=database):
                cursor.execute(statement)


def sql_statements(name: str, *, connection: BaseDatabaseWrapper) -> list[str]:
    """The statements of the SQL file (its {vendor} the database's), with the
    visible-paper condition filled in."""
    sql = (SQL_FILES / name.format(vendor=connection.vendor)).read_text()
    sql = VISIBLE_IN_SQL.sub(lambda found: visible_sql(alias=found[1], connection=connection), sql)
    return connection.ops.prepare_sql_script(sql)


def trigger_files(connection: BaseDatabaseWrapper) -> list[str]:
    """The trigger files to load: the counts', and the change log's and the
    author links' once the migrations have made their table and columns."""
    tables = connection.introspection.table_names()
    with connection.cursor() as cursor:
        link_columns = {
            column.name
            for column in connection.introspection.get_table_description(
                cursor, "catalog_paperauthor"
            )
        }
    return [
        TRIGGERS,
        *([CHANGE_LOG] if "catalog_paperchange" in tables else []),
        *([AUTHOR_LINKS] if "visible" in link_columns else []),
    ]


def drop_sqlite_triggers(apps: Any, schema_editor: BaseDatabaseSchemaEditor) -> None:
    """A migration's step before it rewrites the papers' table on SQLite, which
    copies the table and renames the copy into place: that fails while a count
    trigger on another table names the old one. `create_sqlite_triggers` after."""
    if schema_editor.connection.vendor == "sqlite":
        for name in trigger_files(schema_editor.connection):
            for statement in sql_statements(name, connection=schema_editor.connection):
                if statement.lstrip().upper().startswith("DROP TRIGGER"):
                    schema_editor.execute(statement)


def create_sqlite_triggers(apps: Any, schema_editor: BaseDatabaseSchemaEditor) -> None:
    if schema_editor.connection.vendor == "sqlite":
        for name in trigger_files(schema_editor.connection):
            for statement in sql_statements(name, connection=schema_editor.connection):
                schema_editor.execute(statement)
