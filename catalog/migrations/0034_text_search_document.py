import django.contrib.postgres.search
from django.db import migrations

from catalog.search import index_texts


def index_stored_texts(apps, schema_editor):
    # GIN is PostgreSQL's; on SQLite the column stays NULL and the sections'
    # FTS5 table is asked instead (catalog.search.text_matches).
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(
        "CREATE INDEX IF NOT EXISTS fulltext_search ON catalog_fulltext USING gin (search_document)"
    )
    # The texts' and the sections' matches from their indexes, whatever the
    # planner makes of their number (catalog.search._in_text says why).
    schema_editor.execute(
        "CREATE OR REPLACE FUNCTION catalog_papers_whose_text_holds(query tsquery)"
        " RETURNS SETOF bigint LANGUAGE sql STABLE PARALLEL SAFE SET enable_seqscan = off"
        " AS $$ SELECT paper_id FROM catalog_fulltext WHERE search_document @@ query $$"
    )
    schema_editor.execute(
        "CREATE OR REPLACE FUNCTION catalog_papers_whose_sections_hold(query tsquery)"
        " RETURNS SETOF bigint LANGUAGE sql STABLE PARALLEL SAFE SET enable_seqscan = off"
        " AS $$ SELECT DISTINCT paper_id FROM catalog_fulltextsection"
        " WHERE search_document @@ query $$"
    )
    FullText = apps.get_model("catalog", "FullText")
    index_texts(FullText.objects.using(schema_editor.connection.alias).all())


def drop_search_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP FUNCTION IF EXISTS catalog_papers_whose_sections_hold(tsquery)")
        schema_editor.execute("DROP FUNCTION IF EXISTS catalog_papers_whose_text_holds(tsquery)")
        schema_editor.execute("DROP INDEX IF EXISTS fulltext_search")


class Migration(migrations.Migration):
    dependencies = [("catalog", "0033_author_links_newest")]

    operations = [
        migrations.AddField(
            model_name="fulltext",
            name="search_document",
            field=django.contrib.postgres.search.SearchVectorField(
                blank=True, editable=False, null=True
            ),
        ),
        migrations.RunPython(index_stored_texts, drop_search_index),
    ]
