import json

import pytest
from django.contrib.admin.models import LogEntry
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django_celery_beat.models import IntervalSchedule, PeriodicTask
from django_celery_beat.schedulers import DatabaseScheduler

from catalog.models import Paper
from config.celery import app as celery_app
from core import background
from ingest.models import IngestRun, IngestSource, OaiHarvest, TagRule
from tests.arxiv_server import Fault
from tests.factories import PaperFactory, TagFactory
from tests.ingest_factories import IngestSourceFactory, TagRuleFactory

pytestmark = pytest.mark.django_db


def changelist(model) -> str:
    return reverse(f"admin:ingest_{model._meta.model_name}_changelist")


def query_count(client, url: str) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    return len(queries)


def ingest_schedules():
    return PeriodicTask.objects.filter(task="ingest.tasks.ingest_source")


def make_runs(count: int) -> None:
    for _ in range(count):
        IngestRun.objects.create(source=IngestSourceFactory(), fetched=3, created=3)


@pytest.mark.parametrize(
    ("model", "make_rows"),
    [
        (IngestSource, lambda n: IngestSourceFactory.create_batch(n, tags=[TagFactory()])),
        (IngestRun, make_runs),
        (TagRule, lambda n: TagRuleFactory.create_batch(n)),
        (
            OaiHarvest,
            lambda n: [OaiHarvest.objects.create(from_date="2025-01-01") for _ in range(n)],
        ),
    ],
    ids=["sources", "runs", "tag-rules", "oai-harvests"],
)
def test_list_pages_make_no_query_per_row(admin_client, model, make_rows):
    make_rows(2)
    few = query_count(admin_client, changelist(model))
    make_rows(8)

    assert query_count(admin_client, changelist(model)) == few


def test_the_run_list_takes_a_fixed_number_of_queries(admin_client, django_assert_num_queries):
    make_runs(5)
    admin_client.get(changelist(IngestRun))  # the session is loaded once warm

    # Session, user, the source filter's choices, two counts, the rows with
    # their sources, and two for the date hierarchy.
    with django_assert_num_queries(8):
        response = admin_client.get(changelist(IngestRun))

    assert response.status_code == 200
    assert response.content.count(b'class="field-status"') == 5


@pytest.mark.parametrize("model", [IngestRun, OaiHarvest])
def test_ingest_records_can_be_viewed_but_not_added_changed_or_deleted(admin_client, model):
    row = (
        IngestRun.objects.create(query="all:testing", fetched=4, error="HTTP 503")
        if model is IngestRun
        else OaiHarvest.objects.create(from_date="2025-01-01", records=4)
    )
    name = model._meta.model_name
    change_url = reverse(f"admin:ingest_{name}_change", args=[row.pk])

    assert admin_client.get(reverse(f"admin:ingest_{name}_add")).status_code == 403
    page = admin_client.get(change_url)
    assert page.status_code == 200
    assert b'name="_save"' not in page.content
    assert admin_client.post(change_url, {"fetched": 99}).status_code == 403
    delete_url = reverse(f"admin:ingest_{name}_delete", args=[row.pk])
    assert admin_client.post(delete_url, {"post": "yes"}).status_code == 403
    assert model.objects.filter(pk=row.pk).exists()


def test_run_now_queues_the_run_after_the_commit(
    admin_client, fake_arxiv, django_capture_on_commit_callbacks
):
    source = IngestSourceFactory()
    IngestSourceFactory()  # not selected

    with django_capture_on_commit_callbacks() as callbacks:
        response = admin_client.post(
            changelist(IngestSource),
            {"action": "run_now", "_selected_action": [source.pk]},
            follow=True,
        )
        assert IngestRun.objects.count() == 0
    for callback in callbacks:
        callback()

    assert "Queued 1 source run;" in response.content.decode()
    run = IngestRun.objects.get()
    assert (run.source, run.status, run.created) == (source, IngestRun.Status.SUCCEEDED, 25)
    assert Paper.objects.count() == 25


def test_reapplying_rules_tags_the_whole_catalog(admin_client, django_capture_on_commit_callbacks):
    chosen = TagRuleFactory(keywords="reasoning")
    other = TagRuleFactory(keywords="reasoning")
    PaperFactory.create_batch(3, title="Reasoning")

    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            changelist(TagRule), {"action": "reapply", "_selected_action": [chosen.pk]}, follow=True
        )

    assert "Queued" in response.content.decode()
    assert chosen.tag.papers.count() == 3
    assert other.tag.papers.count() == 0


