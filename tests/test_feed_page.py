"""The personal feed at /feed/: papers from the reader's subscriptions."""

import datetime

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts import selectors, services
from accounts.models import Profile
from catalog.models import PaperTag
from tests.accounts_factories import SubscriptionFactory, UserFactory
from tests.factories import CategoryFactory, CodeLinkFactory, PaperFactory, TagFactory

pytestmark = pytest.mark.django_db
NEW_MARK = "New since your last visit"


@pytest.fixture
def reader(client):
    user = UserFactory()
    client.force_login(user)
    return user


def titles(response) -> list[str]:
    return [paper.title for paper in response.context["page"].object_list]


# The feed probes the newest papers one by one for a reader following many
# papers and lets the database hash the links for one following few: the same papers.
@pytest.mark.parametrize("probe_from", [0, 10**9], ids=["probed", "hashed"])
def test_feed_holds_papers_from_subscribed_tags_and_categories_newest_first(
    client, reader, monkeypatch, probe_from
):
    monkeypatch.setattr(selectors, "FEED_PROBE_PAPERS", probe_from)
    tag, category = TagFactory(), CategoryFactory(code="math.GT")
    SubscriptionFactory(user=reader, tag=tag)
    SubscriptionFactory(user=reader, category=category)
    now = timezone.now()
    tagged = PaperFactory(title="Tagged", tags=[tag], published_at=now - datetime.timedelta(days=3))
    in_category = PaperFactory(
        title="In category", categories=[category], published_at=now - datetime.timedelta(days=1)
    )
    PaperFactory(title="In both", tags=[tag], categories=[category], published_at=now)
    PaperFactory(title="Elsewhere", tags=[TagFactory()])
    PaperFactory(title="Hidden", tags=[tag], is_visible=False)

    with CaptureQueriesContext(connection) as queries:
        response = client.get("/feed/")
    assert response.status_code == 200
    assert titles(response) == ["In both", in_category.title, tagged.title]
    probed = any(
        "UNION ALL" in query["sql"] and "catalog_papertag" in query["sql"] for query in queries
    )
    assert probed == (probe_from == 0)


def test_feed_takes_the_same_filters_as_the_front_page(client, reader):
    tag = TagFactory()
    SubscriptionFactory(user=reader, tag=tag)
    with_code = PaperFactory(title="Has code", tags=[tag])
    CodeLinkFactory(paper=with_code)
    PaperFactory(title="No code", tags=[tag])

    assert titles(client.get("/feed/?has_code=1")) == ["Has code"]
    assert titles(client.get("/feed/?q=zzzunmatched")) == []
    bad = client.get("/feed/?period=forever")
    assert bad.status_code == 200
    assert bad.context["filter"].errors


def test_feed_needs_a_login(client):
    response = client.get("/feed/")
    assert response.status_code == 302
    assert response.url == "/accounts/login/?next=/feed/"


def test_feed_without_subscriptions_says_how_to_start(client, reader):
    page = client.get("/feed/").content.decode()
    assert "You don't follow any tags or categories yet." in page


def test_feed_shows_only_the_readers_own_subscriptions(client, reader):
    someone_else = UserFactory()
    tag = TagFactory()
    SubscriptionFactory(user=someone_else, tag=tag)
    PaperFactory(tags=[tag])
    assert titles(client.get("/feed/")) == []


def test_what_arrived_since_the_last_visit_is_marked_new(client, reader):
    tag = TagFactory()
    SubscriptionFactory(user=reader, tag=tag)
    now = timezone.now()
    last_visit = now - datetime.timedelta(days=1)
    Profile.objects.filter(user=reader).update(feed_seen_at=last_visit)
    for title, age in (("Old", datetime.timedelta(days=5)), ("Fresh", datetime.timedelta(hours=2))):
        paper = PaperFactory(title=title, added_at=now - age)
        PaperTag.objects.create(paper=paper, tag=tag, added_at=now - age)
    # An old paper given the tag after the last visit is new to this feed too.
    retagged = PaperFactory(title="Retagged", added_at=now - datetime.timedelta(days=9))
    PaperTag.objects.create(paper=retagged, tag=tag, added_at=now - datetime.timedelta(hours=1))

    response = client.get("/feed/")
    new = {paper.title for paper in response.context["page"].object_list if paper.is_new}
    assert new == {"Fresh", "Retagged"}
    assert response.content.decode().count(NEW_MARK) == 2

    profile = Profile.objects.get(user=reader)
    assert profile.feed_new_since == last_visit
    assert timezone.now() - profile.feed_seen_at < datetime.timedelta(minutes=1)

    # Paging on within the same visit keeps the marks.
    assert client.get("/feed/?page=1", follow=True).content.decode().count(NEW_MARK) == 2

    # A visit after half an hour away is a new one: it marks only what came since.
    Profile.objects.filter(user=reader).update(feed_seen_at=now - datetime.timedelta(minutes=31))
    assert NEW_MARK not in client.get("/feed/").content.decode()


def test_first_visit_marks_nothing(client, reader):
    tag = TagFactory()
    SubscriptionFactory(user=reader, tag=tag)
    PaperFactory(tags=[tag])
    assert NEW_MARK not in client.get("/feed/").content.decode()


@pytest.mark.parametrize("page_size", [5, 20])
def test_feed_costs_the_same_queries_whatever_the_page_size(
    client, reader, django_assert_num_queries, page_size
):
    tag, category = TagFactory(), CategoryFactory(code="cs.LG")
    SubscriptionFactory(user=reader, tag=tag)
    SubscriptionFactory(user=reader, category=category)
    for _ in range(page_size):
        paper = PaperFactory(tags=[tag], categories=[category])
        CodeLinkFactory(paper=paper)
    client.get("/feed/")
    # session, user, profile, papers with their count, tags, filter choices,
    # the reader's subscriptions and saved papers; no last-seen update, as the
    # visit was recorded under a minute ago
    with django_assert_num_queries(7):
        response = client.get("/feed/")
    assert len(response.context["page"].object_list) == page_size


def test_feed_page_links_the_readers_private_feed(client, reader):
    token = Profile.objects.get(user=reader).feed_token
    page = client.get("/feed/").content.decode()
    assert f'href="/feeds/private/{token}.atom"' in page
    assert f'href="/feeds/private/{token}.rss"' in page


def test_a_change_to_subscriptions_is_seen_by_the_same_request(reader):
    tag = TagFactory()
    paper = PaperFactory(tags=[tag])
    assert list(selectors.subscribed_papers(user=reader)) == []
    services.subscribe(user=reader, target=tag)
    assert list(selectors.subscribed_papers(user=reader)) == [paper]
    services.unsubscribe(user=reader, target=tag)
    assert list(selectors.subscribed_papers(user=reader)) == []
    services.save_paper(user=reader, paper=paper)
    assert selectors.reader_ids(user=reader)["saved_paper_ids"] == {paper.pk}
