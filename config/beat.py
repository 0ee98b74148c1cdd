"""Celery beat's scheduler, with a heartbeat a health check can read."""

from pathlib import Path

from django.conf import settings
from django_celery_beat.schedulers import DatabaseScheduler


class HeartbeatScheduler(DatabaseScheduler):
    """django-celery-beat's database scheduler, touching BEAT_HEARTBEAT_FILE on
    every tick (at least every few seconds), so a beat that hangs is told from
    one that runs: `python -m config.healthcheck beat`."""

    def tick(self, *args, **kwargs) -> float:
        seconds_to_next_tick = super().tick(*args, **kwargs)
        Path(settings.BEAT_HEARTBEAT_FILE).touch()
        return seconds_to_next_tick
