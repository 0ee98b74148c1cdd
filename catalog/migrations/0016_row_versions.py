"""Row versions: papers, tags and categories get changed_at (catalog.changes).

Existing rows take the moment of the migration: what changed before it is
not known. It is the column's database default (now()), which PostgreSQL
stores once for every existing row rather than rewriting the table, and
which rows inserted by SQL (ingest, bulk loads) keep getting; SQLite copies
the table, and the count triggers, which name the papers' table, are taken
off while it does. The papers' index serves "what changed since".
"""

import django.utils.timezone
from django.db import migrations, models
from django.db.models.functions import Now

from catalog import counts


def count_trigger_statements(schema_editor, *, drops_only: bool) -> list[str]:
    statements = counts.sql_statements(counts.TRIGGERS, connection=schema_editor.connection)
    if drops_only:
        return [s for s in statements if s.lstrip().upper().startswith("DROP TRIGGER")]
    return statements


def drop_sqlite_count_triggers(apps, schema_editor):
    # SQLite renames the copied table into place, which fails while a trigger
    # on another table names the old one.
    if schema_editor.connection.vendor == "sqlite":
        for statement in count_trigger_statements(schema_editor, drops_only=True):
            schema_editor.execute(statement)


def create_sqlite_count_triggers(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        for statement in count_trigger_statements(schema_editor, drops_only=False):
            schema_editor.execute(statement)


def changed_at():
    return models.DateTimeField(
        "last changed", default=django.utils.timezone.now, db_default=Now(), editable=False
    )


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0015_paper_provenance"),
    ]

    operations = [
        migrations.AddField(model_name="category", name="changed_at", field=changed_at()),
        migrations.RunPython(drop_sqlite_count_triggers, create_sqlite_count_triggers),
        migrations.AddField(model_name="paper", name="changed_at", field=changed_at()),
        migrations.RunPython(create_sqlite_count_triggers, drop_sqlite_count_triggers),
        migrations.AddField(model_name="tag", name="changed_at", field=changed_at()),
        migrations.AddIndex(
            model_name="paper",
            index=models.Index(fields=["changed_at"], name="paper_changed_at"),
        ),
    ]
