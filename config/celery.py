import os

from celery import Celery
from celery.signals import setup_logging

from config.worker import HeldMessagesHeartbeat

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("papershelf")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
# Workers keep the messages they hold from being handed out again while they live.
app.steps["worker"].add(HeldMessagesHeartbeat)


@setup_logging.connect
def configure_logging(**kwargs: object) -> None:
    """Workers and beat log through settings.LOGGING, as the web does, rather
    than Celery's own handlers: the same format, task ids included."""
    from django.conf import settings

    from config.logging import configure

    configure(settings.LOGGING)
