import datetime
import io
import itertools
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from catalog.models import Paper
from ingest.models import IngestRun, OaiHarvest, TagRule
from ingest.runs import Harvest
from ingest.runs import harvest_oai as harvest
from tests.factories import TagFactory

DATA = Path(__file__).parent / "data" / "oai"
PAGE1, PAGE2 = (DATA / "page1.xml").read_bytes(), (DATA / "page2.xml").read_bytes()
NO_RECORDS = (DATA / "no_records.xml").read_bytes()
BAD_TOKEN = (DATA / "bad_token.xml").read_bytes()
BROKEN = PAGE1[: len(PAGE1) // 2]
MAY_21 = datetime.date(2025, 5, 21)
UTC = datetime.UTC


def ok(body: bytes) -> dict:
    return {"status": 200, "body": body}


@pytest.mark.django_db
def test_harvest_follows_the_token_waits_as_asked_and_retries_broken_xml(oai_server):
    oai_server.script.extend(
        [
            {"status": 503, "headers": {"Retry-After": "7"}, "body": b"busy"},
            ok(PAGE1),
            ok(BROKEN),
            ok(PAGE2),
        ]
    )
    harvesting = Harvest(
        from_date=MAY_21, until_date=datetime.date(2025, 5, 23), set_spec="cs", http=oai_server.http
    )

    skipped = [entry for stored in harvesting for entry in stored.skipped]
    run = harvesting.row

    first, *_, last = oai_server.received
    assert first["params"] == {
        "verb": ["ListRecords"],
        "metadataPrefix": ["arXiv"],
        "from": ["2025-05-21"],
        "until": ["2025-05-23"],
        "set": ["cs"],
    }
    assert first["User-Agent"] == "Papershelf-test/1.0 (mailto:test@example.org)"
    assert last["params"] == {"verb": ["ListRecords"], "resumptionToken": ["6960524|1001"]}
    assert len(oai_server.received) == 4
    assert any(7 <= wait <= 8 for wait in oai_server.sleep.waits)
    request_times = [request["at"] for request in oai_server.received]
    assert all(b - a >= 0.2 for a, b in itertools.pairwise(request_times))
    assert sorted(Paper.objects.values_list("arxiv_id", flat=True)) == [
        "2309.00001",
        "2505.15034",
        "2505.16001",
        "cs/0112017",
    ]
    assert list(map(str, skipped)) == ["oai:arXiv.org:2505.20000: 2505.20000: missing title"]
    assert (run.kind, run.status) == (IngestRun.Kind.OAI, IngestRun.Status.PARTIAL)
    assert (run.fetched, run.created, run.skipped) == (5, 4, 1)
    state = OaiHarvest.objects.get()
    assert (state.completed, state.resumption_token, state.records) == (True, "", 4)


@pytest.mark.django_db
def test_harvested_metadata_is_stored_tidied(oai_server):
    oai_server.script.extend([ok(PAGE1), ok(PAGE2)])

    harvest(from_date=MAY_21, http=oai_server.http)

    tango = Paper.objects.get(arxiv_id="2505.15034")
    assert tango.title == (
        "RL Tango: Reinforcing Generator and Verifier Together for Language Reasoning"
    )
    assert tango.author_names == "Wei Chen, José Müller Jr, Li Zhang"
    # Names in the parts the format gives them (keyname, forenames, suffix).
    assert tango.author_parts == [
        ["Chen", "Wei", ""],
        ["Müller", "José", "Jr"],
        ["Zhang", "Li", ""],
    ]
    assert tango.abstract.startswith("Reinforcement learning (RL) has recently emerged as a")
    assert tango.version == 1
    assert tango.published_at == datetime.datetime(2025, 5, 21, tzinfo=UTC)
    assert tango.primary_category.code == "cs.LG"
    assert list(tango.code_links.values_list("url", "source")) == [
        ("https://github.com/kaiwenzha/rl-tango", "comment")
    ]
    revised = Paper.objects.get(arxiv_id="2309.00001")
    assert revised.title == "Sparse attention, revisited"
    assert revised.version is None  # revised, and the format gives no number
    assert revised.updated_at == datetime.datetime(2025, 5, 21, tzinfo=UTC)
    assert (revised.journal_ref, revised.doi) == (
        "Transactions of the ACL 13 (2025) 1-20",
        "10.1162/tacl_a_00001",
    )
    assert not Paper.objects.filter(arxiv_id="2505.10001").exists()  # deleted on arXiv


@pytest.mark.django_db
def test_interrupted_harvest_resumes_from_the_stored_token(oai_server):
    oai_server.script.extend([ok(PAGE1), *[{"status": 500, "body": b"down"}] * 3])

    stopped = harvest(from_date=MAY_21, set_spec="cs", http=oai_server.http)

    state = OaiHarvest.objects.get()
    assert (state.resumption_token, state.completed) == ("6960524|1001", False)
    assert stopped.status == IngestRun.Status.PARTIAL
    assert stopped.stopped_reason.startswith("HTTP 500 (gave up after 3 tries")
    assert Paper.objects.count() == 2

    oai_server.received.clear()
    oai_server.script.extend([ok(PAGE2)])
    run = harvest(from_date=MAY_21, set_spec="cs", http=oai_server.http)

    assert [r["params"] for r in oai_server.received] == [
        {"verb": ["ListRecords"], "resumptionToken": ["6960524|1001"]}
    ]
    assert run.created == 2
    assert Paper.objects.count() == 4
    state.refresh_from_db()
    assert (state.completed, state.records) == (True, 4)


@pytest.mark.django_db
def test_harvesting_again_stores_every_paper_once(oai_server):
    oai_server.script.extend([ok(PAGE1), ok(PAGE2), ok(PAGE1), ok(PAGE2)])

    harvest(from_date=MAY_21, http=oai_server.http)
    again = harvest(from_date=MAY_21, http=oai_server.http)

    assert (again.created, again.updated, again.unchanged) == (0, 0, 4)
    assert Paper.objects.count() == 4
    assert OaiHarvest.objects.filter(completed=True).count() == 2


@pytest.mark.django_db
def test_expired_token_starts_the_period_over(oai_server):
    OaiHarvest.objects.create(from_date=MAY_21, resumption_token="6960524|1001")
    oai_server.script.extend([ok(BAD_TOKEN), ok(PAGE1), ok(PAGE2)])

    run = harvest(from_date=MAY_21, http=oai_server.http)

    assert "metadataPrefix" in oai_server.received[1]["params"]
    assert run.status == IngestRun.Status.PARTIAL
    assert Paper.objects.count() == 4


@pytest.mark.django_db
def test_timeouts_are_retried_with_backoff(oai_server):
    oai_server.http.timeout = 0.5
    oai_server.script.extend([{"status": 200, "body": NO_RECORDS, "delay": 3}, ok(NO_RECORDS)])

    run = harvest(from_date=MAY_21, http=oai_server.http)

    assert len(oai_server.received) == 2
    assert 1 <= oai_server.sleep.waits[0] <= 2  # base wait plus jitter
    assert (run.status, run.fetched) == (IngestRun.Status.SUCCEEDED, 0)


@pytest.mark.django_db
def test_command_reports_a_harvest_that_keeps_failing(oai_server, settings):
    settings.ARXIV_DELAY_SECONDS = 0
    settings.ARXIV_MAX_RETRIES = 1
    settings.ARXIV_RETRY_BASE_WAIT = 0.01
    oai_server.script.extend([ok(BROKEN), ok(BROKEN)])

    with pytest.raises(
        CommandError, match=r"Harvest stopped: malformed XML.*gave up after 2 tries"
    ):
        call_command("harvest_oai", "--from", "2025-05-21", stdout=io.StringIO())

    assert IngestRun.objects.get().status == IngestRun.Status.FAILED


@pytest.mark.django_db
def test_command_with_no_matching_records_ends_cleanly(oai_server):
    oai_server.script.append(ok(NO_RECORDS))
    stdout = io.StringIO()

    call_command("harvest_oai", "--from", "2030-01-01", "--set", "cs", stdout=stdout)

    assert "0 records harvested" in stdout.getvalue()
    assert IngestRun.objects.get().status == IngestRun.Status.SUCCEEDED
    assert OaiHarvest.objects.get().completed


@pytest.mark.django_db
def test_command_rejects_a_bad_period():
    with pytest.raises(CommandError, match="--from is after --until"):
        call_command("harvest_oai", "--from", "2025-05-02", "--until", "2025-05-01")
    with pytest.raises(CommandError, match="not a date"):
        call_command("harvest_oai", "--from", "May 1st")


@pytest.mark.django_db
def test_harvested_papers_get_the_tags_of_matching_rules(oai_server):
    tag = TagFactory(name="Test_Time_Scaling")
    TagRule.objects.create(tag=tag, keywords="test-time")
    oai_server.script.extend([ok(PAGE1), ok(PAGE2)])

    harvest(from_date=MAY_21, http=oai_server.http)

    assert list(tag.papers.values_list("arxiv_id", flat=True)) == ["2505.16001"]
