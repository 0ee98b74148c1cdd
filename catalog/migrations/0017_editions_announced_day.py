"""The day a paper belongs to in the daily editions (announced_or_added_at),
indexed for visible papers, and the curation log's published editions.

A stored generated column rewrites the papers' table (PostgreSQL) or copies it
(SQLite); SQLite's count triggers, which name the papers' table, are taken off
while it does, as in 0016.
"""

import django.db.models.functions.comparison
from django.db import migrations, models

from catalog import counts


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0016_row_versions"),
    ]

    operations = [
        migrations.RunPython(counts.drop_sqlite_triggers, counts.create_sqlite_triggers),
        migrations.AddField(
            model_name="paper",
            name="announced_or_added_at",
            field=models.GeneratedField(
                db_persist=True,
                expression=django.db.models.functions.comparison.Coalesce(
                    "announced_at", "added_at"
                ),
                output_field=models.DateTimeField(),
            ),
        ),
        migrations.RunPython(counts.create_sqlite_triggers, counts.drop_sqlite_triggers),
        migrations.AlterField(
            model_name="curationevent",
            name="action",
            field=models.CharField(
                choices=[
                    ("added", "added"),
                    ("tagged", "tagged"),
                    ("untagged", "untagged"),
                    ("hidden", "hidden"),
                    ("shown", "shown"),
                    ("published", "published"),
                    ("rejected", "rejected"),
                    ("merged", "merged"),
                    ("summaries_published", "summaries published"),
                    ("suggestion_approved", "suggestion approved"),
                    ("suggestion_declined", "suggestion declined"),
                    ("edition_published", "daily edition published"),
                ],
                max_length=32,
            ),
        ),
        migrations.AddIndex(
            model_name="paper",
            index=models.Index(
                models.OrderBy(models.F("announced_or_added_at"), descending=True),
                models.OrderBy(models.F("id"), descending=True),
                condition=models.Q(("is_visible", True), ("merged_into__isnull", True)),
                name="paper_announced_newest",
            ),
        ),
    ]
