from celery import shared_task

from accounts import services


@shared_task(soft_time_limit=1800, time_limit=1860)
def send_due_digests() -> int:
    return len(services.send_due_digests().sent)
