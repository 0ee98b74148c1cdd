"""The search box offers tags, categories and authors as a reader types, and a
search misspelling one of their names is asked whether it meant it.

The suite runs this file on PostgreSQL (trigram candidates); `make test` runs
it again on SQLite (the vocabulary read whole), where it must agree.
"""

import html

import pytest

from catalog.models import SearchTerm
from catalog.vocabulary import allowed_distance, did_you_mean, edit_distance, typed_terms
from tests.factories import AuthorFactory, CategoryFactory, PaperFactory, TagFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def vocabulary():
    rl = TagFactory(name="Reinforcement_Learning", slug="reinforcement-learning")
    TagFactory(name="Agents", slug="agents")
    CategoryFactory(code="cs.CL", name="Computation and Language")
    CategoryFactory(code="cs.LG", name="Machine Learning")
    bengio = AuthorFactory(name="Yoshua Bengio")
    PaperFactory(
        title="Policy gradients for reasoning",
        abstract="Reinforcement learning improves reasoning.",
        tags=[rl],
        authors=["Yoshua Bengio"],
    )
    return {"author": bengio}


def shown(terms: list[SearchTerm]) -> list[tuple[str, str]]:
    return [(term.kind, term.shown) for term in terms]


def test_the_vocabulary_holds_every_tag_category_and_unmerged_author(vocabulary):
    kept = AuthorFactory(name="Ada Lovelace")
    AuthorFactory(name="A. Lovelace", merged_into=kept)
    terms = {(term.kind, term.label, term.normalized) for term in SearchTerm.objects.all()}
    assert ("tag", "Reinforcement_Learning", "reinforcement learning") in terms
    assert ("category", "cs.CL", "cs.cl") in terms
    assert ("category", "Computation and Language", "computation and language") in terms
    assert ("author", "Yoshua Bengio", "yoshua bengio") in terms
    assert ("author", "Ada Lovelace", "ada lovelace") in terms
    assert not any(label == "A. Lovelace" for _, label, _ in terms)
    assert SearchTerm.objects.get(kind="author", key=kept.slug).get_absolute_url() == (
        f"/authors/{kept.slug}/"
    )


def test_typing_offers_tags_then_categories_then_authors(vocabulary):
    assert shown(typed_terms("lea")) == [
        ("tag", "Reinforcement Learning"),
        ("category", "Machine Learning"),
    ]
    assert shown(typed_terms("  YOSH")) == [("author", "Yoshua Bengio")]
    assert shown(typed_terms("cs.c")) == [("category", "cs.CL")]
    # Any word's start, never the middle of a word.
    assert typed_terms("earning") == []
    assert typed_terms("a") == []


def test_the_suggestions_fragment_links_each_term(client, vocabulary, django_assert_num_queries):
    with django_assert_num_queries(1):  # the vocabulary's terms starting as typed
        response = client.get("/search/suggestions/", {"q": "ben"})
    assert response.status_code == 200
    page = html.unescape(response.content.decode())
    assert f'href="/authors/{vocabulary["author"].slug}/"' in page
    assert "Author</span> Yoshua Bengio" in page
    empty = client.get("/search/suggestions/", {"q": "zz"})
    assert empty.status_code == 200
    assert "<li>" not in empty.content.decode()
    assert client.get("/search/suggestions/").status_code == 200
    assert client.get("/search/suggestions/", {"q": "x" * 5000}).status_code == 200


def test_suggestions_are_kept_in_the_catalog_cache(
    client, vocabulary, redis_cache, django_assert_num_queries
):
    client.get("/search/suggestions/", {"q": "agen"})
    with django_assert_num_queries(0):
        response = client.get("/search/suggestions/", {"q": "Agen"})
    assert "Agents" in response.content.decode()


def test_the_search_box_asks_for_suggestions_as_one_types(client, vocabulary):
    page = client.get("/").content.decode()
    assert 'hx-get="/search/suggestions/"' in page
    assert 'id="search-suggestions"' in page


@pytest.mark.parametrize(
    ("query", "terms", "corrected"),
    [
        (
            "reinforcment learning for reasoning",
            [("tag", "Reinforcement Learning")],
            "reinforcement learning for reasoning",
        ),
        ("Yoshua Bengoi", [("author", "Yoshua Bengio")], "yoshua bengio"),
        (
            "computation and langage",
            [("category", "Computation and Language")],
            "computation and language",
        ),
        (
            '"reinforcment learning" or agentss',
            [("tag", "Reinforcement Learning"), ("tag", "Agents")],
            '"reinforcement learning" or agents',
        ),
        # The tag is the word in another form: offered, but the search is already right.
        ("multi-agent debate", [("tag", "Agents")], ""),
        # Named exactly, spelt right, or not near any name: nothing to suggest.
        ("cs.CL", [], ""),
        ("Reinforcement Learning", [], ""),
        ("policy gradients", [], ""),
        # An author is asked about by a name as written, not by one word of it.
        ("Bengoi", [], ""),
        # An excluded word is not asked about.
        ("policy -agentss", [], ""),
    ],
)
def test_did_you_mean(vocabulary, query, terms, corrected):
    suggested = did_you_mean(query)
    assert shown(suggested.terms) == terms
    assert suggested.corrected == corrected


def test_a_misspelt_search_shows_did_you_mean_with_links(client, vocabulary):
    response = client.get("/", {"q": "reinforcment learning"})
    page = html.unescape(response.content.decode())
    assert "Did you mean" in page
    assert 'href="/tags/reinforcement-learning/">Tag: Reinforcement Learning</a>' in page
    assert 'href="?q=reinforcement+learning">Search for “reinforcement learning” instead' in page
    # The list keeps the filters: the corrected search on the tag's own page.
    tag_page = client.get("/tags/agents/", {"q": "reinforcment learning", "has_code": "1"})
    assert "?has_code=1&amp;q=reinforcement+learning" in tag_page.content.decode()
    assert "Did you mean" not in client.get("/", {"q": "reinforcement learning"}).content.decode()


def test_a_short_name_must_be_spelt_exactly():
    assert allowed_distance("rl") == 0
    assert allowed_distance("agents") == 1
    assert allowed_distance("reinforcement") == 2
    assert allowed_distance("retrieval augmented generation") == 3
    assert edit_distance("bengoi", "bengio") == 2
    assert edit_distance("", "abc") == 3
