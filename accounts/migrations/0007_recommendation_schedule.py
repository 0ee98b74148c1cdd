from django.db import migrations

TASK = "accounts.tasks.refresh_recommendations"
NAME = "For you: every reader's recommendations"


def forward(apps, schema_editor):
    CrontabSchedule = apps.get_model("django_celery_beat", "CrontabSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    # Nightly, after the neighbours and vectors are rebuilt (01:30).
    crontab, _ = CrontabSchedule.objects.get_or_create(
        minute="30",
        hour="4",
        day_of_week="*",
        day_of_month="*",
        month_of_year="*",
        timezone="UTC",
    )
    PeriodicTask.objects.update_or_create(name=NAME, defaults={"task": TASK, "crontab": crontab})


def backward(apps, schema_editor):
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    PeriodicTask.objects.filter(task=TASK).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0006_recommendations"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(forward, backward)]
