"""Readers suggest papers; curators approve them (added from arXiv) or decline them."""

import datetime

import pytest
from django.test import Client
from django.utils import timezone

from catalog.models import CurationEvent, Paper
from curation.models import SuggestedPaper, Suggestion
from ingest import links
from tests.accounts_factories import CuratorFactory, UserFactory
from tests.arxiv_server import Fault, entry_id
from tests.factories import PaperFactory, TagFactory

pytestmark = pytest.mark.django_db

SUGGESTIONS = "/admin/curation/suggestedpaper/"


@pytest.fixture
def reader():
    return UserFactory()


@pytest.fixture
def reader_client(client, reader):
    client.force_login(reader)
    return client


@pytest.fixture
def curator_client():
    client = Client()
    client.force_login(CuratorFactory(username="curator-kim"))
    return client


def suggest(client, link: str, **fields):
    return client.post("/suggest/", {"link": link, **fields}, follow=True)


def review(client, action: str, suggested, capture=None, **extra):
    data = {"action": action, "_selected_action": [s.pk for s in suggested], **extra}
    if capture is None:
        return client.post(SUGGESTIONS, data, follow=True)
    with capture(execute=True):
        return client.post(SUGGESTIONS, data, follow=True)


def test_anonymous_readers_are_invited_to_log_in(client):
    page = client.get("/suggest/").content.decode()

    assert "to suggest papers" in page
    assert "/accounts/login/?next=/suggest/" in page
    response = client.post("/suggest/", {"link": "2505.15034"})
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")
    assert not SuggestedPaper.objects.exists()


def test_the_header_offers_suggesting_a_paper(client, reader_client):
    assert 'href="/suggest/"' in Client().get("/").content.decode()
    assert 'href="/suggest/"' in reader_client.get("/").content.decode()


def test_a_reader_suggests_a_paper_and_sees_it_waiting(reader_client, reader):
    tag = TagFactory(name="Agents")

    response = suggest(
        reader_client,
        "  https://arxiv.org/abs/2505.15034v2 ",
        tag=tag.pk,
        note="Great \x07 results\non   agents",
    )

    html = response.content.decode()
    assert "the curators will look at arXiv:2505.15034" in html
    suggestion = Suggestion.objects.select_related("suggested_paper").get()
    assert suggestion.suggested_paper.arxiv_id == "2505.15034"
    assert (suggestion.user, suggestion.tag, suggestion.note) == (
        reader,
        tag,
        "Great results on agents",
    )
    assert suggestion.link == "https://arxiv.org/abs/2505.15034v2"
    assert "Waiting for a curator" in html and "Great results on agents" in html


def test_readers_suggesting_one_paper_share_one_suggestion_with_a_count(
    reader_client, curator_client
):
    suggest(reader_client, "2505.15034", note="first")
    other = Client()
    other.force_login(UserFactory())
    suggest(other, "https://huggingface.co/papers/2505.15034", note="second")

    again = suggest(reader_client, "arXiv:2505.15034")

    assert "You have already suggested this paper." in again.content.decode()
    suggested = SuggestedPaper.objects.get()
    assert suggested.suggestions.count() == 2
    listed = curator_client.get(SUGGESTIONS)
    [row] = listed.context["cl"].result_list
    assert row.reader_count == 2
    assert "first" in listed.content.decode() and "second" in listed.content.decode()


@pytest.mark.parametrize(
    ("link", "error"),
    [
        ("", "This field is required."),
        ("not a paper", "That is not an arXiv link or id."),
        ("2505.15034 2505.15035", "One paper at a time, please."),
        ("https://example.com/" + "x" * 600, "at most 500 characters"),
        ("javascript:alert(1)", "That is not an arXiv link or id."),
    ],
)
def test_bad_suggestions_are_refused_with_a_reason(reader_client, link, error):
    response = suggest(reader_client, link)

    assert response.status_code == 200
    assert error in response.content.decode()
    assert not SuggestedPaper.objects.exists()


def test_a_paper_already_in_the_catalog_is_pointed_to(reader_client):
    paper = PaperFactory(arxiv_id="2505.15034", title="Already <here>")

    html = suggest(reader_client, "2505.15034").content.decode()

    assert f'It is already in the catalog: <a href="{paper.get_absolute_url()}">' in html
    assert "Already &lt;here&gt;" in html
    assert not SuggestedPaper.objects.exists()


def test_suggestions_are_limited_per_day(reader_client, reader, settings):
    settings.SUGGESTIONS_PER_DAY = 3
    for n in range(3):
        suggest(reader_client, f"2505.1500{n}")
    Suggestion.objects.filter(user=reader, suggested_paper__arxiv_id="2505.15000").update(
        created_at=timezone.now() - datetime.timedelta(days=1, minutes=1)
    )
    suggest(reader_client, "2505.15003")

    refused = suggest(reader_client, "2505.15004").content.decode()

    assert "You have made 3 suggestions in the last day" in refused
    assert Suggestion.objects.filter(user=reader).count() == 4


def test_the_note_is_shown_as_text_never_as_markup(reader_client, curator_client):
    suggest(reader_client, "2505.15034", note='<img src=x onerror="alert(1)">')

    for html in (
        reader_client.get("/suggest/").content.decode(),
        curator_client.get(SUGGESTIONS).content.decode(),
    ):
        assert "<img src=x" not in html
        assert "&lt;img src=x" in html


