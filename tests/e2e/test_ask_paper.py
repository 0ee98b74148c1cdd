"""A reader asks a paper a question in Chromium: the answer shows as the model
writes it, then its quotes link to their paragraphs in the Read view; without
a model the passages come marked. axe finds nothing on the page either way."""

import re
import threading

import pytest
from playwright.sync_api import expect

from catalog.models import FullText
from enrichment.fulltext import ParsedSection, ParsedText, store_fulltext
from tests.accounts_factories import UserFactory
from tests.e2e.conftest import log_in, policy_violations
from tests.e2e.test_accessibility import violations
from tests.factories import PaperFactory

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

GSM8K = "StepCheck improves accuracy by 7.2 points over self-consistency on GSM8K."
GOOD = (
    "StepCheck raises accuracy on GSM8K by 7.2 points "
    '[1: "improves accuracy by 7.2 points over self-consistency"].'
)


@pytest.fixture
def paper():
    paper = PaperFactory(title="StepCheck: verifying reasoning step by step")
    parsed = ParsedText(
        source=FullText.Source.HTML,
        sections=[
            ParsedSection(
                heading="1 Introduction",
                level=1,
                paragraphs=[
                    "We propose StepCheck, a verifier trained on ten thousand reasoning traces.",
                    "Each StepCheck call costs $O(n)$ for a trace of $n$ steps.",
                    *[f"Background paragraph {n} on arithmetic." for n in range(30)],
                ],
            ),
            ParsedSection(heading="4 Experiments", level=1, paragraphs=[GSM8K]),
        ],
    )
    store_fulltext(paper=paper, parsed=parsed, pictures=[])
    return paper


def ask(page, question: str) -> None:
    page.fill("#ask-question", question)
    page.get_by_role("button", name="Ask", exact=True).click()


def test_the_answer_shows_as_it_is_written_and_its_quote_leads_to_the_passage(
    page, live_server, paper, fake_llm
):
    fake_llm.say(GOOD)
    fake_llm.hold = threading.Event()
    log_in(page, live_server, UserFactory())
    page.goto(paper.get_absolute_url())

    ask(page, "How much does StepCheck improve accuracy on GSM8K?")

    # The model's first words are on the page while it still writes.
    expect(page.locator(".answer-draft")).to_have_text(GOOD[:12])
    fake_llm.hold.set()
    quote = page.locator(".answer-quote a")
    expect(quote).to_have_text("improves accuracy by 7.2 points over self-consistency")
    expect(page.locator(".answer-draft")).to_have_count(0)
    assert violations(page) == []
    page.emulate_media(color_scheme="dark")
    assert violations(page) == []
    assert policy_violations(page) == []

    quote.click()
    page.wait_for_url(f"**/papers/{paper.arxiv_id}/read/#section-2-paragraph-1")
    expect(page.locator("#section-2-paragraph-1")).to_have_text(GSM8K)
    assert page.evaluate("document.querySelector(':target').id") == "section-2-paragraph-1"


def test_without_a_model_the_reader_gets_the_passages_marked(page, live_server, paper, settings):
    settings.LLM_MODEL = ""
    page.set_viewport_size({"width": 390, "height": 844})
    log_in(page, live_server, UserFactory())
    page.goto(paper.get_absolute_url())
    assert violations(page) == []

    ask(page, "What does StepCheck improve?")

    expect(page.locator(".answer-notice")).to_contain_text("No language model answers")
    expect(page.locator(".answer-passages mark").first).to_have_text("StepCheck improves")
    # A passage's math is typeset as the page's own is, once it nears the screen.
    math = page.locator(".answer-passages .math").first
    math.scroll_into_view_if_needed()
    expect(math).to_have_class(re.compile("is-typeset"))
    expect(math.locator(".katex")).to_have_count(1)
    assert violations(page) == []
    assert policy_violations(page) == []
