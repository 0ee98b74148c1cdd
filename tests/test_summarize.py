import itertools
import threading
from io import StringIO

import pytest
from celery.exceptions import Retry
from django.core.management import CommandError, call_command
from django.db import connection
from django.urls import reverse

from catalog.models import Summary
from core import background
from enrichment.base import SOURCE_LANGUAGE, Enrichment, EnrichmentUnavailable
from enrichment.prompt import PROMPT_VERSION
from enrichment.queue import queue_enrichment, queue_summaries
from enrichment.services import enrich_paper
from enrichment.tasks import summarize_paper
from tests.factories import PaperFactory, SummaryFactory, TagFactory
from tests.fake_llm_server import ABSTRACT, GOOD_ANSWER

pytestmark = pytest.mark.django_db


@pytest.fixture
def no_previews(settings):
    settings.PREVIEW_AUTO = False


def summaries(paper) -> dict:
    return {(s.language, s.kind): s for s in Summary.objects.filter(paper=paper)}


def summarize(*args: str, fails: bool = False) -> tuple[str, str]:
    """The command's output and error output (ending with the error it exits with)."""
    out, err = StringIO(), StringIO()
    if not fails:
        call_command("summarize", *args, stdout=out, stderr=err)
        return out.getvalue(), err.getvalue()
    with pytest.raises(CommandError) as error:
        call_command("summarize", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue() + str(error.value)


def test_summarize_stores_summary_takeaways_and_translations(fake_llm):
    paper = PaperFactory(arxiv_id="2505.15034", abstract=ABSTRACT)

    out, _ = summarize("--paper", "arXiv:2505.15034v2")

    stored = summaries(paper)
    assert set(stored) == {
        ("en", "summary"),
        ("en", "takeaways"),
        ("zh-hans", "translation"),
        ("ko", "translation"),
    }
    assert stored["en", "summary"].body == GOOD_ANSWER["summary"]
    assert stored["en", "takeaways"].body == "\n".join(
        f"{n}. {text}" for n, text in enumerate(GOOD_ANSWER["takeaways"], 1)
    )
    assert stored["ko", "translation"].body == GOOD_ANSWER["translations"]["ko"]
    for summary in stored.values():
        assert summary.backend == Summary.Backend.LLM
        assert summary.model_name == summary.written_by == "fake-model-7b"
        assert summary.prompt_version == PROMPT_VERSION
        assert summary.status == Summary.Status.DRAFT
        assert not summary.curator_edited
    assert "2505.15034: stored summary (en), takeaways (en), translation (zh-hans)" in out


def test_machine_output_is_published_directly_when_configured(fake_llm, settings):
    settings.SUMMARY_AUTO_PUBLISH = True
    paper = PaperFactory(abstract=ABSTRACT)

    summarize("--paper", paper.arxiv_id)

    assert {s.status for s in summaries(paper).values()} == {Summary.Status.PUBLISHED}


def test_malformed_answer_is_refused_and_nothing_stored(fake_llm):
    paper = PaperFactory(abstract=ABSTRACT)
    fake_llm.answer("malformed", "malformed")

    _, err = summarize("--paper", paper.arxiv_id, fails=True)

    assert "FAILED: no valid answer from fake-model-7b in 2 attempts" in err
    assert "not valid JSON" in err
    assert err.endswith("1 paper(s) failed; nothing invalid was stored.")
    assert summaries(paper) == {}


def test_unreachable_model_is_reported_by_the_command(fake_llm, settings):
    settings.LLM_BASE_URL = "http://127.0.0.1:9/v1"
    paper = PaperFactory(abstract=ABSTRACT)

    _, err = summarize("--paper", paper.arxiv_id, fails=True)

    assert f"{paper.arxiv_id}: FAILED: fake-model-7b is unavailable" in err
    assert summaries(paper) == {}


def test_existing_machine_output_is_kept_without_asking_the_model(fake_llm):
    paper = PaperFactory(abstract=ABSTRACT)
    summarize("--paper", paper.arxiv_id)
    fake_llm.requests.clear()

    out, _ = summarize("--paper", paper.arxiv_id)

    assert fake_llm.requests == []
    assert "kept existing summary (en)" in out


def test_regenerate_replaces_machine_output_but_keeps_curator_edits(fake_llm):
    paper = PaperFactory(abstract=ABSTRACT)
    old_machine = SummaryFactory(
        paper=paper, language="ko", kind=Summary.Kind.TRANSLATION, body="예전 번역입니다."
    )
    edited = SummaryFactory(
        paper=paper, language="en", kind=Summary.Kind.SUMMARY, body="Fixed.", curator_edited=True
    )
    written = SummaryFactory(
        paper=paper,
        language="zh-hans",
        kind=Summary.Kind.TRANSLATION,
        body="编辑的翻译。",
        backend=Summary.Backend.CURATOR,
    )

    out, _ = summarize("--paper", paper.arxiv_id, "--regenerate")

    stored = summaries(paper)
    assert stored["ko", "translation"].body == GOOD_ANSWER["translations"]["ko"]
    assert stored["ko", "translation"].pk == old_machine.pk
    assert stored["en", "summary"].body == "Fixed." and stored["en", "summary"].pk == edited.pk
    assert stored["zh-hans", "translation"].body == "编辑的翻译。"
    assert written.pk == stored["zh-hans", "translation"].pk
    assert "kept existing summary (en), translation (zh-hans)" in out


def test_a_summary_delivered_again_asks_the_model_nothing_more(fake_llm):
    paper = PaperFactory(abstract=ABSTRACT)

    for _ in range(2):  # a worker died after storing it, before acknowledging
        summarize_paper.apply(args=[paper.pk])

    assert len(fake_llm.requests) == 1
    assert len(summaries(paper)) == 4


def test_a_regeneration_delivered_again_asks_the_model_once(
    fake_llm, monkeypatch, django_capture_on_commit_callbacks
):
    paper = PaperFactory(abstract=ABSTRACT)
    summarize("--paper", paper.arxiv_id)
    fake_llm.requests.clear()
    queued = []
    send = background.send
    monkeypatch.setattr(
        background, "send", lambda task, *a, **kw: queued.append((a, kw)) or send(task, *a, **kw)
    )

    with django_capture_on_commit_callbacks(execute=True):
        queue_summaries(paper_ids=[paper.pk], regenerate=True)
    regenerated = summaries(paper)
    # The same message again, as the broker hands out a dead worker's.
    [(args, kwargs)] = queued
    summarize_paper.apply(args=args, kwargs=kwargs)

    assert len(fake_llm.requests) == 1
    assert {key: s.updated_at for key, s in summaries(paper).items()} == {
        key: s.updated_at for key, s in regenerated.items()
    }


def test_force_overwrites_curator_edits(fake_llm):
    paper = PaperFactory(abstract=ABSTRACT)
    SummaryFactory(
        paper=paper, language="en", kind=Summary.Kind.SUMMARY, body="Fixed.", curator_edited=True
    )

    summarize("--paper", paper.arxiv_id, "--force")

    summary = summaries(paper)["en", "summary"]
    assert summary.body == GOOD_ANSWER["summary"]
    assert (summary.backend, summary.curator_edited) == (Summary.Backend.LLM, False)


class EditingBackend:
    """Writes like the extractive backend, while a curator saves an edit meanwhile."""

    kind = Summary.Backend.EXTRACTIVE
    written_by = model_name = "test"
    prompt_version = ""
    translation_languages = ()

    def __init__(self, paper):
        self.paper = paper

    def enrich(self, *, title, abstract):
        Summary.objects.filter(paper=self.paper, kind=Summary.Kind.SUMMARY).update(
            body="Curator's words.", curator_edited=True
        )
        return Enrichment(summary="Machine words.", takeaways=("A.", "B.", "C."))


def test_curator_edit_saved_while_the_model_writes_is_kept():
    paper = PaperFactory(abstract=ABSTRACT)
    SummaryFactory(paper=paper, language="en", kind=Summary.Kind.SUMMARY, body="Old machine.")

    report = enrich_paper(paper=paper, regenerate=True, backend=EditingBackend(paper))

    assert summaries(paper)["en", "summary"].body == "Curator's words."
    assert summaries(paper)["en", "takeaways"].body == "1. A.\n2. B.\n3. C."
    assert report.stored == [("en", "takeaways")]


def test_extractive_backend_stores_summary_and_takeaways_without_translation(settings):
    settings.SUMMARY_LANGUAGES = ["zh-hans", "ko"]
    paper = PaperFactory(abstract=ABSTRACT)

    summarize("--paper", paper.arxiv_id)

    stored = summaries(paper)
    assert set(stored) == {(SOURCE_LANGUAGE, "summary"), (SOURCE_LANGUAGE, "takeaways")}
    assert {s.backend for s in stored.values()} == {Summary.Backend.EXTRACTIVE}
    assert stored["en", "takeaways"].body.startswith("1. Large language models often fail")
    assert stored["en", "takeaways"].body.count("\n") == 4


def test_missing_with_tag_only_summarises_that_tags_papers_lacking_summaries():
    tag = TagFactory(slug="reasoning")
    lacking = PaperFactory(abstract=ABSTRACT, tags=[tag])
    done = PaperFactory(abstract=ABSTRACT, tags=[tag])
    SummaryFactory(paper=done, language="en", kind=Summary.Kind.SUMMARY)
    SummaryFactory(paper=done, language="en", kind=Summary.Kind.TAKEAWAYS)
    untagged = PaperFactory(abstract=ABSTRACT)

    out, _ = summarize("--missing", "--tag", "reasoning")

    assert out.splitlines() == [f"{lacking.arxiv_id}: stored summary (en), takeaways (en)"]
    assert summaries(untagged) == {}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--paper", "not-an-id"], "'not-an-id' is not an arXiv id"),
        (["--paper", "2401.00001"], "No paper with arXiv id 2401.00001"),
        (["--missing", "--tag", "nope"], "No tag with slug 'nope'"),
        (["--paper", "2401.00001", "--tag", "x"], "--tag and --limit go with --missing"),
    ],
)
def test_bad_arguments_get_a_clear_message(args, message):
    _, err = summarize(*args, fails=True)

    assert message in err


