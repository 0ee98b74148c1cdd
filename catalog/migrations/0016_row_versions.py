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
        migrations.RunPython(counts.drop_sqlite_triggers, counts.create_sqlite_triggers),
        migrations.AddField(model_name="paper", name="changed_at", field=changed_at()),
        migrations.RunPython(counts.create_sqlite_triggers, counts.drop_sqlite_triggers),
        migrations.AddField(model_name="tag", name="changed_at", field=changed_at()),
        migrations.AddIndex(
            model_name="paper",
            index=models.Index(fields=["changed_at"], name="paper_changed_at"),
        ),
    ]
