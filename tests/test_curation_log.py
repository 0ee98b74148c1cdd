"""Every curation action is in the curation log (the curation events in admin), whether or
not it touched a paper of the catalog; a failed add tells the curator what failed in words."""

import datetime
import re
import socket

import pytest
from django.test import Client

from catalog.models import CurationEvent, Paper
from curation.models import SuggestedPaper
from editions import services as editions
from ingest import links
from tests.accounts_factories import CuratorFactory, UserFactory
from tests.arxiv_server import Fault, entry_id
from tests.factories import PaperFactory

pytestmark = pytest.mark.django_db

LOG = "/admin/catalog/curationevent/"
SUGGESTIONS = "/admin/curation/suggestedpaper/"


@pytest.fixture
def curator():
    return CuratorFactory(username="curator-kim")


@pytest.fixture
def curator_client(curator) -> Client:
    client = Client()
    client.force_login(curator)
    return client


def suggest(arxiv_id: str, readers: int = 1) -> SuggestedPaper:
    for _ in range(readers):
        client = Client()
        client.force_login(UserFactory())
        client.post("/suggest/", {"link": arxiv_id})
    return SuggestedPaper.objects.get(arxiv_id=arxiv_id)


def logged() -> list[tuple]:
    return [
        (event.action, event.about, event.who, event.detail)
        for event in CurationEvent.objects.select_related("paper", "user").order_by("id")
    ]


def test_declining_a_paper_the_catalog_lacks_is_logged_by_its_id(curator_client):
    suggested = suggest("2505.15034", readers=2)

    curator_client.post(
        SUGGESTIONS,
        {"action": "decline", "_selected_action": [suggested.pk], "reason": "Out of scope"},
    )

    assert logged() == [
        (
            "suggestion_declined",
            "arXiv:2505.15034",
            "curator-kim",
            "suggested by 2 readers: Out of scope",
        )
    ]
    page = curator_client.get(LOG).content.decode()
    assert "arXiv:2505.15034" in page and "suggestion declined" in page
    assert "arXiv:2505.15034" in curator_client.get(f"{LOG}?q=2505.15034").content.decode()


def test_declining_a_paper_in_the_catalog_is_logged_on_the_paper(curator_client):
    paper = PaperFactory(arxiv_id="2505.15034", is_visible=False, review="pending")
    suggested = suggest("2505.15034")

    curator_client.post(
        SUGGESTIONS, {"action": "decline", "_selected_action": [suggested.pk], "reason": "Dup"}
    )

    event = CurationEvent.objects.get()
    assert (event.paper, event.subject) == (paper, "")
    page = curator_client.get(LOG).content.decode()
    assert f'href="/admin/catalog/paper/{paper.pk}/change/"' in page


def test_an_approved_suggestion_arxiv_lacks_is_logged(fake_arxiv, curator, curator_client):
    suggested = suggest("2501.99999")

    curator_client.post(SUGGESTIONS, {"action": "approve", "_selected_action": [suggested.pk]})
    links.add_papers(SuggestedPaper.objects.get().link_request)

    assert SuggestedPaper.objects.get().state == "not_found"
    assert logged() == [
        (
            "suggestion_approved",
            "arXiv:2501.99999",
            "curator-kim",
            "suggested by 1 reader: not found on arXiv",
        )
    ]


def test_a_failed_add_is_logged_and_says_what_failed_in_words(fake_arxiv, curator, curator_client):
    ids = [entry_id(entry) for entry in fake_arxiv.entries[:40]]
    fake_arxiv.queue(*[Fault(status=503)] * 4)

    request = links.add_papers(links.request_papers(text="\n".join(ids), by=curator))

    assert not Paper.objects.exists()
    [(action, about, who, detail)] = logged()
    assert (action, about, who) == ("add_failed", f"papers by link #{request.pk}", "curator-kim")
    # The seconds the four tries took depend on the machine's load.
    assert re.fullmatch(
        r"40 ids: arXiv could not be read: HTTP 503 \(gave up after 4 tries in \d+ s: "
        r"asking arXiv's API for 40 papers by id\); nothing was stored",
        detail,
    )
    page = curator_client.get(f"/admin/ingest/linkrequest/{request.pk}/change/").content.decode()
    assert "asking arXiv&#x27;s API for 40 papers by id" in page
    assert "id_list" not in page and fake_arxiv.url not in page
    assert ids[0] not in page.split('id="link-request-lines"')[0]


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_refused_connection_is_named_without_the_address(settings, curator_client):
    settings.ARXIV_API_URL = f"http://127.0.0.1:{closed_port()}/api/query"
    settings.ARXIV_DELAY_SECONDS = 0
    settings.ARXIV_RETRY_BASE_WAIT = 0.01
    settings.ARXIV_MAX_RETRIES = 1

    request = links.add_papers(links.request_papers(text="2505.15034 2505.15035", by="test"))

    request.run.refresh_from_db()
    assert request.run.stopped_reason == (
        "arXiv could not be read: connection failed: connection refused "
        f"(gave up after 2 tries in {request.run.stopped_reason.split(' in ')[1].split(' ')[0]} s: "
        "asking arXiv's API for 2 papers by id)."
    )
    page = curator_client.get(f"/admin/ingest/linkrequest/{request.pk}/change/").content.decode()
    assert "connection refused" in page and "127.0.0.1" not in page


def test_requesting_summaries_is_logged(curator_client):
    paper = PaperFactory()

    curator_client.post(
        "/admin/catalog/paper/",
        {"action": "regenerate_summaries", "_selected_action": [paper.pk]},
    )

    assert logged() == [
        (
            "summaries_requested",
            str(paper),
            "curator-kim",
            "regenerated, keeping curator edits",
        )
    ]


def test_returning_an_edition_to_draft_is_logged(curator_client):
    paper = PaperFactory()
    edition = editions.create_edition(date=datetime.date(2025, 11, 5))
    edition.entries.get_or_create(paper=paper, defaults={"position": 1})
    editions.publish(edition=edition, by="test")

    curator_client.post(
        "/admin/editions/edition/", {"action": "unpublish", "_selected_action": [edition.pk]}
    )

    assert logged()[-1] == (
        "edition_unpublished",
        str(paper),
        "curator-kim",
        "Daily edition 2025-11-05",
    )


def test_the_log_lists_events_with_and_without_papers_in_fixed_queries(
    curator_client, curator, django_assert_num_queries
):
    for number in range(30):
        paper = PaperFactory()
        CurationEvent.objects.create(paper=paper, action="hidden", user=curator)
        CurationEvent.objects.create(subject=f"arXiv:2505.{number:05d}", action="add_failed")

    # The session, its user, the user's and their groups' permissions, the count
    # shown and the total, the page's events joined to their papers and users,
    # and the date hierarchy's first and last days, then its days.
    with django_assert_num_queries(9):
        page = curator_client.get(LOG)

    assert page.status_code == 200
    assert page.content.decode().count("arXiv:2505.") == 30