def test_a_source_added_in_admin_is_scheduled_hourly(admin_client):
    tag = TagFactory()
    response = admin_client.post(
        reverse("admin:ingest_ingestsource_add"),
        {
            "name": "Reasoning",
            "query": "cat:cs.CL AND abs:reasoning",
            "tags": [tag.pk],
            "enabled": "on",
            "interval_minutes": "60",
            "max_results": "200",
        },
    )

    assert response.status_code == 302
    source = IngestSource.objects.get()
    assert list(source.tags.all()) == [tag]
    task = ingest_schedules().get()
    assert source.periodic_task == task
    assert task.name == "Ingest arXiv: Reasoning"
    assert task.task == "ingest.tasks.ingest_source"
    assert json.loads(task.kwargs) == {"source_id": source.pk}
    assert (task.interval.every, task.interval.period) == (60, IntervalSchedule.MINUTES)
    assert task.enabled


def test_a_source_form_refuses_a_zero_maximum(admin_client):
    response = admin_client.post(
        reverse("admin:ingest_ingestsource_add"),
        {"name": "Zero", "query": "all:x", "interval_minutes": "0", "max_results": "0"},
    )

    assert response.status_code == 200
    assert response.content.count(b"greater than or equal to 1") == 2
    assert not IngestSource.objects.exists()


def test_the_schedule_follows_edits_renames_disabling_and_deletion():
    source = IngestSourceFactory(name="Reasoning")
    task_id = source.periodic_task_id

    source.name, source.interval_minutes = "Reasoning papers", 15
    source.save()
    task = ingest_schedules().get()
    assert (task.pk, task.name, task.interval.every) == (
        task_id,
        "Ingest arXiv: Reasoning papers",
        15,
    )

    source.enabled = False
    source.save()
    assert not ingest_schedules().exists()
    source.refresh_from_db()
    assert source.periodic_task is None

    source.enabled = True
    source.save()
    assert ingest_schedules().count() == 1

    source.delete()
    assert not ingest_schedules().exists()


def test_deleting_sources_in_admin_removes_their_schedules(admin_client):
    sources = IngestSourceFactory.create_batch(2)
    kept = IngestSourceFactory()

    admin_client.post(
        changelist(IngestSource),
        {"action": "delete_selected", "_selected_action": [s.pk for s in sources], "post": "yes"},
    )

    assert list(ingest_schedules().values_list("name", flat=True)) == [f"Ingest arXiv: {kept.name}"]
    assert LogEntry.objects.count() == 2


def test_beat_reads_the_source_schedules_from_the_database():
    source = IngestSourceFactory(name="Reasoning", interval_minutes=30)
    IngestSourceFactory(name="Switched off", enabled=False)

    schedule = DatabaseScheduler(app=celery_app, lazy=True).all_as_schedule()

    entries = {name: entry for name, entry in schedule.items() if name.startswith("Ingest")}
    assert list(entries) == ["Ingest arXiv: Reasoning"]
    entry = entries["Ingest arXiv: Reasoning"]
    assert entry.task == "ingest.tasks.ingest_source"
    assert entry.kwargs == {"source_id": source.pk}
    assert entry.schedule.run_every.total_seconds() == 30 * 60


@pytest.mark.django_db(transaction=True)
def test_without_a_broker_run_now_answers_at_once_and_the_source_page_shows_progress(
    admin_client, fake_arxiv, settings, monkeypatch
):
    settings.EAGER_TASKS_IN_THREADS = True
    fake_arxiv.queue(*[Fault(delay=1.0)] * 3)  # a slow arXiv: three pages of 10
    source = IngestSourceFactory(max_results=25)

    response = admin_client.post(
        changelist(IngestSource), {"action": "run_now", "_selected_action": [source.pk]}
    )

    assert response.status_code == 302
    # The page did not wait for the run: it is still reading arXiv.
    assert any(thread.is_alive() for thread in background.started_threads)
    for thread in background.started_threads:
        thread.join(timeout=30)
    page = admin_client.get(reverse("admin:ingest_ingestsource_change", args=[source.pk]))
    assert "Recent runs" in page.content.decode()
    run = IngestRun.objects.get()
    assert (run.status, run.created) == (IngestRun.Status.SUCCEEDED, 25)
    assert f"<td>{run.get_status_display()}</td><td>25</td><td>25</td>" in page.content.decode()
