"""The count triggers set again from catalog/sql, where they now live.

0010 wrote them from Python strings, repeating the visible-paper rule; the
files take it from catalog.models.VISIBLE. This sets the triggers as the files
have them (dropping 0010's, which match them) and counts every target again:
what counts.recount() does.
"""

from django.db import migrations

from catalog import counts


def set_triggers_from_files(apps, schema_editor):
    counts.recount(using=schema_editor.connection.alias)


class Migration(migrations.Migration):
    dependencies = [("catalog", "0013_paper_vacuum_settings")]

    # 0010's reverse drops the triggers by the same names.
    operations = [migrations.RunPython(set_triggers_from_files, migrations.RunPython.noop)]
