"""Lists exported for reference managers, parsed back by a BibTeX and a RIS
parser: BibTeX, RIS and CSL-JSON of any list, streamed, at most EXPORT_MAX_PAPERS."""

import json

import bibtexparser
import pytest
import rispy
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.accounts_factories import SavedPaperFactory, SubscriptionFactory, UserFactory
from tests.factories import CategoryFactory, PaperFactory, TagFactory

pytestmark = pytest.mark.django_db


def body(response) -> str:
    assert response.status_code == 200, response.content
    assert response.streaming
    return b"".join(response.streaming_content).decode()


@pytest.fixture
def catalog():
    tag = TagFactory(slug="agents")
    category = CategoryFactory(code="cs.AI")
    papers = [
        PaperFactory(
            title=f"Reasoning agents {n}",
            authors=["Ada Lovelace", "Alan Turing"],
            tags=[tag] if n % 2 else [],
            categories=[category],
        )
        for n in range(4)
    ]
    # A title with braces that do not pair, and a journal reference with a DOI.
    odd = PaperFactory(
        title="On {unbalanced} braces } and 100% of $\\alpha$",
        authors=["Ada Lovelace"],
        journal_ref="Journal of Tests 1 (2025) 1-10",
        doi="10.1000/test.1",
    )
    return {"tag": tag, "papers": [*papers, odd]}


def test_bibtex_parses_back_with_one_entry_per_paper_and_unique_keys(client, catalog):
    text = body(client.get("/export.bib"))
    library = bibtexparser.parse_string(text)

    assert not library.failed_blocks
    assert len(library.entries) == 5
    keys = [entry.key for entry in library.entries]
    assert len(set(keys)) == 5
    by_id = {entry["eprint"]: entry for entry in library.entries}
    first = by_id[catalog["papers"][0].arxiv_id]
    assert first["title"] == "{Reasoning agents 0}"
    assert first["author"] == "Ada Lovelace and Alan Turing"
    assert first["archivePrefix"] == "arXiv"
    odd = by_id[catalog["papers"][-1].arxiv_id]
    assert odd.entry_type == "article"
    assert odd["doi"] == "10.1000/test.1"


def test_ris_parses_back(client, catalog):
    response = client.get("/export.ris")
    entries = rispy.loads(body(response))

    assert response["Content-Disposition"] == 'attachment; filename="papers.ris"'
    assert len(entries) == 5
    by_title = {entry["title"]: entry for entry in entries}
    paper = catalog["papers"][1]
    entry = by_title[paper.title]
    assert entry["type_of_reference"] == "UNPB"
    assert entry["authors"] == ["Ada Lovelace", "Alan Turing"]
    assert entry["year"] == str(paper.published_at.year)
    assert entry["urls"] == [paper.abs_url]
    assert entry["accession_number"] == f"arXiv:{paper.arxiv_id}"


def test_csl_json_is_a_list_of_items(client, catalog):
    items = json.loads(body(client.get("/export.csl.json")))

    assert len(items) == 5
    first = next(item for item in items if item["id"] == catalog["papers"][0].arxiv_id)
    assert first["type"] == "article"
    assert first["author"] == [
        {"family": "Lovelace", "given": "Ada"},
        {"family": "Turing", "given": "Alan"},
    ]
    assert len(first["issued"]["date-parts"][0]) == 3
    assert first["publisher"] == "arXiv"


def test_exports_take_the_lists_filters_and_order(client, catalog):
    filtered = rispy.loads(body(client.get("/export.ris?q=reasoning&tag=agents")))
    tagged = rispy.loads(body(client.get("/tags/agents/export.ris")))
    in_category = json.loads(body(client.get("/categories/cs.AI/export.csl.json")))

    # Newest first, as on the list page.
    expected = [p.title for p in catalog["papers"][:4] if p.tags.exists()]
    assert [entry["title"] for entry in filtered] == expected
    assert [entry["title"] for entry in tagged] == expected
    assert len(in_category) == 4


def test_exports_stop_at_the_limit(client, catalog, settings):
    settings.EXPORT_MAX_PAPERS = 2
    assert len(rispy.loads(body(client.get("/export.ris")))) == 2


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/export.pdf", 404),
        ("/export.bib?tag=nope", 400),
        ("/export.bib?from=2025-02-01&to=2025-01-01", 400),
        ("/tags/nope/export.bib", 404),
        ("/categories/xx.YY/export.ris", 404),
    ],
)
def test_bad_exports_are_4xx(client, catalog, path, status):
    assert client.get(path).status_code == status


def test_saved_papers_and_the_feed_export_for_their_reader(client, catalog):
    user = UserFactory()
    SavedPaperFactory(user=user, paper=catalog["papers"][0])
    SubscriptionFactory(user=user, tag=catalog["tag"])
    assert client.get("/saved/export.bib").status_code == 302
    client.force_login(user)

    saved = bibtexparser.parse_string(body(client.get("/saved/export.bib")))
    feed = rispy.loads(body(client.get("/feed/export.ris")))

    assert [entry["eprint"] for entry in saved.entries] == [catalog["papers"][0].arxiv_id]
    assert len(feed) == 2


def test_an_export_is_one_query_whatever_its_length(client, catalog):
    with CaptureQueriesContext(connection) as queries:
        body(client.get("/export.bib"))
    # The papers with their primary category, read through a cursor.
    assert len([q for q in queries if "catalog_paper" in q["sql"]]) == 1


def test_list_pages_link_their_exports(client, catalog):
    user = UserFactory()
    SavedPaperFactory(user=user, paper=catalog["papers"][0])
    for path in ("/?q=reasoning", "/tags/agents/", "/categories/cs.AI/"):
        page = client.get(path).content.decode()
        for link in ("export.bib", "export.ris", "export.csl.json"):
            assert f'href="{link}' in page, (path, link)
    assert 'href="export.bib?q=reasoning"' in client.get("/?q=reasoning").content.decode()
    client.force_login(user)
    assert 'href="export.ris"' in client.get("/saved/").content.decode()
