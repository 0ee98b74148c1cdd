"""The list's search brings the papers close in meaning beside those holding its words."""

import datetime

import pytest
from django.core import checks
from django.db import connection
from django.http import QueryDict
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from catalog.models import Paper
from catalog.selectors import filter_papers
from discovery import neighbours, search, vectors
from tests.factories import PaperFactory, TagFactory

pytestmark = pytest.mark.django_db

TOPICS = {
    "proteins": (
        "Protein folding with deep networks",
        "Amino acid chains fold into stable structures that enzymes need",
    ),
    "galaxies": (
        "Galaxy surveys and redshift",
        "Telescopes measure the light of distant galaxies across the sky",
    ),
    "compilers": (
        "Compiler optimisation passes",
        "Register allocation and loop unrolling make programs faster",
    ),
}


@pytest.fixture(autouse=True)
def vector_dir(settings, tmp_path):
    settings.VECTOR_DIR = tmp_path / "vectors"
    settings.EMBEDDING_BACKEND = "tfidf"
    settings.EMBEDDING_DIMENSIONS = 8
    search._index.clear()
    search._tfidf.clear()
    return settings.VECTOR_DIR


def topic_papers() -> dict[str, list[Paper]]:
    found = {}
    for topic, (title, abstract) in TOPICS.items():
        tag = TagFactory(name=topic.capitalize(), slug=topic)
        found[topic] = [
            PaperFactory(
                title=f"{title} part {n}",
                abstract=f"{abstract}. Variant {n} of the study.",
                tags=[tag] if n % 2 == 0 else [],
                published_at=timezone.now() - datetime.timedelta(days=2, hours=n),
            )
            for n in range(4)
        ]
    return found


def build() -> None:
    vectors.build_vectors(show_progress=False)
    neighbours.build_all(show_progress=False)


def listed(query: str, **more: str) -> list[Paper]:
    params = QueryDict(mutable=True)
    params["q"] = query
    for name, value in more.items():
        params[name] = value
    return list(filter_papers(params).qs)


def test_a_search_no_paper_holds_shows_the_papers_closest_in_meaning(client):
    papers = topic_papers()
    build()
    # No paper holds "xylophone": by its words the search finds nothing.
    found = listed("amino xylophone")
    assert found, "a search with no match is not a dead end"
    assert {paper.pk for paper in found[:4]} == {paper.pk for paper in papers["proteins"]}
    assert not any(paper.word_match for paper in found)

    page = client.get("/", {"q": "amino xylophone"}).content.decode()
    assert "these are the papers closest to it in meaning" in page
    assert page.count('class="match-reason"') == len(found)
    assert "Related in meaning" in page


def test_papers_holding_the_words_come_first_marked_and_the_related_after_them(client):
    papers = topic_papers()
    build()
    found = listed("telescopes")
    holding = [paper for paper in found if paper.word_match]
    assert {paper.pk for paper in holding} == {paper.pk for paper in papers["galaxies"]}
    assert found[: len(holding)] == holding
    page = client.get("/", {"q": "telescopes"}).content.decode()
    assert "<mark>Telescopes</mark>" in page
    assert page.count('class="match-reason"') == len(found) - len(holding)
    assert "these are the papers closest to it in meaning" not in page


def test_an_excluded_word_keeps_the_related_papers_that_hold_it_out():
    papers = topic_papers()
    build()
    found = {paper.pk for paper in listed("amino xylophone -enzymes")}
    assert not found & {paper.pk for paper in papers["proteins"]}


def test_filters_narrow_the_related_papers_too():
    papers = topic_papers()
    build()
    found = listed("amino xylophone", tag="proteins")
    tagged = [paper for n, paper in enumerate(papers["proteins"]) if n % 2 == 0]
    assert {paper.pk for paper in found} == {paper.pk for paper in tagged}


def test_sorted_newest_first_a_search_lists_only_the_papers_holding_its_words():
    topic_papers()
    build()
    assert listed("amino xylophone", sort="newest") == []
    found = listed("telescopes", sort="newest")
    assert len(found) == 4
    assert [paper.listed_at for paper in found] == sorted(
        (paper.listed_at for paper in found), reverse=True
    )


def test_without_an_index_a_search_is_by_its_words_alone():
    papers = topic_papers()
    found = listed("telescopes")
    assert {paper.pk for paper in found} == {paper.pk for paper in papers["galaxies"]}
    assert listed("amino xylophone") == []


def test_a_search_of_words_the_model_never_saw_has_no_neighbours():
    topic_papers()
    build()
    assert search.papers_near("xylophone ocarina", limit=10) == []
    assert search.papers_near("   ", limit=10) == []


def test_the_related_papers_cost_the_list_no_query(client, vector_dir):
    topic_papers()
    build()
    client.get("/", {"q": "telescopes"})  # the model and the index read once by the process
    with CaptureQueriesContext(connection) as hybrid:
        assert client.get("/", {"q": "telescopes"}).status_code == 200
    (vector_dir / neighbours.INDEX_FILE).unlink()
    with CaptureQueriesContext(connection) as lexical:
        assert client.get("/", {"q": "telescopes"}).status_code == 200
    assert 'class="match-reason"' not in client.get("/", {"q": "telescopes"}).content.decode()
    assert len(hybrid.captured_queries) == len(lexical.captured_queries)


@pytest.mark.parametrize(
    ("query", "topic"),
    [
        ("telecopes", "galaxies"),  # misspelt: the word it misspells stands for it
        ("supergalaxies", "galaxies"),  # a compound: the known word it ends with
        ("aminoacids folding", "proteins"),  # one known word, one it starts with
    ],
)
def test_a_word_the_model_never_saw_stands_for_the_known_words_like_it(query, topic):
    papers = topic_papers()
    build()
    found = listed(query)
    assert not any(paper.word_match for paper in found)
    assert {paper.pk for paper in found[:4]} == {paper.pk for paper in papers[topic]}


@pytest.mark.parametrize("query", ["-", '"', "or or", "-amino", '"amino acid', "a" * 300, "\x00"])
def test_any_search_is_answered(client, query):
    topic_papers()
    build()
    assert client.get("/", {"q": query}).status_code < 500


def test_the_check_names_a_setting_that_names_nothing(settings):
    settings.SEARCH_NEIGHBOURS = "discovery.search.nowhere"
    errors = [m for m in checks.run_checks() if m.id == "catalog.E003"]
    assert errors
    settings.SEARCH_NEIGHBOURS = "discovery.search.papers_near"
    assert not [m for m in checks.run_checks() if m.id == "catalog.E003"]


def test_the_apis_items_say_whether_the_words_or_the_meaning_found_them(client):
    papers = topic_papers()
    build()
    items = client.get("/api/v1/papers", {"q": "telescopes"}).json()["items"]
    galaxies = {paper.pk for paper in papers["galaxies"]}
    assert {item["id"] for item in items if item["matched"] == "words"} == galaxies
    assert all(item["matched"] == "meaning" for item in items if item["id"] not in galaxies)
    newest = client.get("/api/v1/papers", {"q": "telescopes", "sort": "newest"}).json()["items"]
    assert {item["id"] for item in newest} == galaxies
    assert not any("matched" in item for item in newest)
