from django.conf import settings
from django.db import migrations

TASK_NAME = "Send due email digests"


def forward(apps, schema_editor):
    User = apps.get_model(*settings.AUTH_USER_MODEL.split("."))
    Profile = apps.get_model("accounts", "Profile")
    Profile.objects.bulk_create(
        [Profile(user_id=pk) for pk in User.objects.filter(profile__isnull=True).values_list("pk", flat=True)]
    )
    CrontabSchedule = apps.get_model("django_celery_beat", "CrontabSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    # Hourly: each run sends only the digests whose send time has passed.
    hourly, _ = CrontabSchedule.objects.get_or_create(
        minute="0", hour="*", day_of_week="*", day_of_month="*", month_of_year="*", timezone="UTC"
    )
    PeriodicTask.objects.update_or_create(
        name=TASK_NAME, defaults={"task": "accounts.tasks.send_due_digests", "crontab": hourly}
    )


def backward(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(name=TASK_NAME).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0001_initial"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(forward, backward)]
