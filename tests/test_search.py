"""Search finds and orders the same papers on PostgreSQL and on the SQLite default.

The suite runs this file on PostgreSQL; `make test` runs it again on a bare
SQLite file, where the FTS5 index answers the same web-search syntax.
"""

import datetime

import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from catalog import filters
from catalog.models import Paper
from catalog.search import ensure_sqlite_index, parse_web_search
from tests.factories import PaperFactory

pytestmark = pytest.mark.django_db


def days_ago(days: float) -> datetime.datetime:
    return timezone.now() - datetime.timedelta(days=days)


def found(client, query: str, **params) -> list[str]:
    # A default value (sort=relevance with a search, page=1) is redirected to the clean address.
    response = client.get("/", {"q": query, **params}, follow=True)
    assert response.status_code == 200
    return [paper.title for paper in response.context["page"].object_list]


@pytest.fixture
def catalog():
    return [
        PaperFactory(
            title="Reward models for long answers",
            abstract="We train reward models on agentic tasks with tools.",
            published_at=days_ago(1),
        ),
        PaperFactory(
            title="Rewards without agents",
            abstract="Dense rewards for chain-of-thought math, scored per step.",
            authors=["Ada Lovelace"],
            published_at=days_ago(2),
        ),
        PaperFactory(
            title="Group relative policy optimization",
            abstract="GRPO drops the critic of PPO and compares samples within a group.",
            published_at=days_ago(3),
        ),
        PaperFactory(
            title="Proximal updates revisited",
            abstract="PPO with a learned value function remains a strong baseline.",
            authors=["Alan Turing"],
            published_at=days_ago(4),
        ),
        PaperFactory(
            title="Large language models as judges",
            abstract="Large language models grade answers; language models also lie.",
            published_at=days_ago(5),
        ),
    ]


def test_words_must_all_appear_and_match_other_forms_of_the_word(client, catalog):
    assert found(client, "reward models") == ["Reward models for long answers"]
    # "rewards" and "reward" share a stem, as in PostgreSQL's English configuration.
    assert found(client, "rewards") == ["Reward models for long answers", "Rewards without agents"]


def test_a_minus_excludes_a_word_and_its_forms(client, catalog):
    # "-agentic" also excludes "agents": both stem to "agent".
    assert found(client, "reward -agentic") == []
    assert found(client, "reward -tools") == ["Rewards without agents"]


def test_or_gives_alternatives(client, catalog):
    expected = ["Group relative policy optimization", "Proximal updates revisited"]
    assert found(client, "GRPO or PPO") == expected
    assert found(client, "grpo OR ppo") == expected


def test_quotes_ask_for_an_exact_phrase(client, catalog):
    assert found(client, '"language models also"') == ["Large language models as judges"]
    assert found(client, '"models language"') == []
    assert found(client, '"value function" -grpo') == ["Proximal updates revisited"]


def test_only_exclusions_find_everything_else(client, catalog):
    titles = found(client, "-reward -ppo")
    assert titles == ["Large language models as judges"]


def test_authors_are_searched(client, catalog):
    assert found(client, "lovelace") == ["Rewards without agents"]
    assert found(client, "turing or lovelace") == [
        "Rewards without agents",
        "Proximal updates revisited",
    ]


def test_stop_words_are_ignored_and_alone_find_nothing(client, catalog):
    assert found(client, "the rewards without the agents") == ["Rewards without agents"]
    assert found(client, "the") == []


@pytest.mark.parametrize(
    "query",
    [
        '"unclosed phrase',
        "NEAR(reward",
        "reward AND",
        "*",
        "^reward",
        "col:reward",
        '""',
        "-",
        "or",
    ],
)
def test_operator_characters_are_just_text(client, catalog, query):
    response = client.get("/", {"q": query})
    assert response.status_code == 200


def test_relevance_puts_title_matches_first(client):
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
    PaperFactory(title="Unrelated", abstract="Nothing to see.")

    newest = ["A survey of protein folding", "Verifier training with verifier feedback"]
    assert found(client, "verifier", sort="newest") == newest
    assert found(client, "verifier", sort="relevance") == newest[::-1]


