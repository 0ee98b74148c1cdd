"""Keep each source's beat schedule in step however the source is saved or deleted."""

from typing import Any

from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from ingest.models import IngestSource
from ingest.schedules import remove_schedule, sync_schedule


@receiver(post_save, sender=IngestSource, dispatch_uid="ingest_source_schedule_sync")
def source_saved(
    sender: type[IngestSource], instance: IngestSource, raw: bool = False, **kwargs: Any
) -> None:
    if not raw:  # fixtures bring their own schedules
        sync_schedule(source=instance)


@receiver(post_delete, sender=IngestSource, dispatch_uid="ingest_source_schedule_remove")
def source_deleted(sender: type[IngestSource], instance: IngestSource, **kwargs: Any) -> None:
    remove_schedule(source=instance)
