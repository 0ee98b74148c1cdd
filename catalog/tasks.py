"""Background work of the catalog itself."""

from celery import shared_task

from catalog import counts, sync, trending


@shared_task(soft_time_limit=600, time_limit=660)
def fold_paper_counts() -> None:
    counts.fold()


@shared_task(soft_time_limit=600, time_limit=660)
def prune_paper_changes() -> None:
    sync.seal()
    sync.prune()


@shared_task(soft_time_limit=240, time_limit=270)
def refresh_trending() -> None:
    # Scheduled every five minutes (config/schedule.py); a run later than that
    # would only overlap the next.
    trending.refresh_trending()
