"""An index for each window lists sort by upvotes over (sort=votes), on visible papers.
Indexes copy no table, but SQLite's count triggers are taken off and put back as in 0019."""

from django.db import migrations, models

from catalog import counts

VISIBLE = models.Q(("is_visible", True), ("merged_into__isnull", True))


def votes_index(column: str) -> models.Index:
    return models.Index(
        models.OrderBy(models.F(column), descending=True),
        models.OrderBy(models.F("listed_at"), descending=True),
        models.OrderBy(models.F("id"), descending=True),
        condition=VISIBLE,
        name=f"paper_listed_{column}",
    )


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0019_reader_counts"),
    ]

    operations = [
        migrations.RunPython(counts.drop_sqlite_triggers, counts.create_sqlite_triggers),
        *(
            migrations.AddIndex(model_name="paper", index=votes_index(column))
            for column in ("votes_24h", "votes_7d", "votes_30d")
        ),
        migrations.RunPython(counts.create_sqlite_triggers, counts.drop_sqlite_triggers),
    ]
