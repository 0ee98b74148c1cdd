from django.db import migrations


class Migration(migrations.Migration):
    """Once wrote a periodic job into beat's tables; every job is now declared in
    config/schedule.py and written there by migrate."""

    dependencies = [
        ("enrichment", "0001_initial"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = []
