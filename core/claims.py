"""One delivery at a time for a long job: a nightly refresh, the digests.

A job's claim names the Celery task id running it and lapses at the task's
hard time limit. A message is delivered again only once the worker holding
it is gone (config/worker.py), so a delivery that finds the claim held under
its own task id is that task again, its first run dead: it takes over. One
under another id (beat's next send, a run started by hand) finds the job
running and leaves it to that run; the work is the same.
"""

import datetime
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from celery import Task
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from core.models import JobClaim


def take(*, name: str, holder: str, seconds: int) -> bool:
    """Claim the job for holder for at most seconds; False if another holds it."""
    now = timezone.now()
    until = now + datetime.timedelta(seconds=seconds)
    free = Q(holder="") | Q(holder=holder) | Q(expires_at__lte=now)
    if JobClaim.objects.filter(free, name=name).update(holder=holder, expires_at=until):
        return True
    try:
        with transaction.atomic():
            JobClaim.objects.create(name=name, holder=holder, expires_at=until)
    except IntegrityError:  # taken by another meanwhile
        return False
    return True


def release(*, name: str, holder: str) -> None:
    JobClaim.objects.filter(name=name, holder=holder).update(holder="", expires_at=None)


@contextmanager
def claimed(task: Task[..., object], *, name: str) -> Iterator[bool]:
    """Whether the running task holds the job `name` (until its time limit),
    released when the block ends."""
    holder = task.request.id or uuid.uuid4().hex  # called directly, not as a task
    if task.time_limit is None:
        raise ValueError(f"{task.name} has no time limit, which its claim would lapse at.")
    held = take(name=name, holder=holder, seconds=task.time_limit)
    try:
        yield held
    finally:
        if held:
            release(name=name, holder=holder)
