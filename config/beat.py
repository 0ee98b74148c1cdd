"""Celery beat's scheduler: each send written down before it goes, and a
heartbeat a health check can read."""

import logging
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.exceptions import ObjectDoesNotExist
from django.db import DatabaseError, InterfaceError
from django_celery_beat.schedulers import DatabaseScheduler, ModelEntry

logger = logging.getLogger(__name__)


class HeartbeatScheduler(DatabaseScheduler):
    """django-celery-beat's database scheduler, with two changes.

    A job's last run is saved before the job is sent, not with the others
    every three minutes (django-celery-beat's default): a beat killed or
    restarted at any moment reads when each job was last sent, and never
    sends one again within its interval. (Killed between the save and the
    send, it skips that one run rather than doubling it.)

    BEAT_HEARTBEAT_FILE is touched on every tick (at least every few
    seconds), so a beat that hangs is told from one that runs:
    `python -m config.healthcheck beat`.
    """

    def reserve(self, entry: ModelEntry) -> ModelEntry:
        new_entry = super().reserve(entry)
        try:
            new_entry.save()
        except (DatabaseError, InterfaceError, ObjectDoesNotExist) as error:
            # Left for the next sync to write (or to drop, for a job deleted
            # meanwhile); while the database is away the jobs could not run anyway.
            logger.warning("Could not save the last run of %s: %s", new_entry.name, error)
        else:
            self._dirty.discard(new_entry.name)
        return new_entry

    def tick(self, *args: Any, **kwargs: Any) -> float:
        seconds_to_next_tick: float = super().tick(*args, **kwargs)
        Path(settings.BEAT_HEARTBEAT_FILE).touch()
        return seconds_to_next_tick
