"""Bookmarking papers and the /saved/ list."""

import pytest

from accounts.models import SavedPaper
from tests.accounts_factories import PASSWORD, SavedPaperFactory, UserFactory
from tests.factories import PaperFactory

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def reader(client):
    user = UserFactory()
    client.force_login(user)
    return user


def saved_titles(client) -> list[str]:
    return [paper.title for paper in client.get("/saved/").context["page"].object_list]


def test_save_from_the_list_without_javascript(client, reader):
    paper = PaperFactory(title="Worth keeping")
    assert f'action="/saved/{paper.pk}/save/"' in client.get("/").content.decode()

    response = client.post(f"/saved/{paper.pk}/save/", {"next": "/?page=1"})
    assert response.status_code == 302
    assert response.url == "/?page=1"
    assert saved_titles(client) == ["Worth keeping"]
    assert f'action="/saved/{paper.pk}/unsave/"' in client.get("/").content.decode()

    client.post(f"/saved/{paper.pk}/unsave/")
    assert saved_titles(client) == []


def test_save_from_the_paper_page_with_htmx(client, reader):
    paper = PaperFactory()
    assert (
        f'hx-post="/saved/{paper.pk}/save/"'
        in client.get(paper.get_absolute_url()).content.decode()
    )

    response = client.post(f"/saved/{paper.pk}/save/", {"next": paper.get_absolute_url()}, **HTMX)
    assert response.status_code == 200
    fragment = response.content.decode()
    assert fragment.lstrip().startswith("<form")
    assert f'hx-post="/saved/{paper.pk}/unsave/"' in fragment and "Saved" in fragment
    assert SavedPaper.objects.filter(user=reader, paper=paper).exists()


def test_logged_out_reader_saves_after_logging_in(client):
    user = UserFactory()
    paper = PaperFactory()
    assert "Log in to save this paper" in client.get(paper.get_absolute_url()).content.decode()
    response = client.post(f"/saved/{paper.pk}/save/")
    assert response.url == f"/accounts/login/?next={paper.get_absolute_url()}"

    response = client.post(response.url, {"login": user.email, "password": PASSWORD})
    assert response.url == paper.get_absolute_url()
    assert SavedPaper.objects.filter(user=user, paper=paper).exists()


def test_hidden_or_unknown_papers_cannot_be_saved(client, reader):
    hidden = PaperFactory(is_visible=False)
    assert client.post(f"/saved/{hidden.pk}/save/").status_code == 404
    assert client.post("/saved/999999/save/").status_code == 404
    assert client.get(f"/saved/{PaperFactory().pk}/save/").status_code == 405
    assert not SavedPaper.objects.exists()


def test_saved_list_needs_a_login(client):
    response = client.get("/saved/")
    assert response.url == "/accounts/login/?next=/saved/"


def test_each_reader_sees_and_changes_only_their_own_saved_papers(client, reader):
    theirs = SavedPaperFactory(paper=PaperFactory(title="Someone else's"))
    SavedPaperFactory(user=reader, paper=PaperFactory(title="Mine"))
    assert saved_titles(client) == ["Mine"]
    client.post(f"/saved/{theirs.paper_id}/unsave/")
    assert SavedPaper.objects.filter(pk=theirs.pk).exists()


@pytest.mark.parametrize("page_size", [5, 20])
def test_saved_list_costs_the_same_queries_whatever_its_length(
    client, reader, django_assert_num_queries, page_size
):
    for _ in range(page_size):
        SavedPaperFactory(user=reader, paper=PaperFactory())
    client.get("/saved/")
    # session, user, papers with their count, tags, filter choices, the
    # reader's saved and subscribed ids for the buttons
    with django_assert_num_queries(6):
        response = client.get("/saved/")
    assert len(response.context["page"].object_list) == page_size
