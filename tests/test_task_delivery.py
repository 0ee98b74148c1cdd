"""How tasks reach workers and come back when one dies: messages acknowledged
late, touched by the worker holding them (config/worker.py) and handed out
again a visibility timeout after it is gone; long jobs claimed so two
deliveries never run at once (core.claims). tests/faults/test_worker_killed.py
kills real workers."""

import time
from types import SimpleNamespace

import pytest
import redis
from celery.worker import state
from django.conf import settings
from django.utils import timezone

from accounts.tasks import refresh_recommendations, send_due_digests
from config.celery import app
from config.worker import HEARTBEAT_SECONDS, HeldMessagesHeartbeat, touch_held_messages
from core import claims
from core.models import JobClaim
from discovery.tasks import refit_discovery, refresh_discovery
from tests.services import celery_client, redis_db_url

BROKER = redis_db_url(13)
# Every restore sweep a worker makes (kombu's unacked_restore_interval).
SWEEP_SECONDS = settings.CELERY_BROKER_TRANSPORT_OPTIONS["unacked_restore_interval"]


def project_tasks() -> dict:
    app.loader.import_default_modules()  # what a worker does on start
    # Celery's own tasks, and the suite's (tests.failures, once a test imports it), aside.
    return {
        name: task for name, task in app.tasks.items() if not name.startswith(("celery.", "tests."))
    }


def test_a_dead_workers_tasks_are_handed_out_again_within_five_minutes():
    options = settings.CELERY_BROKER_TRANSPORT_OPTIONS
    assert settings.CELERY_TASK_ACKS_LATE and settings.CELERY_TASK_REJECT_ON_WORKER_LOST
    assert options["visibility_timeout"] == settings.BROKER_VISIBILITY_TIMEOUT
    # Each sweep scans (kombu skips nine in ten by default).
    assert options["unacked_restore_throttle"] == 1
    assert settings.BROKER_VISIBILITY_TIMEOUT + SWEEP_SECONDS <= 5 * 60
    assert options["unacked_mutex_expire"] <= 60


def test_a_living_worker_beats_often_enough_to_keep_what_it_holds():
    # Five beats may go missing (a stalled process, a broker blip) before a
    # living worker's message is handed out.
    assert HEARTBEAT_SECONDS * 6 <= settings.BROKER_VISIBILITY_TIMEOUT
    assert HeldMessagesHeartbeat in app.steps["worker"]


@pytest.mark.parametrize("name", sorted(project_tasks()))
def test_every_task_has_a_time_limit(name):
    """A message stays with its worker as long as the task runs, however long
    that is: only the time limit ends a task that hangs, and frees its message."""
    task = project_tasks()[name]
    assert task.time_limit, f"{name} has no hard time limit"
    assert task.soft_time_limit and task.soft_time_limit < task.time_limit, name


@pytest.fixture
def broker():
    client = redis.Redis.from_url(BROKER)
    client.flushdb()
    producer = celery_client(BROKER)
    with producer.connection_for_write() as connection:
        yield client, connection
    client.flushdb()


def held(tag: str) -> SimpleNamespace:
    return SimpleNamespace(message=SimpleNamespace(delivery_tag=tag))


def test_the_heartbeat_moves_on_the_messages_the_worker_holds(broker, monkeypatch):
    client, connection = broker
    long_ago = time.time() - 3600
    client.zadd("unacked_index", {"running": long_ago, "elsewhere": long_ago})
    monkeypatch.setattr(state, "requests", {"a": held("running"), "b": held("acknowledged")})

    assert touch_held_messages(connection) == 2

    scores = dict(client.zrange("unacked_index", 0, -1, withscores=True))
    assert scores[b"running"] > time.time() - 5
    assert scores[b"elsewhere"] == long_ago  # another worker's
    assert b"acknowledged" not in scores  # done meanwhile: never brought back


@pytest.mark.django_db
def test_a_job_is_held_by_one_delivery_at_a_time():
    assert claims.take(name="job", holder="first", seconds=60)
    assert not claims.take(name="job", holder="second", seconds=60)
    # The same message delivered again: its first run is dead, it takes over.
    assert claims.take(name="job", holder="first", seconds=60)

    claims.release(name="job", holder="first")
    assert claims.take(name="job", holder="second", seconds=60)


@pytest.mark.django_db
def test_a_claim_lapses_at_the_holders_time_limit():
    assert claims.take(name="job", holder="killed by its time limit", seconds=60)
    JobClaim.objects.filter(name="job").update(expires_at=timezone.now())

    assert claims.take(name="job", holder="the next night", seconds=60)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("task", "claim"),
    [
        (refresh_discovery, "refresh_discovery"),
        # The refit a batch of new papers asks for waits on the same claim.
        (refit_discovery, "refresh_discovery"),
        (refresh_recommendations, "refresh_recommendations"),
        (send_due_digests, "send_due_digests"),
    ],
)
def test_a_long_job_delivered_while_it_runs_elsewhere_leaves_it_to_that_run(task, claim, caplog):
    assert claims.take(name=claim, holder="the run under way", seconds=3600)

    task.apply()

    assert "leaving it to that one" in caplog.text or "leaving them to that one" in caplog.text
    assert JobClaim.objects.get(name=claim).holder == "the run under way"
