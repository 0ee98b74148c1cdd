import django.contrib.postgres.search
from django.db import migrations, models

import catalog.models


def create_search_index(apps, schema_editor):
    # GIN is PostgreSQL's; on SQLite the column is NULL and an FTS5 table
    # indexes the sections instead (catalog.search.ensure_sqlite_index).
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            "CREATE INDEX IF NOT EXISTS fulltext_section_search"
            " ON catalog_fulltextsection USING gin (search_document)"
        )


def drop_search_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP INDEX IF EXISTS fulltext_section_search")


class Migration(migrations.Migration):
    dependencies = [("catalog", "0029_author_parts_and_votes_in_change_log")]

    operations = [
        migrations.AddField(
            model_name="fulltextsection",
            name="search_document",
            field=models.GeneratedField(
                db_persist=True,
                expression=catalog.models.SectionSearchDocument(),
                output_field=django.contrib.postgres.search.SearchVectorField(),
            ),
        ),
        migrations.RunPython(create_search_index, drop_search_index),
    ]
