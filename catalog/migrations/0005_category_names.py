from django.db import migrations

from catalog.taxonomy import CATEGORY_NAMES


def name_categories(apps, schema_editor):
    Category = apps.get_model("catalog", "Category")
    unnamed = Category.objects.filter(name="", code__in=list(CATEGORY_NAMES))
    for category in unnamed:
        category.name = CATEGORY_NAMES[category.code]
    Category.objects.bulk_update(unnamed, ["name"], batch_size=500)


class Migration(migrations.Migration):
    dependencies = [("catalog", "0004_list_indexes")]

    operations = [migrations.RunPython(name_categories, migrations.RunPython.noop)]
