"""A real Celery worker on the Redis broker runs the ingest task against the fake arXiv."""

import datetime
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis
from celery import Celery
from django.db import connection
from django.utils import timezone

from catalog.models import Paper
from ingest import runs
from ingest.models import IngestRun, IngestSource
from ingest.tasks import ingest_source, reapply_tag_rules
from tests.arxiv_server import Fault, entry_id
from tests.ingest_factories import IngestSourceFactory
from tests.services import celery_client, redis_db_url
from tests.waiting import wait_for

BROKER_URL = redis_db_url(5)
PROJECT = Path(__file__).resolve().parent.parent
# The worker's runs beat every third of a second.
STALE_SECONDS = 2

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def broker() -> Iterator[Celery]:
    redis.Redis.from_url(BROKER_URL).flushdb()
    producer = celery_client(BROKER_URL)
    yield producer
    producer.close()
    redis.Redis.from_url(BROKER_URL).flushdb()


@pytest.fixture
def start_worker(fake_arxiv) -> Iterator[Callable[[], subprocess.Popen]]:
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db["PASSWORD"] else ""
    env = os.environ | {
        # The worker sees the database this test writes to, not the default one.
        "DATABASE_URL": f"postgres://{db['USER']}{password}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "REDIS_URL": BROKER_URL,
        "ARXIV_API_URL": fake_arxiv.url,
        "ARXIV_DELAY_SECONDS": "0",
        "ARXIV_PAGE_SIZE": "10",
        "ARXIV_REQUEST_TIMEOUT": "60",
        "INGEST_RUN_STALE_SECONDS": str(STALE_SECONDS),
        "DEBUG": "1",
        "SECRET_KEY": "worker-test-key",
    }
    env.pop("CELERY_TASK_ALWAYS_EAGER", None)
    workers: list[subprocess.Popen] = []

    def start() -> subprocess.Popen:
        command = [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool=solo"]
        command += ["--without-gossip", "--without-mingle", "--loglevel=info"]
        worker = subprocess.Popen(
            command, cwd=PROJECT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        workers.append(worker)
        return worker

    yield start
    for worker in workers:
        if worker.poll() is None:
            worker.terminate()
            try:
                worker.wait(timeout=15)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait()


def test_tasks_are_acknowledged_late():
    assert ingest_source.acks_late
    assert reapply_tag_rules.acks_late


def test_a_worker_killed_mid_run_is_marked_interrupted_and_its_source_runs_again(
    fake_arxiv, broker, start_worker, settings
):
    settings.INGEST_RUN_STALE_SECONDS = STALE_SECONDS
    source = IngestSourceFactory(max_results=40)
    # Two pages arrive, then the third hangs until the worker is killed.
    fake_arxiv.queue(Fault(), Fault(), Fault(delay=30))
    worker = start_worker()

    broker.send_task("ingest.tasks.ingest_source", kwargs={"source_id": source.pk})

    def two_pages_stored_and_third_requested() -> bool:
        return Paper.objects.count() == 20 and len(fake_arxiv.requests) == 3

    wait_for(two_pages_stored_and_third_requested, timeout=60, every=0.1)
    waiting_since = timezone.now()

    def run_and_claim_beat_while_arxiv_keeps_them_waiting() -> bool:
        run, claim = IngestRun.objects.get(), IngestSource.objects.get()
        return run.heartbeat_at > waiting_since and claim.claimed_at > waiting_since

    wait_for(run_and_claim_beat_while_arxiv_keeps_them_waiting, timeout=60, every=0.1)
    worker.send_signal(signal.SIGKILL)
    worker.wait(timeout=10)

    killed = IngestRun.objects.get()
    assert (killed.status, killed.fetched, killed.created) == (IngestRun.Status.RUNNING, 20, 20)
    assert sorted(Paper.objects.values_list("arxiv_id", flat=True)) == sorted(
        entry_id(e) for e in fake_arxiv.entries[:20]
    )
    assert IngestSource.objects.get().claimed_at is not None

    # The sweep leaves a heartbeat younger than INGEST_RUN_STALE_SECONDS, and marks
    # the run once it is older (the clock moved on rather than waited for).
    last_beat = max(killed.heartbeat_at, IngestSource.objects.get().claimed_at)
    assert runs.interrupt_stale_runs(now=last_beat) == 0
    stale = last_beat + datetime.timedelta(seconds=STALE_SECONDS + 1)
    assert runs.interrupt_stale_runs(now=stale) == 1

    killed.refresh_from_db()
    assert (killed.status, killed.fetched, killed.created) == (
        IngestRun.Status.INTERRUPTED,
        20,
        20,
    )
    assert "Interrupted" in killed.error
    source.refresh_from_db()
    assert (source.claimed_at, source.claim_token) == (None, "")

    # The source's next turn runs and finishes.
    start_worker()
    broker.send_task("ingest.tasks.ingest_source", kwargs={"source_id": source.pk})

    def second_run_finished() -> bool:
        return IngestRun.objects.exclude(pk=killed.pk).exclude(status="running").exists()

    wait_for(second_run_finished, timeout=60, every=0.1)
    completed = IngestRun.objects.exclude(pk=killed.pk).get()
    assert (completed.status, completed.created, completed.unchanged) == (
        IngestRun.Status.SUCCEEDED,
        20,
        20,
    )
    stored = list(Paper.objects.values_list("arxiv_id", flat=True))
    assert sorted(stored) == sorted(entry_id(e) for e in fake_arxiv.entries[:40])
    source.refresh_from_db()
    assert source.claimed_at is None
    assert source.last_success_at == completed.started_at
