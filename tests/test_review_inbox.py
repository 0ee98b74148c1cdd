"""Sources that need review: their papers wait in an inbox for a curator to publish or reject."""

import pytest
from django.test import Client

from catalog.models import CurationEvent, Paper, PaperTag
from ingest import runs
from ingest.models import InboxEntry
from tests.factories import CodeLinkFactory, TagFactory
from tests.ingest_factories import IngestSourceFactory, TagRuleFactory

pytestmark = pytest.mark.django_db

INBOX = "/admin/ingest/inboxentry/"


def run_action(client, action: str, entries, **extra):
    data = {"action": action, "_selected_action": [e.pk for e in entries], **extra}
    return client.post(INBOX, data, follow=True)


def test_a_source_that_needs_review_stores_its_papers_out_of_sight(fake_arxiv, client):
    tag = TagFactory(name="Software_Testing")
    source = IngestSourceFactory(needs_review=True, tags=[tag], max_results=5)

    run = runs.run_source(source=source)

    assert run.created == 5
    papers = Paper.objects.all()
    assert {(p.is_visible, p.review) for p in papers} == {(False, "pending")}
    assert PaperTag.objects.filter(tag=tag).count() == 5
    entries = InboxEntry.objects.select_related("source", "run")
    assert {(e.source, e.run) for e in entries} == {(source, run)}
    assert client.get("/").context["page"].paginator.count == 0
    assert client.get(papers[0].get_absolute_url()).status_code == 404


def test_sources_publish_directly_unless_marked(fake_arxiv):
    runs.run_source(source=IngestSourceFactory(max_results=3))

    assert Paper.objects.visible().count() == 3
    assert not InboxEntry.objects.exists()


def test_the_inbox_lists_waiting_papers_newest_first_with_source_rules_and_code(
    fake_arxiv, curator_client, django_assert_max_num_queries
):
    TagRuleFactory(tag=TagFactory(name="Testing_rule"), keywords="testing")
    source = IngestSourceFactory(name="SE testing", needs_review=True, max_results=10)
    runs.run_source(source=source)
    entry = InboxEntry.objects.order_by("arrived_at").first()
    CodeLinkFactory(paper=entry.paper, url="https://github.com/lab/tool")

    with django_assert_max_num_queries(15):
        response = curator_client.get(INBOX)

    listed = list(response.context["cl"].result_list)
    assert [e.pk for e in listed] == list(
        InboxEntry.objects.order_by("-arrived_at", "-id").values_list("pk", flat=True)
    )
    html = response.content.decode()
    assert "SE testing" in html
    assert "Testing_rule" in html
    assert "https://github.com/lab/tool" in html
    matched = [e for e in listed if e.rules_matched]
    assert matched and all(e.rules_matched == ["Testing_rule"] for e in matched)


def test_publish_with_tags_makes_papers_public_at_once_with_the_cache_on(
    fake_arxiv, curator_client, redis_cache, django_capture_on_commit_callbacks
):
    runs.run_source(source=IngestSourceFactory(needs_review=True, max_results=3))
    anonymous = Client()
    assert "No papers match" in anonymous.get("/").content.decode()
    first, second, third = InboxEntry.objects.order_by("pk")
    tags = [TagFactory(name="Picked"), TagFactory(name="Tools")]

    with django_capture_on_commit_callbacks(execute=True):
        response = run_action(
            curator_client, "publish_with_tags", [first, second], tags=[t.pk for t in tags]
        )

    assert "Published 2 papers with Picked, Tools." in response.content.decode()
    html = anonymous.get("/").content.decode()
    assert "2 papers" in html
    assert first.paper.title[:30] in html
    published = Paper.objects.get(pk=first.paper_id)
    assert (published.is_visible, published.review) == (True, "published")
    assert sorted(published.tags.values_list("name", flat=True)) == ["Picked", "Tools"]
    assert Paper.objects.get(pk=third.paper_id).review == "pending"
    event = CurationEvent.objects.get(paper=published, action="published")
    assert event.detail == "with Picked, Tools"
    # Published papers leave the inbox's default view.
    assert [e.pk for e in curator_client.get(INBOX).context["cl"].result_list] == [third.pk]


def test_rejected_papers_are_never_brought_back(fake_arxiv, curator_client):
    source = IngestSourceFactory(needs_review=True, max_results=3)
    runs.run_source(source=source)
    entries = list(InboxEntry.objects.order_by("pk"))

    response = run_action(curator_client, "reject", entries[:1])

    assert "Rejected 1 papers" in response.content.decode()
    rejected = Paper.objects.get(pk=entries[0].paper_id)
    # arXiv revises the paper; the source runs again, and so does one that publishes directly.
    fake_arxiv.entries[0] = fake_arxiv.entries[0].replace("</summary>", " Revised.</summary>")
    source.last_success_at = None
    source.save()
    runs.run_source(source=source)
    runs.run_source(source=IngestSourceFactory(max_results=3, tags=[TagFactory()]))

    rejected.refresh_from_db()
    assert (rejected.is_visible, rejected.review) == (False, "rejected")
    assert "Revised." not in rejected.abstract
    assert not rejected.tags.exists()
    assert entries[0].pk not in [e.pk for e in curator_client.get(INBOX).context["cl"].result_list]
    assert [
        e.pk for e in curator_client.get(INBOX + "?review=rejected").context["cl"].result_list
    ] == [entries[0].pk]
    assert CurationEvent.objects.get(paper=rejected).action == "rejected"


def test_a_paper_waiting_for_review_stays_waiting_when_another_source_brings_it(fake_arxiv):
    runs.run_source(source=IngestSourceFactory(needs_review=True, max_results=2))
    runs.run_source(source=IngestSourceFactory(max_results=2))

    assert set(Paper.objects.values_list("review", flat=True)) == {"pending"}


def test_publishing_by_hand_in_the_paper_form_leaves_the_inbox(fake_arxiv, curator_client):
    runs.run_source(source=IngestSourceFactory(needs_review=True, max_results=1))
    paper = Paper.objects.get()

    curator_client.post(
        "/admin/catalog/paper/",
        {"action": "show", "_selected_action": [paper.pk]},
    )

    paper.refresh_from_db()
    assert (paper.is_visible, paper.review) == (True, "published")
    assert CurationEvent.objects.get(paper=paper).action == "published"
