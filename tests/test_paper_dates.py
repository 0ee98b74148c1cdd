"""Four dates a reader can trust: each named, the list's the same on the card and the page."""

import datetime
import re

import pytest

from tests.factories import PaperFactory

pytestmark = pytest.mark.django_db

UTC = datetime.UTC


def shown(html: str, css_class: str) -> str:
    """The text of the first element with css_class, tags stripped and spaces folded."""
    element = rf'class="[^"]*\b{css_class}\b[^"]*"[^>]*>(.*?)</(?:span|dt)>(?:<dd>(.*?)</dd>)?'
    match = re.search(element, html, re.S)
    assert match, css_class
    return " ".join(re.sub(r"<[^>]+>", " ", " ".join(filter(None, match.groups()))).split())


def test_the_card_and_the_page_show_the_date_the_list_sorts_by_under_its_name(client):
    PaperFactory(
        arxiv_id="2505.15034",
        version=3,
        published_at=datetime.datetime(2025, 5, 21, 17, 0, tzinfo=UTC),
        updated_at=datetime.datetime(2025, 7, 2, 9, 0, tzinfo=UTC),
        announced_at=datetime.datetime(2025, 5, 22, 0, 0, tzinfo=UTC),
        added_at=datetime.datetime(2025, 5, 22, 0, 5, tzinfo=UTC),
    )

    card = shown(client.get("/").content.decode(), "list-date")
    page_html = client.get("/papers/2505.15034/").content.decode()
    page = shown(page_html, "list-date")

    assert card == page == "First published 2025-05-21"
    facts = " ".join(re.sub(r"<[^>]+>", " ", page_html.split('class="facts"')[1]).split())
    assert "This version (v3) 2025-07-02" in facts
    assert "Announced 2025-05-22" in facts
    assert "Added here 2025-05-22" in facts


def test_the_sort_says_which_date_it_is(client):
    html = client.get("/").content.decode()

    assert re.search(r'<option value="newest"[^>]*>Newest first published</option>', html)


def test_a_listing_without_arxiv_data_is_dated_by_its_arrival_on_card_and_page(client):
    paper = PaperFactory(
        arxiv_id=None,
        published_at=None,
        updated_at=None,
        added_at=datetime.datetime(2025, 11, 5, 8, 0, tzinfo=UTC),
    )

    card = shown(client.get("/").content.decode(), "list-date")
    page = shown(client.get(paper.get_absolute_url()).content.decode(), "list-date")

    assert card == page == "Added here 2025-11-05"


def test_a_month_precise_date_is_shown_as_a_month_in_both_places(client):
    PaperFactory(
        arxiv_id="2505.15034",
        published_at=datetime.datetime(2025, 5, 1, tzinfo=UTC),
        published_precision="month",
        updated_at=None,
    )

    card = shown(client.get("/").content.decode(), "list-date")
    page = shown(client.get("/papers/2505.15034/").content.decode(), "list-date")

    assert card == page == "First published 2025-05"


def test_the_dates_are_translated(client):
    PaperFactory(arxiv_id="2505.15034", published_at=datetime.datetime(2025, 5, 21, tzinfo=UTC))

    card = shown(client.get("/", HTTP_ACCEPT_LANGUAGE="ko").content.decode(), "list-date")

    assert card == "최초 공개 2025-05-21"
