"""Names and dates as a researcher reads them: tags by their display names,
categories named beside their codes, a card's date the first published one with
a later version's beside it, and written-out web addresses as links."""

import datetime

import pytest
from django.utils import timezone

from tests.factories import CategoryFactory, PaperFactory, TagFactory

pytestmark = pytest.mark.django_db


def test_tags_read_by_their_names_everywhere(client):
    tag = TagFactory(name="R1_Reasoning", slug="r1-reasoning", description="")
    PaperFactory(tags=[tag])

    listed = client.get("/?tag=r1-reasoning").content.decode()
    index = client.get("/tags/").content.decode()
    page = client.get("/tags/r1-reasoning/").content.decode()

    assert 'href="/tags/r1-reasoning/">R1 Reasoning</a>' in listed  # the card's chip
    assert '<option value="r1-reasoning" selected>R1 Reasoning</option>' in listed
    assert "Tags: <strong>R1 Reasoning</strong>" in listed  # the active filter
    assert ">R1 Reasoning</a>" in index
    assert "<h1>R1 Reasoning</h1>" in page
    assert "R1_Reasoning" not in listed + index + page


def test_categories_are_named_beside_their_codes(client):
    category = CategoryFactory(code="cs.CL", name="Computation and Language")
    paper = PaperFactory(primary_category=category)

    listed = client.get("/?category=cs.CL").content.decode()
    page = client.get(paper.get_absolute_url()).content.decode()

    shown = (
        '<span class="category-code">cs.CL</span>'
        ' <span class="category-name">Computation and Language</span>'
    )
    assert shown in listed and shown in page
    assert '<option value="cs.CL" selected>cs.CL Computation and Language</option>' in listed


def test_a_card_shows_first_publication_with_a_later_versions_date(client):
    first = timezone.make_aware(datetime.datetime(2025, 5, 21, 17, 0))
    PaperFactory(version=3, published_at=first, updated_at=first + datetime.timedelta(days=12))
    PaperFactory(version=1, published_at=first, updated_at=first)

    html = client.get("/").content.decode()

    assert (
        'First published <time datetime="2025-05-21T17:00:00+00:00">2025-05-21</time></span>'
        '<span class="version-date">v3 <time datetime="2025-06-02T17:00:00+00:00">'
        "2025-06-02</time></span>"
    ) in html
    assert html.count('class="version-date"') == 1


def test_added_here_only_for_a_paper_with_no_other_date(client):
    PaperFactory(arxiv_id=None, published_at=None, updated_at=None)
    PaperFactory()

    html = client.get("/").content.decode()

    assert html.count("Added here <time") == 1
    assert html.count("First published <time") == 1


def test_web_addresses_in_abstracts_are_links_and_titles_stay_one_link(client):
    paper = PaperFactory(
        title="See https://example.org/title",
        abstract="Code at https://github.com/org/repo. Data (https://example.org/a_(b)).",
    )

    card = client.get("/").content.decode()
    page = client.get(paper.get_absolute_url()).content.decode()

    for html in (card, page):
        assert '<a href="https://github.com/org/repo" rel="nofollow noopener">' in html
        assert '<a href="https://example.org/a_(b)" rel="nofollow noopener">' in html
    assert 'href="https://example.org/title"' not in card
