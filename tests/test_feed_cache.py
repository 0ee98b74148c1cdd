"""The personal feed and For you kept in the catalog cache, one entry per
reader (catalog.page_cache.cached_page(own=True)): served again without
their queries until the catalog or the reader changes, and the reader's own
change shows on their next request."""

import datetime

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import Profile
from discovery.models import Recommendation
from tests.accounts_factories import SubscriptionFactory, UserFactory
from tests.factories import AuthorFactory, PaperAuthorFactory, PaperFactory, TagFactory

pytestmark = pytest.mark.django_db


def device(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def agents(redis_cache, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        tag = TagFactory(slug="agents", name="agents")
        PaperFactory(title="Agents that plan", tags=[tag])
    return tag


@pytest.fixture
def reader(agents, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        user = UserFactory()
        SubscriptionFactory(user=user, tag=agents)
    return user


def page(client: Client, path: str = "/feed/") -> str:
    response = client.get(path)
    assert response.status_code == 200
    html = response.content.decode()
    assert "<!--slot:" not in html
    return html


def test_a_warm_feed_costs_the_session_and_the_profile(
    reader, agents, django_assert_num_queries, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        for number in range(5):
            PaperFactory(title=f"Agents, part {number}", tags=[agents])
    client = device(reader)
    page(client)

    # 1. the session, 2. the profile (the visit's marks); the reader, their
    # ids and the page come from the cache, and the visit was written a moment ago
    with django_assert_num_queries(2):
        html = page(client)
    assert "Agents, part 4" in html
    assert 'aria-pressed="false"' in html  # the reader's own save toggles, filled in


def test_the_readers_own_changes_show_at_once(reader, agents, django_capture_on_commit_callbacks):
    methods = TagFactory(slug="methods", name="methods")
    author = AuthorFactory(name="Ada Lovelace")
    with django_capture_on_commit_callbacks(execute=True):
        paper = PaperFactory(title="A method of its own", tags=[methods])
        PaperAuthorFactory(paper=PaperFactory(title="Notes on the engine"), author=author)
    laptop, phone = device(reader), device(reader)
    assert "A method of its own" not in page(laptop)

    def change(name: str, *args: object) -> None:
        with django_capture_on_commit_callbacks(execute=True):  # the request commits
            assert phone.post(reverse(f"accounts:{name}", args=args)).status_code == 302
        laptop.get("/")  # the message the change left, shown once

    change("tag-subscribe", "methods")
    assert "A method of its own" in page(laptop)

    change("paper-save", paper.pk)
    assert reverse("accounts:paper-unsave", args=[paper.pk]) in page(laptop)

    change("tag-unsubscribe", "methods")
    assert "A method of its own" not in page(laptop)

    change("author-subscribe", author.slug)
    assert "Notes on the engine" in page(laptop)


def test_a_new_matching_paper_appears(reader, agents, django_capture_on_commit_callbacks):
    client = device(reader)
    assert "Agents that remember" not in page(client)

    with django_capture_on_commit_callbacks(execute=True):  # the ingest's batch commits
        PaperFactory(title="Agents that remember", tags=[agents])

    assert "Agents that remember" in page(client)


def test_another_readers_change_leaves_a_feed_stored(
    reader, agents, django_assert_num_queries, django_capture_on_commit_callbacks
):
    TagFactory(slug="methods", name="methods")
    other = UserFactory()
    with django_capture_on_commit_callbacks(execute=True):
        SubscriptionFactory(user=other, tag=agents)
    theirs, mine = device(other), device(reader)
    page(theirs)

    with django_capture_on_commit_callbacks(execute=True):
        mine.post(reverse("accounts:tag-subscribe", args=["methods"]))

    # 1. the session, 2. the profile: their feed is still the one stored
    with django_assert_num_queries(2):
        html = page(theirs)
    assert "Agents that plan" in html
    assert other.email in html and reader.email not in html


def test_each_reader_gets_their_own_feed(reader, agents, django_capture_on_commit_callbacks):
    other = UserFactory()
    with django_capture_on_commit_callbacks(execute=True):
        methods = TagFactory(slug="methods", name="methods")
        SubscriptionFactory(user=other, tag=methods)
        PaperFactory(title="A method of its own", tags=[methods])

    mine, theirs = page(device(reader)), page(device(other))

    assert "Agents that plan" in mine and "A method of its own" not in mine
    assert "A method of its own" in theirs and "Agents that plan" not in theirs


def test_the_new_marks_move_with_a_new_visit(reader, agents, django_capture_on_commit_callbacks):
    client = device(reader)
    page(client)
    with django_capture_on_commit_callbacks(execute=True):
        PaperFactory(title="Agents that remember", tags=[agents])
    # The reader comes back after an hour away.
    Profile.objects.filter(user=reader).update(
        feed_seen_at=timezone.now() - datetime.timedelta(hours=1)
    )

    html = page(client)

    assert "Papers marked new arrived after your last visit, 1" in html
    assert "ago." in html  # reckoned when served, never stored


@pytest.fixture
def recommended(reader, agents, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        papers = [PaperFactory(title=f"Recommended {n}") for n in range(3)]
        for score, paper in enumerate(papers):
            Recommendation.objects.create(user=reader, paper=paper, score=score, because_tag=agents)
    Profile.objects.filter(user=reader).update(
        recommendations_asked_at=timezone.now() - datetime.timedelta(hours=3),
        recommended_at=timezone.now() - datetime.timedelta(hours=2),
        recommended_until=timezone.now(),
    )
    return papers


def test_a_warm_for_you_costs_the_session_and_the_profile(
    reader, recommended, django_assert_num_queries
):
    client = device(reader)
    page(client, "/feed/for-you/")

    # 1. the session, 2. the profile (when the list was made)
    with django_assert_num_queries(2):
        html = page(client, "/feed/for-you/")
    assert "Recommended 2" in html
    assert "Refreshed every night; last 2" in html  # hours ago, reckoned when served


def test_a_dismissed_paper_leaves_for_you_at_once(
    reader, recommended, django_capture_on_commit_callbacks
):
    client = device(reader)
    assert "Recommended 1" in page(client, "/feed/for-you/")

    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("accounts:for-you-dismiss", args=[recommended[1].pk]))
    client.get("/")  # the message the change left, shown once

    assert "Recommended 1" not in page(client, "/feed/for-you/")


def test_a_new_list_shows_at_once(reader, recommended, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        fresh = PaperFactory(title="Recommended tonight")
    client = device(reader)
    assert "Recommended tonight" not in page(client, "/feed/for-you/")

    # The nightly run: a new list, and when it was made (no catalog change).
    Recommendation.objects.filter(user=reader).delete()
    Recommendation.objects.create(user=reader, paper=fresh, score=1)
    Profile.objects.filter(user=reader).update(recommended_at=timezone.now())

    html = page(client, "/feed/for-you/")
    assert "Recommended tonight" in html and "Recommended 2" not in html
