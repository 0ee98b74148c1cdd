from celery import shared_task

from accounts import services


@shared_task
def send_due_digests() -> int:
    return len(services.send_due_digests().sent)
