"""Curation in bulk is recorded per paper and seen by anonymous readers at once.

These run with the Redis catalog cache on: a write that does not bump the
catalog version leaves the cached page stale, and the test fails.
"""

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from catalog.models import CurationEvent, Paper, Summary
from tests.accounts_factories import CuratorFactory, UserFactory
from tests.factories import PaperFactory, SummaryFactory, TagFactory
from tests.ingest_factories import TagRuleFactory

pytestmark = pytest.mark.django_db

CHANGELIST = "/admin/catalog/paper/"


@pytest.fixture
def curator(client):
    user = CuratorFactory(username="mina")
    client.force_login(user)
    return user


@pytest.fixture
def anonymous(redis_cache):
    return Client()


def act(client, action: str, papers, capture, **extra):
    data = {"action": action, "_selected_action": [p.pk for p in papers], **extra}
    with capture(execute=True):
        return client.post(CHANGELIST, data, follow=True)


def test_hide_and_show_reach_cached_pages_at_once(
    client, curator, anonymous, django_capture_on_commit_callbacks
):
    paper = PaperFactory(title="Curated away")
    assert "Curated away" in anonymous.get("/").content.decode()

    response = act(client, "hide", [paper], django_capture_on_commit_callbacks)
    assert "Hid 1 paper." in response.content.decode()
    assert "Curated away" not in anonymous.get("/").content.decode()
    assert anonymous.get(paper.get_absolute_url()).status_code == 404

    act(client, "show", [paper], django_capture_on_commit_callbacks)
    assert "Curated away" in anonymous.get("/").content.decode()
    assert list(
        CurationEvent.objects.filter(paper=paper)
        .order_by("created_at", "id")
        .values_list("action", "user__username")
    ) == [("hidden", "mina"), ("shown", "mina")]


def test_tagging_in_bulk_reaches_tag_pages_and_is_recorded(
    client, curator, anonymous, django_capture_on_commit_callbacks
):
    tag = TagFactory(name="Reasoning", slug="reasoning")
    papers = PaperFactory.create_batch(2)
    assert "No papers match" in anonymous.get("/tags/reasoning/").content.decode()

    response = act(client, "add_tag", papers, django_capture_on_commit_callbacks, tag=tag.pk)
    assert "Tagged 2 papers with Reasoning." in response.content.decode()
    assert "2 papers" in anonymous.get("/tags/reasoning/").content.decode()
    # Tagging again changes nothing and records nothing.
    act(client, "add_tag", papers, django_capture_on_commit_callbacks, tag=tag.pk)

    act(client, "remove_tag", papers[:1], django_capture_on_commit_callbacks, tag=tag.pk)
    assert "1 paper" in anonymous.get("/tags/reasoning/").content.decode()
    assert sorted(CurationEvent.objects.values_list("paper_id", "action", "detail")) == sorted(
        [
            (papers[0].pk, "tagged", "Reasoning"),
            (papers[1].pk, "tagged", "Reasoning"),
            (papers[0].pk, "untagged", "Reasoning"),
        ]
    )


def test_draft_summaries_are_published_in_bulk(
    client, curator, anonymous, django_capture_on_commit_callbacks
):
    papers = PaperFactory.create_batch(2)
    for paper in papers:
        SummaryFactory(paper=paper, status=Summary.Status.DRAFT, body=f"草稿 {paper.pk}")
    assert (
        f"草稿 {papers[0].pk}" not in anonymous.get(papers[0].get_absolute_url()).content.decode()
    )

    response = act(client, "publish_draft_summaries", papers, django_capture_on_commit_callbacks)

    assert "Published 2 draft summaries." in response.content.decode()
    assert f"草稿 {papers[0].pk}" in anonymous.get(papers[0].get_absolute_url()).content.decode()
    assert set(Summary.objects.values_list("status", flat=True)) == {"published"}
    assert CurationEvent.objects.filter(action="summaries_published").count() == 2


def test_the_summary_list_publishes_selected_drafts(client, curator):
    draft = SummaryFactory(status=Summary.Status.DRAFT)
    other = SummaryFactory(status=Summary.Status.DRAFT)

    client.post(
        "/admin/catalog/summary/", {"action": "publish_drafts", "_selected_action": [draft.pk]}
    )

    assert Summary.objects.get(pk=draft.pk).status == "published"
    assert Summary.objects.get(pk=other.pk).status == "draft"


def test_reapplied_tag_rules_reach_cached_pages_at_once(
    anonymous, django_capture_on_commit_callbacks
):
    rule = TagRuleFactory(tag=TagFactory(slug="retrieval"), keywords="retrieval")
    PaperFactory(title="Retrieval for everyone")
    assert "No papers match" in anonymous.get("/tags/retrieval/").content.decode()

    with django_capture_on_commit_callbacks(execute=True):
        call_command("apply_tag_rules", stdout=None)

    assert "Retrieval for everyone" in anonymous.get("/tags/retrieval/").content.decode()
    assert rule.tag.papers.count() == 1


def test_the_history_page_shows_form_edits_and_curation_in_order(
    client, curator, django_capture_on_commit_callbacks
):
    superuser_client = Client()
    paper = PaperFactory(title="A paper with a past")
    act(client, "hide", [paper], django_capture_on_commit_callbacks)
    act(client, "show", [paper], django_capture_on_commit_callbacks)
    listing = PaperFactory(arxiv_id=None, title="Listed without id")
    superuser_client.force_login(UserFactory(is_staff=True, is_superuser=True, username="root"))
    url = reverse("admin:catalog_paper_change", args=[listing.pk])
    form = superuser_client.get(url).context["adminform"].form
    data = {
        **{k: v for k, v in form.initial.items() if v is not None and k != "categories"},
        "categories": [c.pk for c in listing.categories.all()],
        "primary_category": listing.primary_category_id,
        "published_at_0": "2025-05-01",
        "published_at_1": "00:00:00",
        "added_at_0": "2025-05-02",
        "added_at_1": "00:00:00",
        "match_arxiv_id": paper.arxiv_id,
    }
    for prefix in ("paperauthor_set", "images", "papertag_set", "code_links", "summaries"):
        data |= {f"{prefix}-TOTAL_FORMS": 0, f"{prefix}-INITIAL_FORMS": 0}
    assert superuser_client.post(url, data).status_code == 302

    history = client.get(reverse("admin:catalog_paper_history", args=[paper.pk]))

    rows = history.context["history"]
    assert [(who, what) for _, who, what in rows] == [
        ("mina", "Hidden"),
        ("mina", "Shown"),
        ("root", f"Merged: listing #{listing.pk} merged into it"),
    ]
    listing_rows = client.get(reverse("admin:catalog_paper_history", args=[listing.pk]))
    merged, edited = [what for _, _, what in listing_rows.context["history"]]
    assert merged == f"Merged: into arXiv:{paper.arxiv_id}"
    assert edited.startswith("Changed ") and "Match to arXiv id" in edited
    assert "Merged: into arXiv" in listing_rows.content.decode()


def test_the_curation_log_lists_every_action(client, curator, django_capture_on_commit_callbacks):
    papers = PaperFactory.create_batch(3)
    act(client, "hide", papers, django_capture_on_commit_callbacks)

    response = client.get("/admin/catalog/curationevent/")

    assert response.status_code == 200
    assert len(response.context["cl"].result_list) == 3
    assert Paper.objects.visible().count() == 0
