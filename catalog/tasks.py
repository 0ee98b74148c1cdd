"""Background work of the catalog itself."""

from celery import shared_task

from catalog import counts


@shared_task(soft_time_limit=600, time_limit=660)
def fold_paper_counts() -> None:
    counts.fold()
