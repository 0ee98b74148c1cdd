"""Every author has a slug now (0021): one each, required."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0022_authors_renormalised"),
    ]

    operations = [
        migrations.AlterField(
            model_name="author",
            name="slug",
            field=models.SlugField(allow_unicode=True, max_length=320, unique=True),
        ),
    ]