def test_task_returns_the_failure_without_storing(fake_llm):
    paper = PaperFactory(abstract=ABSTRACT)
    fake_llm.answer("empty", "empty")

    result = summarize_paper.apply(args=[paper.pk]).get()

    assert result["error"].startswith("no valid answer")
    assert summaries(paper) == {}


def test_task_retries_an_unavailable_model_with_backoff(fake_llm, settings):
    settings.LLM_MAX_RETRIES = 0
    paper = PaperFactory(abstract=ABSTRACT)
    fake_llm.answer("rate_limited")

    with pytest.raises(Retry) as retry:
        summarize_paper.apply(args=[paper.pk])

    assert isinstance(retry.value.exc, EnrichmentUnavailable)
    # Full jitter: anywhere from now up to the first backoff of 30 s.
    assert 0 <= retry.value.when <= 30
    assert summaries(paper) == {}


@pytest.mark.django_db(transaction=True)
def test_model_calls_start_the_rate_limit_apart_across_workers(settings, fake_llm):
    settings.SUMMARY_RATE_LIMIT = "120/m"  # 0.5 s apart
    papers = [PaperFactory(abstract=ABSTRACT) for _ in range(3)]

    def summarize(paper) -> None:
        try:
            enrich_paper(paper=paper)
        finally:
            connection.close()

    threads = [threading.Thread(target=summarize, args=(paper,)) for paper in papers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    starts = sorted(fake_llm.started)
    assert len(starts) == 3
    # Turns are given 0.5 s apart; each request then takes a moment to arrive.
    assert all(later - earlier >= 0.4 for earlier, later in itertools.pairwise(starts))


def test_queue_enrichment_runs_after_commit_for_papers_in_chosen_tags(
    settings, no_previews, django_capture_on_commit_callbacks
):
    settings.SUMMARY_AUTO = True
    settings.SUMMARY_AUTO_TAGS = ["reasoning"]
    tag = TagFactory(slug="reasoning")
    chosen = PaperFactory(abstract=ABSTRACT, tags=[tag])
    other = PaperFactory(abstract=ABSTRACT)

    with django_capture_on_commit_callbacks(execute=True):
        queue_enrichment([chosen.pk, other.pk])
        assert summaries(chosen) == {}

    assert set(summaries(chosen)) == {("en", "summary"), ("en", "takeaways")}
    assert summaries(other) == {}


def test_queue_enrichment_takes_every_paper_without_chosen_tags(
    settings, no_previews, django_capture_on_commit_callbacks
):
    settings.SUMMARY_AUTO = True
    settings.SUMMARY_AUTO_TAGS = []
    papers = PaperFactory.create_batch(2, abstract=ABSTRACT)

    with django_capture_on_commit_callbacks(execute=True):
        queue_enrichment([paper.pk for paper in papers])

    assert Summary.objects.filter(kind=Summary.Kind.SUMMARY).count() == 2


def test_queue_enrichment_does_nothing_when_switched_off(
    settings, no_previews, django_capture_on_commit_callbacks
):
    settings.SUMMARY_AUTO = False
    paper = PaperFactory(abstract=ABSTRACT)

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        queue_enrichment([paper.pk])

    assert callbacks == []
    assert summaries(paper) == {}


def test_queue_summaries_regenerates_on_request(django_capture_on_commit_callbacks):
    paper = PaperFactory(abstract=ABSTRACT)
    SummaryFactory(paper=paper, language="en", kind=Summary.Kind.SUMMARY, body="Old machine.")

    with django_capture_on_commit_callbacks(execute=True):
        queue_summaries(paper_ids=[paper.pk], regenerate=True)

    assert summaries(paper)["en", "summary"].backend == Summary.Backend.EXTRACTIVE


def test_admin_generate_action_fills_in_missing_summaries(
    admin_client, django_capture_on_commit_callbacks
):
    paper = PaperFactory(abstract=ABSTRACT)
    kept = SummaryFactory(paper=paper, language="en", kind=Summary.Kind.SUMMARY, body="Old.")

    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            reverse("admin:catalog_paper_changelist"),
            {"action": "generate_summaries", "_selected_action": [paper.pk]},
            follow=True,
        )

    assert "Queued 1 papers for summaries." in response.content.decode()
    stored = summaries(paper)
    assert stored["en", "summary"].body == "Old." and stored["en", "summary"].pk == kept.pk
    assert stored["en", "takeaways"].backend == Summary.Backend.EXTRACTIVE


