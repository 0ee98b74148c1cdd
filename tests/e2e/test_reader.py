"""A reader browses the catalog in Chromium: filters, search, abstracts, a paper, languages."""

import datetime

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from tests.e2e.conftest import policy_violations
from tests.factories import PaperFactory, TagFactory

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
LONG_ABSTRACT = " ".join(
    f"Sentence {n} explains one more step of how the model reasons." for n in range(40)
)


def days_ago(days: int) -> datetime.datetime:
    return timezone.now() - datetime.timedelta(days=days)


@pytest.fixture
def catalog():
    reasoning = TagFactory(name="Reasoning", slug="reasoning")
    agents = TagFactory(name="Agents", slug="agents")
    return {
        "recent": PaperFactory(
            title="Chains of thought that check themselves",
            abstract=LONG_ABSTRACT,
            tags=[reasoning],
            published_at=days_ago(2),
        ),
        "old": PaperFactory(
            title="An older look at reasoning", tags=[reasoning], published_at=days_ago(200)
        ),
        "agents": PaperFactory(
            title="Benchmarks for tool-using agents", tags=[agents], published_at=days_ago(3)
        ),
    }


def titles(page) -> list[str]:
    return page.locator(".paper-title").all_inner_texts()


def test_reader_filters_searches_reads_and_switches_language(page, catalog):
    recent, old, agents = catalog["recent"].title, catalog["old"].title, catalog["agents"].title

    page.goto("/")
    assert set(titles(page)) == {recent, old, agents}

    # Each filter applies as it changes, no Apply needed.
    page.fill("#id_tag-search", "reason")
    page.press("#id_tag-search", "Enter")
    expect(page.locator(".active-filters")).to_contain_text("Reasoning")
    page.select_option("#id_period", "30d")
    expect(page.locator(".active-filters")).to_contain_text("Last 30 days")
    assert titles(page) == [recent]

    page.get_by_role("link", name="Remove Period Last 30 days").click()
    expect(page.locator(".active-filters")).not_to_contain_text("Last 30 days")
    assert titles(page) == [recent, old]

    page.fill("#header-q", "benchmarks")
    page.press("#header-q", "Enter")
    expect(page.locator(".active-filters")).to_contain_text("benchmarks")
    assert titles(page) == [agents]

    page.goto("/")
    entry = page.locator(".paper-card", has_text=recent)
    abstract = entry.locator(".abstract")
    clamped_height = abstract.bounding_box()["height"]
    entry.get_by_text("Show full abstract").click()
    expect(entry.get_by_text("Show less")).to_be_visible()
    assert abstract.bounding_box()["height"] > 2 * clamped_height

    entry.get_by_role("link", name=recent).click()
    expect(page.locator("h1")).to_have_text(recent)
    paper_url = page.url

    page.select_option("#language-select", "ko")
    expect(page.locator("html")).to_have_attribute("lang", "ko")
    assert page.url == paper_url
    expect(page.locator("h1")).to_have_text(recent)
    assert policy_violations(page) == []
