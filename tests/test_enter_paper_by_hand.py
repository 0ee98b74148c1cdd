"""Curators enter by hand a paper no source the site reads has: through the one
ingest pipeline, with the pages, exports and API of any paper, and matched to the
same paper from arXiv whichever came first."""

import datetime

import pytest

from catalog.models import CurationEvent, Paper
from ingest import links
from tests.accounts_factories import UserFactory
from tests.arxiv_server import entry_id
from tests.factories import PaperFactory, TagFactory
from tests.test_add_by_link import title_of

pytestmark = pytest.mark.django_db

FORM = "/admin/ingest/linkrequest/by-hand/"
TITLE = "Sparse Mixtures of Reasoners for Long Proofs"


def entry(**changes: object) -> dict[str, object]:
    return {
        "title": TITLE,
        "authors": "Ada Example\n\n  Grace   Sample \n",
        "abstract": "We prove long theorems. Code: https://github.com/example/reasoners",
        "venue": "Workshop on Mathematical Reasoning",
        "published_on": "2025-09-14",
        "precision": "month",
        "doi": "https://doi.org/10.5555/3600270.3600999",
        "url": "",
        "note": "from the workshop's programme",
        **changes,
    }


def test_a_paper_entered_by_hand_is_stored_with_its_history_and_shown(curator_client, client):
    tag = TagFactory(name="Reasoning", slug="reasoning")
    changelist = curator_client.get("/admin/catalog/paper/").content.decode()
    assert f'href="{FORM}"' in changelist and "Enter a paper by hand" in changelist

    response = curator_client.post(FORM, entry(tags=[tag.pk]))

    paper = Paper.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/admin/catalog/paper/{paper.pk}/change/"
    shown = curator_client.get(response["Location"]).content.decode()
    assert f"Added “{TITLE}”." in shown
    assert (paper.arxiv_id, paper.title, paper.author_list) == (
        None,
        TITLE,
        ["Ada Example", "Grace Sample"],
    )
    assert (paper.doi, paper.source_key) == (
        "10.5555/3600270.3600999",
        "doi:10.5555/3600270.3600999",
    )
    assert paper.source_url == "https://doi.org/10.5555/3600270.3600999"
    assert (paper.journal_ref, paper.published_label) == (
        "Workshop on Mathematical Reasoning",
        "2025-09",
    )
    assert list(paper.tags.all()) == [tag]
    assert list(paper.code_links.values_list("url", flat=True)) == [
        "https://github.com/example/reasoners"
    ]
    event = CurationEvent.objects.get(action=CurationEvent.Action.ADDED)
    assert (event.paper_id, event.detail) == (paper.pk, "by hand: from the workshop's programme")

    page = client.get(f"/p/{paper.pk}/").content.decode()
    assert TITLE in page and "Workshop on Mathematical Reasoning" in page
    item = client.get(f"/api/v1/papers/{paper.pk}").json()
    assert (item["title"], item["authors"]) == (TITLE, ["Ada Example", "Grace Sample"])
    assert TITLE in client.get("/tags/reasoning/").content.decode()


def test_a_paper_already_on_arxiv_is_matched_not_added_twice(curator_client):
    on_arxiv = PaperFactory(title=TITLE.upper(), arxiv_id="2509.01234", doi="", journal_ref="")

    response = curator_client.post(FORM, entry(), follow=True)

    assert Paper.objects.count() == 1
    assert "was in the catalog from arXiv: the entry was matched to it" in (
        response.content.decode()
    )
    on_arxiv.refresh_from_db()
    assert on_arxiv.title == TITLE.upper()  # arXiv's text stays
    assert (on_arxiv.doi, on_arxiv.journal_ref) == (
        "10.5555/3600270.3600999",
        "Workshop on Mathematical Reasoning",
    )
    event = CurationEvent.objects.get()
    assert (event.paper_id, event.action, event.detail) == (
        on_arxiv.pk,
        CurationEvent.Action.MERGED,
        "entered by hand and matched to it: from the workshop's programme",
    )


def test_arxiv_later_bringing_the_paper_matches_the_entry(curator_client, fake_arxiv):
    arxiv_id = entry_id(fake_arxiv.entries[0])
    curator_client.post(FORM, entry(title=title_of(fake_arxiv.entries[0]).lower(), doi=""))
    entered = Paper.objects.get()

    request = links.add_papers(links.request_papers(text=arxiv_id, by="test"))

    request.refresh_from_db()
    assert request.lines[0]["detail"] == "matched the listing without an arXiv id"
    paper = Paper.objects.get()
    assert (paper.pk, paper.arxiv_id) == (entered.pk, arxiv_id)
    assert paper.title == title_of(fake_arxiv.entries[0])


@pytest.mark.parametrize(
    ("changes", "field", "error"),
    [
        ({"title": "  "}, "title", "This field is required."),
        ({"authors": "\n \n"}, "authors", "Name at least one author."),
        ({"doi": "not a doi"}, "doi", "A DOI starts with 10. and a slash follows its prefix."),
        ({"url": "javascript:alert(1)"}, "url", "Enter a valid URL."),
        ({"published_on": "2025-02-30"}, "published_on", "Enter a valid date."),
    ],
)
def test_a_bad_entry_is_refused_with_a_reason_and_stores_nothing(
    curator_client, changes, field, error
):
    response = curator_client.post(FORM, entry(**changes))

    assert response.status_code == 200
    assert response.context["form"].errors[field] == [error]
    assert Paper.objects.count() == 0


def test_readers_and_staff_without_curation_rights_cannot_enter_papers(client):
    assert client.get(FORM).status_code == 302  # to the admin's log-in
    staff = UserFactory(is_staff=True)
    client.force_login(staff)
    assert client.get(FORM).status_code == 403
    assert client.post(FORM, entry()).status_code == 403
    assert Paper.objects.count() == 0


def test_a_date_known_to_the_year_is_kept_so(curator_client):
    curator_client.post(FORM, entry(precision="year", published_on="2024-01-01"))

    paper = Paper.objects.get()
    assert paper.published_at == datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)
    assert paper.published_label == "2024"
