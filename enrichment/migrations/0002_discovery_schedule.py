from django.db import migrations

TASK = "enrichment.tasks.refresh_discovery"
NAME = "Discovery: vectors (refitting the model when due) and every paper's neighbours"


def forward(apps, schema_editor):
    CrontabSchedule = apps.get_model("django_celery_beat", "CrontabSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    # Nightly, between arXiv's announcements and the readers' recommendations.
    crontab, _ = CrontabSchedule.objects.get_or_create(
        minute="30",
        hour="1",
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
        ("enrichment", "0001_initial"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(forward, backward)]