@pytest.mark.parametrize(
    ("action", "curator_text_survives"),
    [
        ("regenerate_summaries", True),
        ("regenerate_summaries_overwriting_curator_edits", False),
    ],
)
def test_admin_regenerate_actions(
    admin_client, django_capture_on_commit_callbacks, action, curator_text_survives
):
    paper = PaperFactory(abstract=ABSTRACT)
    SummaryFactory(paper=paper, language="en", kind=Summary.Kind.SUMMARY, body="Old machine.")
    SummaryFactory(
        paper=paper,
        language="en",
        kind=Summary.Kind.TAKEAWAYS,
        body="1. Mine.",
        curator_edited=True,
    )

    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post(
            reverse("admin:catalog_paper_changelist"),
            {"action": action, "_selected_action": [paper.pk]},
        )

    stored = summaries(paper)
    assert stored["en", "summary"].body != "Old machine."
    assert (stored["en", "takeaways"].body == "1. Mine.") is curator_text_survives


def test_admin_edit_of_a_summary_text_marks_it_curator_edited(admin_client):
    summary = SummaryFactory(language="en", kind=Summary.Kind.SUMMARY, body="Machine words.")
    form = {
        "paper": summary.paper_id,
        "language": "en",
        "kind": "summary",
        "status": "published",
        "backend": "llm",
        "written_by": "test model",
        "model_name": "",
        "prompt_version": "",
    }
    url = reverse("admin:catalog_summary_change", args=[summary.pk])

    admin_client.post(url, {**form, "body": "Machine words."})
    summary.refresh_from_db()
    assert (summary.status, summary.curator_edited) == ("published", False)

    admin_client.post(url, {**form, "body": "A curator's words."})
    summary.refresh_from_db()
    assert (summary.body, summary.curator_edited) == ("A curator's words.", True)
