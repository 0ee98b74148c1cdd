from django.db import migrations


def create_search_index(apps, schema_editor):
    # GIN is PostgreSQL's; on SQLite the column is NULL and search does not use it.
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            "CREATE INDEX IF NOT EXISTS paper_search_document"
            " ON catalog_paper USING gin (search_document)"
        )


def drop_search_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP INDEX IF EXISTS paper_search_document")


class Migration(migrations.Migration):
    dependencies = [("catalog", "0001_initial")]

    operations = [migrations.RunPython(create_search_index, drop_search_index)]
