from celery import shared_task

from accounts import services


@shared_task(soft_time_limit=1800, time_limit=1860)
def send_due_digests() -> int:
    return len(services.send_due_digests().sent)


@shared_task(soft_time_limit=4 * 3600, time_limit=4 * 3600 + 60)
def refresh_recommendations(user_ids: list[int] | None = None) -> dict:
    """Nightly for every reader; for one reader when their For-you tab is first opened."""
    run = services.refresh_recommendations(user_ids=user_ids)
    return {"readers": run.readers, "rows": run.rows, "seconds": round(run.seconds, 1)}
