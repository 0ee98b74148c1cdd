import os
import subprocess
import sys

import pytest
from django.core.exceptions import ImproperlyConfigured

from enrichment.backends import get_backend
from enrichment.base import EnrichmentFailed, EnrichmentUnavailable
from enrichment.extractive import ExtractiveBackend
from enrichment.llm import LanguageModelBackend
from enrichment.prompt import PROMPT_VERSION
from tests.fake_llm_server import ABSTRACT, GOOD_ANSWER

TITLE = "StepCheck: verifying arithmetic reasoning step by step"


def enrich():
    return get_backend().enrich(title=TITLE, abstract=ABSTRACT)


def test_good_answer_gives_summary_takeaways_and_translations(fake_llm):
    result = enrich()

    assert result.summary == GOOD_ANSWER["summary"]
    assert result.takeaways == tuple(GOOD_ANSWER["takeaways"])
    assert result.translations == GOOD_ANSWER["translations"]
    (request,) = fake_llm.requests
    assert request["model"] == "fake-model-7b"
    assert request["response_format"] == {"type": "json_object"}
    prompt = request["messages"][-1]["content"]
    assert ABSTRACT in prompt and TITLE in prompt
    assert '"zh-hans" (Simplified Chinese)' in prompt and '"ko" (Korean)' in prompt


def test_backend_records_model_and_prompt_version(fake_llm):
    backend = get_backend()

    assert isinstance(backend, LanguageModelBackend)
    assert (backend.kind, backend.model_name, backend.prompt_version) == (
        "llm",
        "fake-model-7b",
        PROMPT_VERSION,
    )


def test_answer_wrapped_in_a_code_fence_is_accepted(fake_llm):
    fake_llm.answer("fenced")

    assert enrich().summary == GOOD_ANSWER["summary"]


def test_invalid_answer_is_asked_again(fake_llm):
    fake_llm.answer("malformed", "good")

    assert enrich().translations["ko"] == GOOD_ANSWER["translations"]["ko"]
    assert len(fake_llm.requests) == 2


@pytest.mark.parametrize(
    ("scenario", "reason"),
    [
        ("malformed", "not valid JSON"),
        ("empty", "the answer is empty"),
        ("truncated", "cut off at the token limit"),
        ("wrong_language_ko", "the ko translation is not in ko"),
        ("wrong_language_zh", "the zh-hans translation is not in zh-hans"),
        ("two_takeaways", "2 takeaways, expected 3 to 7"),
        ("eight_takeaways", "8 takeaways, expected 3 to 7"),
        ("long_summary", "the summary is too long"),
        ("missing_translation", "the ko translation is missing"),
    ],
)
def test_invalid_answers_fail_after_bounded_attempts(fake_llm, scenario, reason):
    fake_llm.answer(scenario, scenario, "good")

    with pytest.raises(EnrichmentFailed, match=reason):
        enrich()
    assert len(fake_llm.requests) == 2  # LLM_ATTEMPTS, never the third, good one


def test_rate_limited_request_is_retried_by_the_client(fake_llm):
    fake_llm.answer("rate_limited")

    assert enrich().summary == GOOD_ANSWER["summary"]
    assert len(fake_llm.requests) == 2


def test_persistent_rate_limit_is_unavailable_for_retrying_later(fake_llm):
    fake_llm.answer("rate_limited", "rate_limited")

    with pytest.raises(EnrichmentUnavailable):
        enrich()


def test_slow_answer_past_the_timeout_is_unavailable(fake_llm, settings):
    settings.LLM_MAX_RETRIES = 0
    fake_llm.answer("slow")

    with pytest.raises(EnrichmentUnavailable, match="unavailable"):
        enrich()


def test_refused_credentials_fail_with_the_status(fake_llm):
    fake_llm.answer("unauthorized")

    with pytest.raises(EnrichmentFailed, match="HTTP 401"):
        enrich()


def test_server_without_json_mode_is_asked_without_it(fake_llm):
    fake_llm.answer("no_json_mode", "no_json_mode", "no_json_mode")
    backend = get_backend()

    backend.enrich(title=TITLE, abstract=ABSTRACT)
    backend.enrich(title=TITLE, abstract=ABSTRACT)

    assert ["response_format" in body for body in fake_llm.requests] == [True, False, False]


def test_paper_without_abstract_is_not_sent(fake_llm):
    with pytest.raises(EnrichmentFailed, match="no abstract"):
        get_backend().enrich(title=TITLE, abstract="  ")
    assert fake_llm.requests == []


def test_openai_backend_needs_a_model(settings):
    settings.SUMMARY_BACKEND = "openai"
    settings.LLM_MODEL = ""

    with pytest.raises(ImproperlyConfigured, match="LLM_MODEL"):
        get_backend()


def test_unknown_backend_is_a_configuration_error(settings):
    settings.SUMMARY_BACKEND = "gpt"

    with pytest.raises(ImproperlyConfigured, match="extractive"):
        get_backend()


def test_extractive_backend_is_the_default_and_picks_abstract_sentences(settings):
    backend = get_backend()
    result = backend.enrich(title=TITLE, abstract=ABSTRACT)

    assert isinstance(backend, ExtractiveBackend)
    assert backend.kind == "extractive"
    sentences = [s.strip() for s in ABSTRACT.split(". ")]
    summary_sentences = result.summary.split(". ")
    assert len(summary_sentences) == 2
    assert all(s.rstrip(".") in ABSTRACT for s in summary_sentences)
    assert len(result.takeaways) == len(sentences) == 5
    assert all(takeaway in ABSTRACT for takeaway in result.takeaways)
    assert result.translations == {}


def test_extractive_backend_keeps_abbreviations_inside_sentences():
    abstract = (
        "We follow Smith et al. in training verifiers, e.g. for arithmetic. "
        "The verifier improves accuracy by 3.5 points. "
        "It transfers to code, cf. HumanEval. "
        "Errors concentrate early, see Fig. 2 for details."
    )

    result = ExtractiveBackend().enrich(title=TITLE, abstract=abstract)

    assert "We follow Smith et al. in training verifiers, e.g. for arithmetic." in result.takeaways
    assert "Errors concentrate early, see Fig. 2 for details." in result.takeaways


def test_extractive_backend_writes_no_takeaways_for_a_two_sentence_abstract():
    result = ExtractiveBackend().enrich(
        title=TITLE, abstract="We study verifiers. They help with arithmetic."
    )

    assert result.summary == "We study verifiers. They help with arithmetic."
    assert result.takeaways == ()


def test_extractive_backend_fails_without_abstract():
    with pytest.raises(EnrichmentFailed, match="no abstract"):
        ExtractiveBackend().enrich(title=TITLE, abstract="")


def test_the_backends_libraries_are_not_loaded_by_every_process():
    """nltk (with scipy and scikit-learn) and openai load when a backend is chosen,
    not at Django's setup, which every command and web process pays for."""
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, django; django.setup(); "
            "from django.core.management import call_command; call_command('check'); "
            "print(sorted({'nltk', 'openai', 'sklearn', 'scipy'} & set(sys.modules)))",
        ],
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "DEBUG": "1"},
        capture_output=True,
        text=True,
        check=True,
    )

    assert loaded.stdout.strip().splitlines()[-1] == "[]"
