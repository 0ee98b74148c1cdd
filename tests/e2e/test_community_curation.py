"""Curation as a community runs it, in Chromium: a curator adds three papers by URL with a
tag, approves a reader's suggestion and publishes a paper from the review inbox, and an
anonymous reader, served from the Redis catalog cache, sees all of it at once."""

import pytest
from lxml import etree
from playwright.sync_api import expect

from ingest import runs
from tests.accounts_factories import PASSWORD, CuratorFactory, UserFactory
from tests.arxiv_server import ATOM, entry_id
from tests.e2e.conftest import policy_violations
from tests.factories import PaperFactory, TagFactory
from tests.ingest_factories import IngestSourceFactory

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def title_of(entry: str) -> str:
    return " ".join(etree.fromstring(entry).findtext(f"{ATOM}title").split())


def new_page(browser, live_server):
    context = browser.new_context(base_url=live_server.url, locale="en-US")
    context.set_default_timeout(15_000)
    return context.new_page()


def test_a_curator_adds_approves_and_publishes_and_anonymous_readers_see_it_at_once(
    browser, live_server, page, fake_arxiv, redis_cache
):
    entries = fake_arxiv.entries
    # The inbox paper: the newest entry, brought by a source that needs review.
    runs.run_source(source=IngestSourceFactory(needs_review=True, max_results=1))
    inbox_title = title_of(entries[0])
    by_link = entries[5:8]
    suggested = entries[10]
    TagFactory(name="Software_Testing", slug="software-testing")
    curator = CuratorFactory()
    reader = UserFactory()
    PaperFactory(title="Already in the catalog")
    new_titles = [title_of(e) for e in (*by_link, suggested)] + [inbox_title]

    anonymous = new_page(browser, live_server)
    anonymous.goto("/")
    expect(anonymous.locator(".paper-title")).to_have_text(["Already in the catalog"])

    # A reader suggests a paper from the header.
    reader_page = new_page(browser, live_server)
    reader_page.goto("/accounts/login/")
    reader_page.fill("input[name=login]", reader.email)
    reader_page.fill("input[name=password]", PASSWORD)
    reader_page.locator("form:has(input[name=password]) [type=submit]").click()
    reader_page.get_by_role("link", name="Suggest a paper").click()
    reader_page.fill("input[name=link]", f"https://arxiv.org/abs/{entry_id(suggested)}")
    reader_page.fill("textarea[name=note]", "Good testing benchmark")
    reader_page.get_by_role("button", name="Send suggestion").click()
    expect(reader_page.locator(".messages")).to_contain_text("the curators will look at")
    expect(reader_page.locator("#my-suggestions")).to_contain_text("Waiting for a curator")

    # The curator logs in to the admin and adds three papers by URL with a tag.
    page.goto("/admin/")
    page.fill("#id_username", curator.username)
    page.fill("#id_password", PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.goto("/admin/catalog/paper/")
    page.get_by_role("link", name="Add papers by link").click()
    first, second, third = (entry_id(e) for e in by_link)
    page.fill(
        "textarea[name=text]",
        f"https://arxiv.org/abs/{first}\n"
        f"https://arxiv.org/pdf/{second}v1.pdf, https://huggingface.co/papers/{third}",
    )
    page.locator(".field-tags .select2-selection").click()
    page.locator(".select2-search__field").fill("Software")
    page.locator(".select2-results__option", has_text="Software_Testing").click()
    page.get_by_role("button", name="Add papers").click()
    expect(page.locator("#link-request-done")).to_contain_text("added 3")
    expect(page.locator("#link-request-lines tbody tr")).to_have_count(3)
    assert policy_violations(page) == []

    # It approves the reader's suggestion.
    page.goto("/admin/curation/suggestedpaper/")
    page.locator("tr", has_text=entry_id(suggested)).locator("input.action-select").check()
    page.select_option("select[name=action]", "approve")
    page.get_by_role("button", name="Go").click()
    expect(page.locator(".messagelist")).to_contain_text("Adding 1 papers from arXiv")
    page.get_by_role("link", name="follow the progress").click()
    expect(page.locator("#link-request-done")).to_contain_text("added 1")

    # It publishes the paper waiting in the review inbox.
    page.goto("/admin/ingest/inboxentry/")
    page.locator("tr", has_text=inbox_title[:40]).locator("input.action-select").check()
    page.select_option("select[name=action]", "publish_with_tags")
    page.get_by_role("button", name="Go").click()
    expect(page.locator(".messagelist")).to_contain_text("Published 1 papers.")
    assert policy_violations(page) == []

    # The anonymous reader sees everything at once, though pages come from the cache.
    anonymous.goto("/")
    expect(anonymous.locator(".paper-title")).to_have_count(len(new_titles) + 1)
    for title in new_titles:
        expect(anonymous.locator(".paper-title", has_text=title[:40])).to_have_count(1)
    anonymous.goto("/tags/software-testing/")
    expect(anonymous.locator(".paper-title")).to_have_count(3)

    reader_page.goto("/suggest/")
    expect(reader_page.locator("#my-suggestions")).to_contain_text(title_of(suggested)[:40])
    expect(reader_page.locator("#my-suggestions")).to_contain_text("Added")
