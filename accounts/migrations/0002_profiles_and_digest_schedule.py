from django.conf import settings
from django.db import migrations

# The digests' schedule that this migration once wrote is declared in config/schedule.py.

def forward(apps, schema_editor):
    User = apps.get_model(*settings.AUTH_USER_MODEL.split("."))
    Profile = apps.get_model("accounts", "Profile")
    Profile.objects.bulk_create(
        [Profile(user_id=pk) for pk in User.objects.filter(profile__isnull=True).values_list("pk", flat=True)]
    )


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0001_initial"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(forward, migrations.RunPython.noop)]
