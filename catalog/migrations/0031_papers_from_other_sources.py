"""Papers from sources other than arXiv: the key their source knows them by
(Paper.source_key, unique) and their page there (Paper.source_url); a date known
only to the year."""

from django.db import migrations, models

from catalog import counts


class Migration(migrations.Migration):

    dependencies = [
        ("catalog", "0030_section_search"),
    ]

    operations = [
        # SQLite rewrites the papers' table to add a column: its triggers go first.
        migrations.RunPython(counts.drop_sqlite_triggers, counts.create_sqlite_triggers),
        migrations.AddField(
            model_name="paper",
            name="source_key",
            field=models.CharField(
                blank=True,
                editable=False,
                max_length=300,
                null=True,
                unique=True,
                verbose_name="source id",
            ),
        ),
        migrations.AddField(
            model_name="paper",
            name="source_url",
            field=models.URLField(
                blank=True,
                db_default="",
                default="",
                max_length=500,
                verbose_name="page at its source",
            ),
        ),
        migrations.AlterField(
            model_name="paper",
            name="published_precision",
            field=models.CharField(
                choices=[("day", "day"), ("month", "month"), ("year", "year")],
                default="day",
                max_length=8,
            ),
        ),
        migrations.RunPython(counts.create_sqlite_triggers, counts.drop_sqlite_triggers),
    ]
