"""Queueing background work once the caller's transaction commits.

With a broker, the task is queued for the workers. Without one (development
without Redis, where Celery runs tasks eagerly), it runs in a thread beside
the request rather than inside it, so a page that starts a long job (an
ingest run, summaries) answers at once and the job's progress shows up as
it goes. EAGER_TASKS_IN_THREADS=off runs them inline instead (the test suite).
"""

import logging
import threading
from typing import Any, ParamSpec

from celery import Task
from django.conf import settings
from django.db import connections, transaction

logger = logging.getLogger(__name__)

# The threads started, so that a test (or a shutdown) can wait for them.
started_threads: list[threading.Thread] = []

P = ParamSpec("P")


def send(task: Task[P, Any], *args: P.args, **kwargs: P.kwargs) -> None:
    transaction.on_commit(lambda: _send_now(task, args, kwargs), robust=True)


def _send_now(task: Task[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    if not (settings.CELERY_TASK_ALWAYS_EAGER and settings.EAGER_TASKS_IN_THREADS):
        task.delay(*args, **kwargs)
        return
    thread = threading.Thread(
        target=_run, args=(task, args, kwargs), name=f"background {task.name}", daemon=True
    )
    started_threads.append(thread)
    thread.start()


def _run(task: Task[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    try:
        task.apply(args=args, kwargs=kwargs, throw=True)
    except Exception:
        logger.exception("Background task %s failed", task.name)
    finally:
        connections.close_all()
