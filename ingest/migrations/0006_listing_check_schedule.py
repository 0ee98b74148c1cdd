from django.db import migrations

TASK = "ingest.tasks.check_announcements"
# arXiv announces Sunday to Thursday at 20:00 in New York and rebuilds its
# listing feeds around midnight there: check every five minutes from the
# announcement until 04:00, in New York time, so daylight saving moves the
# checks with the announcements. Holidays are skipped by the task itself.
CHECKS = (
    ("Read arXiv listings: announcement evenings", "20-23", "0-4"),
    ("Read arXiv listings: the hours after midnight", "0-3", "1-5"),
)


def forward(apps, schema_editor):
    CrontabSchedule = apps.get_model("django_celery_beat", "CrontabSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    for name, hours, weekdays in CHECKS:
        crontab, _ = CrontabSchedule.objects.get_or_create(
            minute="*/5",
            hour=hours,
            day_of_week=weekdays,
            day_of_month="*",
            month_of_year="*",
            timezone="America/New_York",
        )
        PeriodicTask.objects.update_or_create(name=name, defaults={"task": TASK, "crontab": crontab})


def backward(apps, schema_editor):
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    PeriodicTask.objects.filter(task=TASK).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("ingest", "0005_listing_feeds"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(forward, backward)]
