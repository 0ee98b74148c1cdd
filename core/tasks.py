"""Background work that is no app's own."""

from celery import shared_task
from django.core.management import call_command


@shared_task(ignore_result=True, soft_time_limit=600, time_limit=660)
def clear_expired_sessions() -> None:
    """Daily (config/schedule.py): Django's own `clearsessions`, which deletes
    the rows of sessions past their expiry."""
    call_command("clearsessions")
