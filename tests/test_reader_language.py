"""The reader's language first: where a paper has a published summary or
translation in the interface language, its card and its page lead with it and
the English abstract follows."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from catalog.models import Summary
from tests.factories import PaperFactory, SummaryFactory

pytestmark = pytest.mark.django_db

ABSTRACT = "We train a verifier and a generator together by reinforcement learning."


@pytest.fixture
def paper():
    paper = PaperFactory(arxiv_id="2505.15034", abstract=ABSTRACT)
    SummaryFactory(paper=paper, language="zh-hans", kind=Summary.Kind.SUMMARY, body="中文摘要。")
    SummaryFactory(
        paper=paper, language="zh-hans", kind=Summary.Kind.TRANSLATION, body="中文译文。"
    )
    SummaryFactory(paper=paper, language="ko", kind=Summary.Kind.TRANSLATION, body="한국어 번역.")
    SummaryFactory(
        paper=paper, language="ko", kind=Summary.Kind.SUMMARY, body="초안", status="draft"
    )
    return paper


def card(client, language: str) -> str:
    html = client.get("/", HTTP_ACCEPT_LANGUAGE=language).content.decode()
    start = html.index('<article class="paper-card')
    return html[start : html.index("</article>", start)]


def test_a_chinese_reader_meets_the_chinese_summary_first_on_a_card(client, paper):
    html = card(client, "zh-hans")

    assert html.index("中文摘要。") < html.index(ABSTRACT)
    assert '<div class="lead-text" lang="zh-hans">' in html
    assert "中文译文。" not in html  # the summary is preferred to the translation
    # The English abstract is folded after it, in its own language.
    assert '<details class="english-abstract">' in html
    assert f'<p class="abstract" lang="en">{ABSTRACT}</p>' in html


def test_a_korean_reader_meets_the_published_translation_first(client, paper):
    html = card(client, "ko")

    assert html.index("한국어 번역.") < html.index(ABSTRACT)
    assert "초안" not in html  # a draft is never shown


def test_an_english_reader_meets_the_abstract(client, paper):
    html = card(client, "en")

    assert "lead-text" not in html and "中文" not in html
    assert f">{ABSTRACT}</p>" in html


def test_a_language_without_a_summary_shows_the_abstract(client):
    PaperFactory(abstract=ABSTRACT)
    assert "lead-text" not in card(client, "zh-hans")


def test_the_paper_page_leads_with_the_readers_language(client, paper):
    def page(language: str) -> str:
        html = client.get(paper.get_absolute_url(), HTTP_ACCEPT_LANGUAGE=language).content.decode()
        return html[html.index("<main") :]  # the head's description quotes the abstract

    chinese, english = page("zh-hans"), page("en")

    assert chinese.index("中文摘要。") < chinese.index("中文译文。") < chinese.index(ABSTRACT)
    assert chinese.index(ABSTRACT) < chinese.index("한국어 번역.")  # other languages after
    assert english.index(ABSTRACT) < english.index("中文摘要。")


def test_the_lead_costs_no_query_of_its_own(client, paper):
    # The summary is a column of the page's own rows (catalog.selectors.for_cards).
    def queries(language: str) -> list[str]:
        with CaptureQueriesContext(connection) as captured:
            assert client.get("/", HTTP_ACCEPT_LANGUAGE=language).status_code == 200
        return [query["sql"] for query in captured.captured_queries]

    english, chinese = queries("en"), queries("zh-hans")

    assert len(chinese) == len(english)
    assert "catalog_summary" in chinese[0] and "catalog_summary" not in english[0]
