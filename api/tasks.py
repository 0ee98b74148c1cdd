"""Background work of the API."""

from celery import shared_task

from api import dump


@shared_task(soft_time_limit=3 * 3600, time_limit=3 * 3600 + 60)
def dump_catalog() -> None:
    dump.write_dump()
