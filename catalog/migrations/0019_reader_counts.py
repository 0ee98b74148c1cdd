"""What readers gave each paper, on its row: upvotes, votes over each window and
comments. SQLite's count triggers are taken off while the table is copied, as in 0016."""

from django.db import migrations, models

from catalog import counts


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0018_community_kinds"),
    ]

    operations = [
        migrations.RunPython(counts.drop_sqlite_triggers, counts.create_sqlite_triggers),
        migrations.AddField(
            model_name="paper",
            name="comment_count",
            field=models.IntegerField(db_default=0, default=0, editable=False),
        ),
        migrations.AddField(
            model_name="paper",
            name="upvote_count",
            field=models.IntegerField(db_default=0, default=0, editable=False),
        ),
        migrations.AddField(
            model_name="paper",
            name="votes_24h",
            field=models.IntegerField(db_default=0, default=0, editable=False),
        ),
        migrations.AddField(
            model_name="paper",
            name="votes_30d",
            field=models.IntegerField(db_default=0, default=0, editable=False),
        ),
        migrations.AddField(
            model_name="paper",
            name="votes_7d",
            field=models.IntegerField(db_default=0, default=0, editable=False),
        ),
        migrations.RunPython(counts.create_sqlite_triggers, counts.drop_sqlite_triggers),
    ]
