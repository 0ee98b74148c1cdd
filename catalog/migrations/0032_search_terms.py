from django.contrib.postgres.operations import TrigramExtension
from django.db import migrations, models

# The vocabulary of names a search may mean, one view over the tables that hold
# them: always in step with them, written by nothing. Every branch gives each
# column the same type (else PostgreSQL cannot push a condition on the view
# into them), and the normalized column's expression in each is the one its
# trigram index holds, so PostgreSQL meets a condition on it from the indexes.
VIEW = """
CREATE VIEW catalog_searchterm AS
SELECT CAST('tag:' || slug AS text) AS id, CAST('tag' AS text) AS kind, 0 AS kind_order,
       CAST(slug AS text) AS key, CAST(name AS text) AS label,
       replace(lower(CAST(name AS text)), '_', ' ') AS normalized
  FROM catalog_tag
UNION ALL
SELECT CAST('category:' || code AS text), CAST('category' AS text), 1,
       CAST(code AS text), CAST(code AS text), lower(CAST(code AS text))
  FROM catalog_category
UNION ALL
SELECT CAST('category-name:' || code AS text), CAST('category' AS text), 1,
       CAST(code AS text), CAST(name AS text), lower(CAST(name AS text))
  FROM catalog_category WHERE name <> ''
UNION ALL
SELECT CAST('author:' || slug AS text), CAST('author' AS text), 2,
       CAST(slug AS text), CAST(name AS text), CAST(normalized_name AS text)
  FROM catalog_author WHERE merged_into_id IS NULL
"""
TRIGRAM_INDEXES = {
    "catalog_tag_name_trgm": (
        "catalog_tag USING gin ((replace(lower(name::text), '_', ' ')) gin_trgm_ops)"
    ),
    "catalog_category_code_trgm": "catalog_category USING gin ((lower(code::text)) gin_trgm_ops)",
    "catalog_category_name_trgm": (
        "catalog_category USING gin ((lower(name::text)) gin_trgm_ops) WHERE name <> ''"
    ),
    "catalog_author_name_trgm": (
        "catalog_author USING gin ((normalized_name::text) gin_trgm_ops)"
        " WHERE merged_into_id IS NULL"
    ),
}


def create_vocabulary(apps, schema_editor):
    schema_editor.execute(VIEW)
    if schema_editor.connection.vendor == "postgresql":
        for name, definition in TRIGRAM_INDEXES.items():
            schema_editor.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {definition}")


def drop_vocabulary(apps, schema_editor):
    schema_editor.execute("DROP VIEW IF EXISTS catalog_searchterm")
    if schema_editor.connection.vendor == "postgresql":
        for name in TRIGRAM_INDEXES:
            schema_editor.execute(f"DROP INDEX IF EXISTS {name}")


class Migration(migrations.Migration):
    dependencies = [("catalog", "0031_papers_from_other_sources")]

    operations = [
        TrigramExtension(),
        migrations.CreateModel(
            name="SearchTerm",
            fields=[
                ("id", models.CharField(max_length=340, primary_key=True, serialize=False)),
                (
                    "kind",
                    models.CharField(
                        choices=[("tag", "Tag"), ("category", "Category"), ("author", "Author")],
                        max_length=10,
                    ),
                ),
                ("kind_order", models.PositiveSmallIntegerField()),
                ("key", models.CharField(max_length=320)),
                ("label", models.CharField(max_length=300)),
                ("normalized", models.CharField(max_length=300)),
            ],
            options={"db_table": "catalog_searchterm", "managed": False},
        ),
        migrations.RunPython(create_vocabulary, drop_vocabulary),
    ]
