"""A reader types in the search box and meets the names it may mean, in Chromium."""

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import policy_violations
from tests.factories import AuthorFactory, PaperFactory, TagFactory

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_typing_offers_tags_and_authors_and_a_click_opens_one(page):
    reasoning = TagFactory(name="Math_Reasoning", slug="math-reasoning")
    PaperFactory(title="Proofs checked step by step", tags=[reasoning], authors=["Rea Smith"])
    AuthorFactory(name="Someone Else")

    page.goto("/")
    page.locator("#header-q").press_sequentially("rea", delay=80)
    suggestions = page.locator("#search-suggestions a")
    expect(suggestions).to_have_count(2)
    expect(suggestions.first).to_have_text("Tag Math Reasoning")
    expect(suggestions.last).to_have_text("Author Rea Smith")

    # Away from the box the suggestions go; back in it, they are there again.
    page.locator("h1, h2").first.click()
    expect(page.locator("#search-suggestions .search-suggestions-list")).to_be_hidden()
    page.locator("#header-q").press("End")
    page.locator("#header-q").press_sequentially("x", delay=80)
    expect(suggestions).to_have_count(0)
    page.locator("#header-q").press("Backspace")
    expect(suggestions).to_have_count(2)

    suggestions.first.click()
    expect(page).to_have_url(re.compile(r"/tags/math-reasoning/$"))
    assert policy_violations(page) == []


def test_a_misspelt_name_is_asked_about_and_put_right(page):
    agents = TagFactory(name="Agents", slug="agents")
    PaperFactory(title="Tools for language agents", tags=[agents])

    # A search's first answer loads the search's libraries in the live server: given time.
    page.goto("/?q=agentss", timeout=60_000)
    notice = page.locator(".did-you-mean")
    expect(notice).to_contain_text("Did you mean Tag: Agents?")
    notice.get_by_role("link", name="Search for “agents” instead").click()
    expect(page.locator(".paper-title")).to_have_text(["Tools for language agents"])