def test_relevance_ranks_only_the_newest_matches_and_says_so(client, settings):
    settings.SEARCH_RELEVANCE_CANDIDATES = 2
    PaperFactory(title="Verifier verifier verifier", published_at=days_ago(40))
    PaperFactory(title="Once", abstract="A verifier.", published_at=days_ago(2))
    PaperFactory(title="Verifier feedback", published_at=days_ago(1))

    response = client.get("/?q=verifier&sort=relevance", follow=True)

    assert [p.title for p in response.context["page"].object_list] == ["Verifier feedback", "Once"]
    assert "Most relevant among the newest 2 matches." in response.content.decode()
    assert "Most relevant" not in client.get("/?q=verifier&sort=newest").content.decode()
    settings.SEARCH_RELEVANCE_CANDIDATES = 5
    uncapped = client.get("/?q=verifier&sort=relevance", follow=True)
    assert uncapped.context["page"].object_list[0].title == "Verifier verifier verifier"


def test_relevance_sort_pages_past_the_first(client, settings):
    settings.PAPERS_PER_PAGE = 2
    for n in range(5):
        PaperFactory(title=f"Verifier paper {n}", published_at=days_ago(n))

    response = client.get("/?q=verifier&sort=relevance&page=3", follow=True)

    assert len(response.context["page"].object_list) == 1


@pytest.mark.parametrize("few_matches", [10**9, -1])  # sorted, walked
def test_matches_are_newest_first_however_they_are_read(client, settings, monkeypatch, few_matches):
    """A search with few matches has PostgreSQL sort them instead of walking the
    newest papers (catalog.filters.FEW_SEARCH_MATCHES): the same list, paged alike."""
    monkeypatch.setattr(filters, "FEW_SEARCH_MATCHES", few_matches)
    settings.PAPERS_PER_PAGE = 2
    titles = [f"Verifier paper {n}" for n in range(5)]
    for n, title in enumerate(titles):
        PaperFactory(title=title, published_at=days_ago(n))
    PaperFactory(title="Unrelated")

    pages = [found(client, "verifier", sort="newest", page=n) for n in (1, 2, 3)]

    assert pages == [titles[0:2], titles[2:4], titles[4:5]]
    assert found(client, "verifier", sort="relevance") == titles[0:2]  # ties: newest first


def test_the_index_follows_every_write(client):
    paper = PaperFactory(title="Speculative decoding")
    assert found(client, "speculative") == ["Speculative decoding"]

    paper.title = "Lookahead decoding"
    paper.save()
    assert found(client, "speculative") == []
    assert found(client, "lookahead") == ["Lookahead decoding"]

    # A bulk write that never calls save(), as ingest does.
    Paper.objects.filter(pk=paper.pk).update(abstract="Medusa heads draft tokens.")
    assert found(client, "medusa") == ["Lookahead decoding"]

    paper.delete()
    assert found(client, "lookahead") == []


def test_the_demo_is_searchable_after_loading(client):
    call_command("load_demo", verbosity=0)

    assert len(found(client, "GRPO or PPO")) > len(found(client, "GRPO"))
    assert found(client, "reward -agentic")
    assert set(found(client, "reward -agentic")).isdisjoint(found(client, "agentic"))


def test_parsing_follows_websearch_to_tsquery():
    alternatives = parse_web_search('"large models" -agentic or ppo the')
    assert [[(t.words, t.excluded) for t in terms] for terms in alternatives] == [
        [(("large", "models"), False), (("agentic",), True)],
        [(("ppo",), False)],
    ]
    assert parse_web_search("or the or") == []


@pytest.mark.skipif(connection.vendor != "sqlite", reason="the FTS5 index is SQLite's")
def test_sqlite_index_is_rebuilt_when_a_schema_change_dropped_its_triggers(client):
    PaperFactory(title="Before the change")
    with connection.cursor() as cursor:
        # What Django's table rebuild for an ALTER on SQLite does to triggers.
        cursor.execute("DROP TRIGGER catalog_paper_fts_insert")
    PaperFactory(title="Written while the triggers were gone", published_at=days_ago(2))

    ensure_sqlite_index(using="default")  # run after every migrate

    assert found(client, "written") == ["Written while the triggers were gone"]
    PaperFactory(title="Written after", published_at=days_ago(1))
    assert found(client, "written") == ["Written after", "Written while the triggers were gone"]
