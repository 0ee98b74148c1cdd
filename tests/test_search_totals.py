"""A long search's total is estimated honestly: a phrase's from a sample of the
catalog, since PostgreSQL's planner weighs only the phrase's words (two common
words in most papers, the phrase in few)."""

import re

import pytest
from django.db import connection

from catalog import pagination
from tests.factories import PaperFactory

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="SQLite counts every list exactly"
    ),
]


@pytest.fixture
def catalog(monkeypatch):
    """400 papers, all with both words, one in four with them as the phrase,
    spread over the ids as a catalog's are; totals past 40 estimated, from a
    sample of 100 papers."""
    monkeypatch.setattr(pagination, "EXACT_COUNT_LIMIT", 40)
    monkeypatch.setattr(pagination, "SAMPLE_PAPERS", 100)
    for n in range(400):
        if n % 4 == 0:
            PaperFactory(title=f"Paper {n}", abstract="We study large language models at scale.")
        else:
            PaperFactory(title=f"Paper {n}", abstract="Models of how a language is learnt.")


def total(client, query: str, **params) -> str:
    html = client.get("/", {"q": query, **params}).content.decode()
    return re.search(r"About ([\d,]+) results", html).group(1)


@pytest.mark.parametrize("sort", ["relevance", "newest"])
def test_a_phrase_total_is_within_twice_the_truth(client, catalog, sort):
    params = {"sort": sort} if sort == "newest" else {}
    shown = int(total(client, '"language models"', **params).replace(",", ""))
    assert 50 <= shown <= 200  # 100 papers hold the phrase; all 400 hold its words
