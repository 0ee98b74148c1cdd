"""Beat's schedule (settings.CELERY_BEAT_SCHEDULE, declared in config/schedule.py)
written into django-celery-beat's tables, as beat itself writes it on start."""

from celery import current_app
from django.conf import settings
from django_celery_beat.schedulers import ModelEntry


def sync_beat_schedule(**kwargs: object) -> None:
    """Create or update each declared job's row by its name (a post_migrate
    receiver): its task, schedule and arguments are the declaration's, while
    whether it is enabled stays as an operator set it in admin."""
    for name, entry in settings.CELERY_BEAT_SCHEDULE.items():
        ModelEntry.from_entry(name, app=current_app, **entry)
