from django.db import migrations


class Migration(migrations.Migration):
    """Paper vectors moved to discovery, their table with them."""

    dependencies = [
        ('discovery', '0001_initial'),
        ('enrichment', '0002_discovery_schedule'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(
                    name='PaperVector',
                ),
            ],
        ),
    ]
