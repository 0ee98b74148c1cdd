"""A Celery worker's whole process group SIGKILLed mid-task (the OOM killer, a
lost host), with real workers as docker-compose runs them and a Redis broker:
every task it held runs again within BROKER_VISIBILITY_TIMEOUT and a sweep,
once, and a task running longer than that timeout is never handed to a second
worker while it runs. Summaries stand for any task: they call a slow model
(a fake on 127.0.0.1) and are idempotent.
"""

import re
import threading
import time
from collections import Counter

import pytest
from django.conf import settings

from catalog.models import Summary
from tests.factories import PaperFactory
from tests.fake_llm_server import ABSTRACT, FakeLLMServer
from tests.faults.processes import CeleryProcess, named_redis, site_env
from tests.services import celery_client

pytestmark = [pytest.mark.slow, pytest.mark.long, pytest.mark.django_db(transaction=True)]
SUMMARIES_A_PAPER = 4  # summary, takeaways, two translations
TITLE = re.compile(r"Title: (.*)")


@pytest.fixture
def broker():
    with named_redis(15) as url:
        yield url


@pytest.fixture
def model():
    server = FakeLLMServer()
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def workers(broker, model, tmp_path):
    """Start enrichment workers as docker-compose runs them (two processes each)."""
    env = {
        **site_env(redis=broker),
        "SUMMARY_BACKEND": "openai",
        "LLM_BASE_URL": model.base_url,
        "LLM_API_KEY": "test-key",
        "LLM_MODEL": "fake-model-7b",
        "LLM_TIMEOUT": "600",
        "LLM_MAX_RETRIES": "0",
        "LLM_ATTEMPTS": "1",
        "SUMMARY_LANGUAGES": "zh-hans,ko",
        "LOG_LEVEL": "INFO",
    }
    started: list[CeleryProcess] = []

    def start(name: str) -> CeleryProcess:
        worker = CeleryProcess(
            env,
            *("-q", "worker", "-Q", "enrichment", "--concurrency", "2", "-n", f"{name}@%h"),
            log=tmp_path / f"{name}.log",
        )
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.stop()


def summarize(broker: str, papers) -> None:
    producer = celery_client(broker)
    for paper in papers:
        producer.send_task("enrichment.tasks.summarize_paper", args=[paper.pk], queue="enrichment")
    producer.close()


def asked_for(model: FakeLLMServer) -> list[tuple[str, float]]:
    """(title, when) of every call the model got, in order."""
    with model.lock:
        return [
            (TITLE.search(body["messages"][-1]["content"])[1], started)
            for body, started in zip(model.requests, model.started, strict=True)
        ]


def wait_until(condition, *, timeout: float, what: str) -> float:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.5)
    return time.monotonic()


def summarised(papers) -> bool:
    return Summary.objects.filter(paper__in=papers).count() == SUMMARIES_A_PAPER * len(papers)


def test_every_task_a_killed_worker_held_runs_again_once_within_five_minutes(
    broker, model, workers
):
    papers = [PaperFactory(abstract=ABSTRACT) for _ in range(6)]
    model.delay = 5
    first = workers("first")
    summarize(broker, papers)

    wait_until(lambda: len(asked_for(model)) >= 2, timeout=120, what="two tasks under way")
    in_flight = {title for title, _ in asked_for(model)}
    first.kill()
    killed_at = time.monotonic()
    workers("second")
    wait_until(lambda: summarised(papers), timeout=420, what="every paper summarised")

    calls = asked_for(model)
    asked = Counter(title for title, _ in calls)
    again = {
        title: when - killed_at for title, when in calls if title in in_flight and when > killed_at
    }
    print(
        f"worker SIGKILLed with {len(in_flight)} tasks under way; they ran again "
        f"{', '.join(f'{seconds:.0f} s' for seconds in sorted(again.values()))} after the "
        f"kill (visibility timeout {settings.BROKER_VISIBILITY_TIMEOUT} s); "
        f"calls to the model per paper {sorted(asked.values())}"
    )
    assert len(in_flight) == 2
    assert set(again) == in_flight
    assert max(again.values()) <= 5 * 60
    # Each in-flight paper asked twice (killed mid-call, then again), the others once.
    assert asked == {paper.title: 2 if paper.title in in_flight else 1 for paper in papers}
    for paper in papers:
        assert paper.summaries.count() == SUMMARIES_A_PAPER


def test_a_task_running_longer_than_the_visibility_timeout_is_never_handed_out_twice(
    broker, model, workers
):
    paper = PaperFactory(abstract=ABSTRACT)
    model.delay = settings.BROKER_VISIBILITY_TIMEOUT + 45
    for name in ("first", "second"):  # an idle worker ready to take it
        workers(name)
    summarize(broker, [paper])

    started = wait_until(lambda: asked_for(model), timeout=120, what="the task under way")
    done = wait_until(
        lambda: summarised([paper]), timeout=model.delay + 120, what="the paper summarised"
    )
    time.sleep(20)  # two restore sweeps more

    print(
        f"one task ran {done - started:.0f} s (visibility timeout "
        f"{settings.BROKER_VISIBILITY_TIMEOUT} s); the model was asked "
        f"{len(asked_for(model))} time(s)"
    )
    assert len(asked_for(model)) == 1
    assert done - started > settings.BROKER_VISIBILITY_TIMEOUT
