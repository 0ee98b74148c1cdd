"""One django-celery-beat PeriodicTask per enabled IngestSource, kept in step with it,
so beat's DatabaseScheduler runs each source on the interval set in admin."""

import json

from django_celery_beat.models import IntervalSchedule, PeriodicTask

from ingest.models import IngestSource

TASK = "ingest.tasks.ingest_source"


def sync_schedule(*, source: IngestSource) -> None:
    if not source.enabled:
        remove_schedule(source=source)
        return
    interval = IntervalSchedule.objects.filter(
        every=source.interval_minutes, period=IntervalSchedule.MINUTES
    ).first() or IntervalSchedule.objects.create(
        every=source.interval_minutes, period=IntervalSchedule.MINUTES
    )
    task = PeriodicTask.objects.filter(pk=source.periodic_task_id).first() or PeriodicTask()
    task.name = f"Ingest arXiv: {source.name}"
    task.task = TASK
    task.interval = interval
    task.kwargs = json.dumps({"source_id": source.pk})
    task.enabled = True
    task.save()
    if source.periodic_task_id != task.pk:
        # An update, not save(), so the post_save signal does not come round again.
        IngestSource.objects.filter(pk=source.pk).update(periodic_task=task)
        source.periodic_task = task


def remove_schedule(*, source: IngestSource) -> None:
    if source.periodic_task_id:
        PeriodicTask.objects.filter(pk=source.periodic_task_id).delete()
        source.periodic_task = None
