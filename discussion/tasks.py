import logging

from celery import Task, shared_task

from core.claims import claimed
from discussion import mail

logger = logging.getLogger(__name__)


@shared_task(bind=True, soft_time_limit=1800, time_limit=1860)
def send_discussion_mail(self: Task[[], int]) -> int:
    """Every half hour, one delivery at a time (core.claims): each follower's
    new replies in one mail."""
    with claimed(self, name="send_discussion_mail") as held:
        if not held:
            logger.info("Discussion mail is being sent by another delivery.")
            return 0
        return mail.send_due_mail()
