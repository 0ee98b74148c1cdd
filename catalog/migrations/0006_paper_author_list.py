from django.db import migrations, models

# One set-based statement each: a catalog of a million papers is filled in seconds.
FILL = {
    "postgresql": """
        UPDATE catalog_paper p SET author_list = s.names
        FROM (
            SELECT pa.paper_id, jsonb_agg(a.name ORDER BY pa.position) AS names
            FROM catalog_paperauthor pa JOIN catalog_author a ON a.id = pa.author_id
            GROUP BY pa.paper_id
        ) s
        WHERE p.id = s.paper_id
    """,
    "sqlite": """
        UPDATE catalog_paper SET author_list = (
            SELECT json_group_array(name) FROM (
                SELECT a.name FROM catalog_paperauthor pa
                JOIN catalog_author a ON a.id = pa.author_id
                WHERE pa.paper_id = catalog_paper.id ORDER BY pa.position
            )
        )
        WHERE EXISTS (SELECT 1 FROM catalog_paperauthor pa WHERE pa.paper_id = catalog_paper.id)
    """,
}


def fill_author_lists(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(FILL[schema_editor.connection.vendor])


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0005_category_names"),
    ]

    operations = [
        migrations.AddField(
            model_name="paper",
            name="author_list",
            field=models.JSONField(blank=True, db_default=[], default=list, editable=False),
        ),
        migrations.RunPython(fill_author_lists, migrations.RunPython.noop),
    ]
