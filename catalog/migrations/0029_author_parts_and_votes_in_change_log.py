"""Authors' names in the parts their source gave (Paper.author_parts), and the
change log recording a paper's upvote count moving (catalog/sql): the count is
on the paper's API item, so a client keeping a copy needs it."""

from django.db import migrations, models

from catalog import counts


def set_triggers(apps, schema_editor):
    for statement in counts.sql_statements(counts.CHANGE_LOG, connection=schema_editor.connection):
        schema_editor.execute(statement)


def drop_votes_trigger(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP TRIGGER IF EXISTS catalog_paper_log_votes ON catalog_paper")
    else:
        schema_editor.execute("DROP TRIGGER IF EXISTS catalog_paper_votes_log")


class Migration(migrations.Migration):

    dependencies = [
        ("catalog", "0028_fulltext"),
    ]

    operations = [
        # SQLite rewrites the papers' table to add a column: its triggers go first.
        migrations.RunPython(counts.drop_sqlite_triggers, counts.create_sqlite_triggers),
        migrations.AddField(
            model_name="paper",
            name="author_parts",
            field=models.JSONField(blank=True, db_default=[], default=list, editable=False),
        ),
        migrations.RunPython(counts.create_sqlite_triggers, counts.drop_sqlite_triggers),
        migrations.RunPython(set_triggers, drop_votes_trigger),
    ]
