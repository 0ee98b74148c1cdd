"""Authors get an address (slug, filled by the next migration), curators' merges
(merged_into) and an index for an author's papers; papers keep their authors'
slugs beside their names. SQLite's count triggers are taken off while the
papers' table is copied, as in 0019."""

import django.db.models.deletion
from django.db import migrations, models

from catalog import counts


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0020_votes_sort"),
    ]

    operations = [
        migrations.AddField(
            model_name="author",
            name="merged_into",
            field=models.ForeignKey(
                blank=True,
                help_text=(
                    "Set when curators merged this author into another;"
                    " papers under this name go there."
                ),
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="aliases",
                to="catalog.author",
            ),
        ),
        migrations.AddField(
            model_name="author",
            name="slug",
            field=models.SlugField(allow_unicode=True, max_length=320, null=True),
        ),
        migrations.RunPython(counts.drop_sqlite_triggers, counts.create_sqlite_triggers),
        migrations.AddField(
            model_name="paper",
            name="author_slugs",
            field=models.JSONField(blank=True, db_default=[], default=list, editable=False),
        ),
        migrations.RunPython(counts.create_sqlite_triggers, counts.drop_sqlite_triggers),
        migrations.AddIndex(
            model_name="paperauthor",
            index=models.Index(fields=["author", "paper"], name="paper_author_by_author"),
        ),
    ]
