"""A search's results page: relevance first, the matched words marked in titles
and in a snippet cut around the best match, "N results for …", one search box.

Like tests/test_search.py, `make test` runs this file on PostgreSQL and again on
SQLite: both databases mark the same words with the same markup.
"""

import datetime
import re

import pytest
from django.utils import timezone

from catalog.highlight import CLOSE, OPEN, snippet
from tests.factories import PaperFactory, TagFactory

pytestmark = pytest.mark.django_db

MARK = re.compile(r"<mark>(.*?)</mark>")


def days_ago(days: float) -> datetime.datetime:
    return timezone.now() - datetime.timedelta(days=days)


def card(html: str, paper) -> str:
    start = html.index(f'id="paper-{paper.pk}"')
    return html[start : html.index("</article>", start)]


def test_a_search_is_sorted_by_relevance_and_newest_first_on_request(client):
    PaperFactory(
        title="A survey of protein folding",
        abstract="Verifier models appear once here.",
        published_at=days_ago(1),
    )
    PaperFactory(
        title="Verifier training with verifier feedback",
        abstract="We train a verifier.",
        published_at=days_ago(30),
    )

    best = client.get("/?q=verifier")
    newest = client.get("/?q=verifier&sort=newest")

    assert [p.title for p in best.context["page"].object_list] == [
        "Verifier training with verifier feedback",
        "A survey of protein folding",
    ]
    assert newest.context["page"].object_list[0].title == "A survey of protein folding"
    menu = best.content.decode()
    assert '<option value="relevance">Best match</option>' in menu
    assert menu.index('value="relevance"') < menu.index('value="newest"')


def test_without_a_search_the_menu_offers_no_relevance(client):
    PaperFactory()
    html = client.get("/").content.decode()
    assert 'value="relevance"' not in html
    assert '<option value="newest">Newest first published</option>' in html


def test_the_heading_counts_the_results_and_names_the_search(client):
    PaperFactory.create_batch(2, title="Verifier papers")
    PaperFactory(title="Other")

    html = client.get("/?q=verifier").content.decode()

    assert "<h1>2 results for “verifier”</h1>" in html
    assert "Latest papers" not in html
    assert "<title>2 results for “verifier” · " in html


def test_matched_words_are_marked_in_the_title_and_abstract_in_every_form(client):
    paper = PaperFactory(
        title="Rewarding reasoning with process rewards",
        abstract="A reward model scores each step; rewards are dense.",
    )

    html = card(client.get("/?q=rewards").content.decode(), paper)

    # Both databases stem "rewards", "reward" and "rewarding" alike.
    assert MARK.findall(html) == ["Rewarding", "rewards", "reward", "rewards"]


def test_a_phrase_is_marked_as_one_run(client):
    paper = PaperFactory(title="Large language models as judges", abstract="Nothing more.")

    html = card(client.get('/?q="language models"').content.decode(), paper)

    assert MARK.findall(html) == ["language models"]


def test_the_snippet_is_cut_around_the_best_match(client):
    filler = "The method is described at length in this part of the text. " * 12
    paper = PaperFactory(
        title="A long paper",
        abstract=filler + "Our verifier catches every verifier error. " + filler,
    )

    html = card(client.get("/?q=verifier").content.decode(), paper)

    snippet_html = re.search(r'<p class="abstract snippet">(.*?)</p>', html, re.S).group(1)
    marked = "… Our <mark>verifier</mark> catches every <mark>verifier</mark>"
    assert snippet_html.startswith(marked)
    assert snippet_html.endswith(" …")
    assert len(re.sub(r"<[^>]+>", "", snippet_html)) < 300
    # The whole abstract, marked, is there for "Show full abstract".
    assert html.count("<mark>verifier</mark>") == 4
    assert f'for="abstract-toggle-{paper.pk}"' in html


def test_marks_never_break_escaping_or_math(client):
    paper = PaperFactory(
        title=r"Scaling <b>verifier</b> heads in $\mathcal{O}(n)$ verifier time",
        abstract=r"A verifier for $x_{verifier}$ & <script>alert(1)</script> verifier.",
    )

    html = card(client.get("/?q=verifier").content.decode(), paper)

    assert "<script>" not in html and "<b>" not in html
    assert "&lt;b&gt;<mark>verifier</mark>&lt;/b&gt;" in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    # Math stays whole and unmarked, for KaTeX.
    assert r'<span class="math">\mathcal{O}(n)</span>' in html
    assert '<span class="math">x_{verifier}</span>' in html
    assert html.count("<mark>") == html.count("</mark>")


def test_only_the_rows_shown_are_marked(client, settings):
    settings.PAPERS_PER_PAGE = 2
    for n in range(3):
        PaperFactory(title=f"Verifier {n}", published_at=days_ago(n))

    response = client.get("/?q=verifier&page=2")

    (shown,) = response.context["page"].object_list
    assert OPEN in shown.title_marked and CLOSE in shown.title_marked


def test_the_search_box_searches_the_list_it_is_on(client):
    tag = TagFactory(name="R1_Reasoning", slug="r1-reasoning")
    PaperFactory(title="Verifier inside", tags=[tag])
    PaperFactory(title="Verifier outside")

    in_tag = client.get("/tags/r1-reasoning/?q=verifier").content.decode()
    everywhere = client.get("/?q=verifier&tag=r1-reasoning").content.decode()

    assert in_tag.count('type="search"') == 1  # one search box
    assert 'action="/tags/r1-reasoning/"' in in_tag
    assert "1 result for “verifier”" in in_tag
    assert 'href="/?q=verifier">Search all papers instead</a>' in in_tag
    # On the home page a new search starts afresh, its filters in the panel's form.
    assert 'action="/" method="get" role="search"' in everywhere
    assert "Search all papers instead" not in everywhere


def test_a_snippet_without_a_match_is_the_abstract_as_usual():
    assert snippet("No marks at all.") is None
    assert snippet(None) is None
    whole = snippet(f"Short {OPEN}abstract{CLOSE}.")
    assert whole.html == "Short <mark>abstract</mark>." and not whole.cut


def test_the_snippet_holds_most_of_the_words_before_one_word_repeated():
    def marked(word: str) -> str:
        return f"{OPEN}{word}{CLOSE}"

    repeated = " ".join([f"The {marked('model')} is a {marked('model')} again."] * 6)
    filler = "The runs are averaged over five seeds with the usual splits. " * 6
    both = f"Its {marked('sparsemax')} layer keeps the {marked('model')} sparse."

    cut = snippet(f"{repeated} {filler} {both} {filler}")

    assert "<mark>sparsemax</mark>" in cut.html and cut.cut