def test_approving_adds_the_papers_with_tags_and_readers_see_them_added(
    fake_arxiv, reader_client, curator_client, redis_cache, django_capture_on_commit_callbacks
):
    arxiv_id = entry_id(fake_arxiv.entries[0])
    missing = "2501.99999"
    suggest(reader_client, f"https://arxiv.org/abs/{arxiv_id}")
    suggest(reader_client, missing)
    anonymous = Client()
    anonymous.get("/")
    tag = TagFactory(name="Testing")

    response = review(
        curator_client,
        "approve",
        SuggestedPaper.objects.all(),
        django_capture_on_commit_callbacks,
        tags=[tag.pk],
    )

    assert "Adding 2 papers from arXiv" in response.content.decode()
    paper = Paper.objects.get(arxiv_id=arxiv_id)
    assert list(paper.tags.all()) == [tag]
    states = dict(SuggestedPaper.objects.values_list("arxiv_id", "state"))
    assert states == {arxiv_id: "added", missing: "not_found"}
    added = SuggestedPaper.objects.get(arxiv_id=arxiv_id)
    assert (added.paper, added.reviewed_by.username) == (paper, "curator-kim")
    event = CurationEvent.objects.get(paper=paper, action="suggestion_approved")
    assert (event.user.username, event.detail) == ("curator-kim", "suggested by 1 reader")
    page = reader_client.get("/suggest/").content.decode()
    assert paper.get_absolute_url() in page
    assert "Not found on arXiv" in page
    assert paper.get_absolute_url() in anonymous.get("/").content.decode()


def test_a_failed_approval_waits_for_a_curator_again(fake_arxiv, reader_client, curator_client):
    suggest(reader_client, entry_id(fake_arxiv.entries[0]))
    fake_arxiv.queue(*[Fault(status=503)] * 4)

    review(curator_client, "approve", SuggestedPaper.objects.all())
    # Without a capture the queued work runs at the test's end, never: run it here.
    links.add_papers(SuggestedPaper.objects.get().link_request)

    assert SuggestedPaper.objects.get().state == "pending"
    assert not Paper.objects.exists()


def test_a_paper_added_by_link_fulfils_the_suggestion(fake_arxiv, reader_client):
    arxiv_id = entry_id(fake_arxiv.entries[0])
    suggest(reader_client, arxiv_id)

    links.add_papers(links.request_papers(text=arxiv_id, by=CuratorFactory()))

    suggested = SuggestedPaper.objects.get()
    assert suggested.state == "added"
    assert suggested.paper == Paper.objects.get()


def test_declining_needs_a_reason_which_readers_see(reader_client, curator_client):
    suggest(reader_client, "2505.15034")
    suggested = SuggestedPaper.objects.all()

    refused = review(curator_client, "decline", suggested, reason="   ")
    assert "Give a reason" in refused.content.decode()
    assert SuggestedPaper.objects.get().state == "pending"

    review(curator_client, "decline", suggested, reason="Out of scope for this community.")

    declined = SuggestedPaper.objects.get()
    assert (declined.state, declined.decline_reason) == (
        "declined",
        "Out of scope for this community.",
    )
    assert declined.reviewed_by.username == "curator-kim"
    page = reader_client.get("/suggest/").content.decode()
    assert "Declined" in page and "Out of scope for this community." in page


def test_declining_a_paper_in_the_catalog_is_in_its_history(reader_client, curator_client):
    paper = PaperFactory(arxiv_id="2505.15034", is_visible=False, review="pending")
    suggest(reader_client, "2505.15034")

    review(curator_client, "decline", SuggestedPaper.objects.all(), reason="Duplicate")

    event = CurationEvent.objects.get(paper=paper)
    assert (event.action, event.detail) == (
        "suggestion_declined",
        "suggested by 1 reader: Duplicate",
    )


def test_the_suggestion_list_does_no_query_per_row(curator_client, django_assert_max_num_queries):
    for n in range(30):
        reader = Client()
        reader.force_login(UserFactory())
        suggest(reader, f"2505.{15000 + n}", tag=TagFactory().pk, note=f"note {n}")

    with django_assert_max_num_queries(12):
        response = curator_client.get(SUGGESTIONS)

    assert len(response.context["cl"].result_list) == 30


def test_the_suggestion_page_works_in_korean_and_chinese(reader_client):
    korean = reader_client.get("/suggest/", HTTP_ACCEPT_LANGUAGE="ko").content.decode()
    chinese = reader_client.get("/suggest/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()

    assert "논문 제안" in korean
    assert "推荐论文" in chinese


def test_the_suggestion_page_takes_a_fixed_number_of_queries(
    reader_client, reader, django_assert_num_queries
):
    for n in range(5):
        suggest(reader_client, f"2505.{15000 + n}", tag=TagFactory().pk)
    reader_client.get("/suggest/")

    # session, reader, the reader's suggestions with their papers and tags,
    # the tags of the form
    with django_assert_num_queries(4):
        response = reader_client.get("/suggest/")
    assert len(response.context["suggestions"]) == 5
