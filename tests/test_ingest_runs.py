import datetime
import re
import threading

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

from catalog.models import Paper, PaperTag
from config.celery import app as celery_app
from ingest import runs, tasks
from ingest.models import IngestRun, IngestSource
from tests.arxiv_server import (
    Fault,
    entry_id,
    updated_of,
)
from tests.factories import TagFactory
from tests.ingest_factories import IngestSourceFactory
from tests.waiting import wait_for

pytestmark = pytest.mark.django_db


def as_datetime(timestamp: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(timestamp.replace("Z", "+00:00"))


def stored_ids() -> list[str]:
    return sorted(Paper.objects.values_list("arxiv_id", flat=True))


def served_ids(fake, count: int) -> list[str]:
    return sorted(entry_id(e) for e in fake.entries[:count])


def test_a_source_run_stores_its_papers_with_its_tags(fake_arxiv):
    tag = TagFactory(name="Software_Testing")
    source = IngestSourceFactory(tags=[tag], query="cat:cs.SE AND all:testing")

    run = runs.run_source(source=source)

    assert stored_ids() == served_ids(fake_arxiv, 25)
    assert PaperTag.objects.filter(tag=tag).count() == 25
    run.refresh_from_db()
    assert (run.status, run.fetched, run.created, run.updated, run.skipped) == (
        IngestRun.Status.SUCCEEDED,
        25,
        25,
        0,
        0,
    )
    assert run.source == source
    assert run.query == "cat:cs.SE AND all:testing"
    assert run.finished_at >= run.started_at
    assert fake_arxiv.requests[0].params["search_query"] == "cat:cs.SE AND all:testing"
    source.refresh_from_db()
    assert source.last_success_at == run.started_at
    assert source.claimed_at is None


def test_running_again_changes_nothing(fake_arxiv):
    source = IngestSourceFactory()
    runs.run_source(source=source)
    IngestSource.objects.update(last_success_at=None)

    again = runs.run_source(source=source)

    assert (again.created, again.updated, again.unchanged) == (0, 0, 25)
    assert Paper.objects.count() == 25


def test_the_next_run_pages_back_to_the_last_success_less_the_lookback(fake_arxiv, settings):
    newest, oldest_wanted = (as_datetime(updated_of(fake_arxiv.entries[i])) for i in (10, 14))
    settings.ARXIV_UPDATED_LOOKBACK_HOURS = (newest - oldest_wanted).total_seconds() / 3600
    source = IngestSourceFactory(max_results=100, last_success_at=newest)

    run = runs.run_source(source=source)

    assert run.fetched == 15
    assert stored_ids() == served_ids(fake_arxiv, 15)
    assert len(fake_arxiv.requests) == 2


def test_reaching_the_maximum_before_the_last_success_is_reported(fake_arxiv, settings):
    settings.ARXIV_UPDATED_LOOKBACK_HOURS = 0
    last_success = as_datetime(updated_of(fake_arxiv.entries[40]))
    source = IngestSourceFactory(max_results=20, last_success_at=last_success)

    run = runs.run_source(source=source)

    assert run.status == IngestRun.Status.PARTIAL
    assert "Stopped at the maximum of 20 results" in run.error
    source.refresh_from_db()
    assert source.last_success_at == run.started_at


def test_a_fault_keeps_the_pages_before_it_and_the_next_run_completes(fake_arxiv):
    source = IngestSourceFactory()
    fake_arxiv.queue(Fault(), *[Fault(status=503)] * 4)

    failed = runs.run_source(source=source)

    assert failed.status == IngestRun.Status.PARTIAL
    assert "HTTP 503" in failed.error
    assert (failed.fetched, failed.created) == (10, 10)
    assert stored_ids() == served_ids(fake_arxiv, 10)
    source.refresh_from_db()
    assert source.last_success_at is None

    completed = runs.run_source(source=source)

    assert completed.status == IngestRun.Status.SUCCEEDED
    assert (completed.created, completed.unchanged) == (15, 10)
    assert stored_ids() == served_ids(fake_arxiv, 25)


def test_a_run_that_gets_nothing_fails_with_the_reason(fake_arxiv):
    fake_arxiv.queue(*[Fault(truncate=True)] * 4)

    run = runs.run_source(source=IngestSourceFactory())

    assert run.status == IngestRun.Status.FAILED
    assert "malformed XML" in run.error
    assert Paper.objects.count() == 0


def test_bad_entries_are_counted_and_listed_but_do_not_stop_the_run(fake_arxiv):
    bad = fake_arxiv.entries[5]
    fake_arxiv.entries[5] = bad[: bad.index("<title>")] + bad[bad.index("</title>") + 8 :]
    source = IngestSourceFactory()

    run = runs.run_source(source=source)

    assert (run.status, run.fetched, run.created, run.skipped) == (
        IngestRun.Status.PARTIAL,
        25,
        24,
        1,
    )
    assert "Skipped 1 unreadable entries" in run.error
    assert entry_id(bad) in run.error
    source.refresh_from_db()
    # Fetching it again would not mend the entry, so the run still counts as read through.
    assert source.last_success_at == run.started_at


def test_a_source_with_a_live_claim_is_already_running(fake_arxiv):
    source = IngestSourceFactory(claimed_at=timezone.now(), claim_token="another-worker")

    with pytest.raises(runs.AlreadyRunning):
        runs.run_source(source=source)

    assert fake_arxiv.requests == []
    assert IngestRun.objects.count() == 0


def test_a_stale_claim_is_taken_over_and_its_run_marked_interrupted(fake_arxiv, settings):
    settings.INGEST_RUN_STALE_SECONDS = 60
    last_beat = timezone.now() - datetime.timedelta(seconds=61)
    source = IngestSourceFactory(claimed_at=last_beat, claim_token="killed-worker")
    interrupted = IngestRun.objects.create(
        source=source, fetched=10, created=10, heartbeat_at=last_beat
    )

    run = runs.run_source(source=source)

    assert run.status == IngestRun.Status.SUCCEEDED
    interrupted.refresh_from_db()
    assert interrupted.status == IngestRun.Status.INTERRUPTED
    assert "Interrupted" in interrupted.error
    assert interrupted.finished_at is not None
    assert (interrupted.fetched, interrupted.created) == (10, 10)


def test_the_sweep_marks_runs_whose_heartbeat_stopped_and_frees_their_sources(fake_arxiv, settings):
    settings.INGEST_RUN_STALE_SECONDS = 60
    now = timezone.now()
    stopped, beating = (now - datetime.timedelta(seconds=s) for s in (61, 30))
    source = IngestSourceFactory(claimed_at=stopped, claim_token="killed-worker")
    busy = IngestSourceFactory(claimed_at=beating, claim_token="live-worker")
    dead = IngestRun.objects.create(source=source, fetched=10, created=10, heartbeat_at=stopped)
    dead_import = IngestRun.objects.create(kind=IngestRun.Kind.SNAPSHOT, heartbeat_at=stopped)
    alive = IngestRun.objects.create(source=busy, heartbeat_at=beating)
    # A link request no worker has begun has no heartbeat yet: it waits its turn.
    waiting = IngestRun.objects.create(
        kind=IngestRun.Kind.LINKS, started_at=now - datetime.timedelta(hours=1)
    )

    assert tasks.interrupt_stale_runs() == 2

    statuses = dict(IngestRun.objects.values_list("pk", "status"))
    assert statuses == {
        dead.pk: IngestRun.Status.INTERRUPTED,
        dead_import.pk: IngestRun.Status.INTERRUPTED,
        alive.pk: IngestRun.Status.RUNNING,
        waiting.pk: IngestRun.Status.RUNNING,
    }
    dead.refresh_from_db()
    assert dead.error.startswith("Interrupted: its worker stopped")
    assert (dead.fetched, dead.created) == (10, 10)
    source.refresh_from_db()
    busy.refresh_from_db()
    assert (source.claimed_at, source.claim_token) == (None, "")
    assert (busy.claimed_at, busy.claim_token) == (beating, "live-worker")
    # The freed source ingests on its next turn; the busy one is left to its run.
    assert runs.run_source(source=source).status == IngestRun.Status.SUCCEEDED
    with pytest.raises(runs.AlreadyRunning):
        runs.run_source(source=busy)


def test_beat_sweeps_every_minute_on_a_queue_ingest_runs_cannot_hold_up():
    sweep = PeriodicTask.objects.get(task="ingest.tasks.interrupt_stale_runs")

    assert (sweep.schedule.run_every, sweep.enabled) == (datetime.timedelta(minutes=1), True)
    assert celery_app.amqp.router.route({}, sweep.task)["queue"].name == "celery"
    assert celery_app.amqp.router.route({}, "ingest.tasks.ingest_source")["queue"].name == (
        "ingest"
    )


@pytest.mark.django_db(transaction=True)
def test_a_run_kept_waiting_by_arxiv_keeps_its_heartbeat(fake_arxiv, settings):
    settings.INGEST_RUN_STALE_SECONDS = 3  # a beat every half second
    settings.ARXIV_REQUEST_TIMEOUT = 30
    answer = threading.Event()
    fake_arxiv.queue(Fault(), Fault(held_until=answer))
    source = IngestSourceFactory()
    finished = []

    def worker() -> None:
        try:
            finished.append(runs.run_source(source=source))
        finally:
            connection.close()

    thread = threading.Thread(target=worker)
    thread.start()
    try:
        fake_arxiv.wait_for_requests(2)
        waiting_since = timezone.now()

        def run_and_claim_beat() -> bool:
            run, claim = IngestRun.objects.get(), IngestSource.objects.get()
            return run.heartbeat_at > waiting_since and claim.claimed_at > waiting_since

        wait_for(run_and_claim_beat)
    finally:
        answer.set()
        thread.join(timeout=30)

    [run] = finished
    assert (run.status, run.created) == (IngestRun.Status.SUCCEEDED, 25)


@pytest.mark.django_db(transaction=True)
def test_two_workers_on_one_source_run_it_once(fake_arxiv, settings):
    settings.ARXIV_REQUEST_TIMEOUT = 30  # a held answer is waited for, not retried
    source = IngestSourceFactory()
    # The first worker's first page is held until the second worker has tried.
    answer = threading.Event()
    fake_arxiv.queue(Fault(held_until=answer))
    outcomes = []

    def worker() -> None:
        try:
            outcomes.append(runs.run_source(source=IngestSource.objects.get(pk=source.pk)).status)
        except runs.AlreadyRunning:
            outcomes.append("already running")
        finally:
            connection.close()

    first = threading.Thread(target=worker)
    first.start()
    try:
        fake_arxiv.wait_for_requests(1)  # the first has claimed the source and is reading it
        second = threading.Thread(target=worker)
        second.start()
        second.join(timeout=30)
    finally:
        answer.set()
        first.join(timeout=30)

    assert outcomes == ["already running", IngestRun.Status.SUCCEEDED]
    assert IngestRun.objects.count() == 1
    assert Paper.objects.count() == 25


@pytest.mark.django_db(transaction=True)
def test_a_run_whose_claim_was_taken_over_stops(fake_arxiv, settings):
    settings.ARXIV_REQUEST_TIMEOUT = 30  # a held answer is waited for, not retried
    source = IngestSourceFactory()
    # The second page is held until another worker has taken the claim over.
    answer = threading.Event()
    fake_arxiv.queue(Fault(), Fault(held_until=answer))

    def take_over() -> None:
        try:
            fake_arxiv.wait_for_requests(2)  # the run holds the claim, its second page asked for
            IngestSource.objects.filter(pk=source.pk).update(claim_token="a-later-worker")
        finally:
            answer.set()
            connection.close()

    thief = threading.Thread(target=take_over)
    thief.start()
    run = runs.run_source(source=source)
    thief.join(timeout=30)

    assert run.status == IngestRun.Status.PARTIAL
    assert "another worker took it over" in run.error
    source.refresh_from_db()
    assert source.claim_token == "a-later-worker"
    assert source.last_success_at is None


def test_ingest_arxiv_runs_a_source_and_prints_its_counts(fake_arxiv, capsys):
    IngestSourceFactory(name="Testing")

    call_command("ingest_arxiv", "--source", "Testing")

    assert "succeeded: fetched 25, created 25, updated 0, unchanged 0, skipped 0." in (
        capsys.readouterr().out
    )
    assert Paper.objects.count() == 25


def test_ingest_arxiv_runs_an_ad_hoc_query(fake_arxiv, capsys):
    call_command("ingest_arxiv", "--query", "cat:cs.CL AND abs:reasoning", "--max", "12")

    assert "fetched 12, created 12" in capsys.readouterr().out
    assert fake_arxiv.requests[0].params["search_query"] == "cat:cs.CL AND abs:reasoning"
    run = IngestRun.objects.get()
    assert (run.source, run.query) == (None, "cat:cs.CL AND abs:reasoning")


def test_ingest_arxiv_names_the_known_sources_for_an_unknown_one(fake_arxiv):
    IngestSourceFactory(name="Reasoning")

    expected = "No ingest source named 'Nope'. Known sources: Reasoning."
    with pytest.raises(CommandError, match=re.escape(expected)):
        call_command("ingest_arxiv", "--source", "Nope")


def test_ingest_arxiv_through_every_fault_stores_each_paper_once(fake_arxiv, capsys):
    IngestSourceFactory(name="Testing", max_results=60)
    fake_arxiv.queue(
        Fault(status=503, headers={"Retry-After": "0"}),
        Fault(),
        Fault(reset=True),
        Fault(status=429),
        Fault(delay=1),
        Fault(),
        Fault(empty=True),
        Fault(truncate=True),
        Fault(),
    )

    call_command("ingest_arxiv", "--source", "Testing")

    assert "succeeded: fetched 60, created 60" in capsys.readouterr().out
    assert stored_ids() == served_ids(fake_arxiv, 60)


def test_ingest_arxiv_fails_loudly_when_arxiv_cannot_be_read(fake_arxiv, capsys):
    IngestSourceFactory(name="Testing")
    fake_arxiv.queue(*[Fault(status=503)] * 4)

    with pytest.raises(CommandError, match="The run failed"):
        call_command("ingest_arxiv", "--source", "Testing")

    assert "HTTP 503" in capsys.readouterr().err


def test_new_papers_are_summarised_in_the_background_after_their_page_commits(
    fake_arxiv, settings, django_capture_on_commit_callbacks
):
    settings.SUMMARY_AUTO = True
    settings.PREVIEW_AUTO = False
    settings.SUMMARY_BACKEND = "extractive"
    source = IngestSourceFactory(max_results=10)

    with django_capture_on_commit_callbacks(execute=True):
        runs.run_source(source=source)

    summarised = Paper.objects.filter(summaries__kind="summary").distinct().count()
    assert summarised == Paper.objects.count() == 10
