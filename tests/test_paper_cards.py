"""List cards rendered once and shared between readers (catalog/cards.py), and
whole pages shared by every logged-in reader (catalog/page_cache.py): every
reader's page is exactly what rendering it afresh gives."""

import datetime
import re

import pytest
from django.conf import settings
from django.template.loader import render_to_string
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape

from accounts import reader_parts, toggles
from accounts.models import Profile
from discovery.models import Recommendation
from tests.accounts_factories import SavedPaperFactory, SubscriptionFactory, UserFactory
from tests.catalog_cache import redis_cache_fixture  # noqa: F401
from tests.factories import CodeLinkFactory, PaperFactory, TagFactory

pytestmark = pytest.mark.django_db

CSRF_TOKEN = re.compile(r'name="csrfmiddlewaretoken" value="[^"]+"')
PAGES = [
    "/",
    "/?q=agents",
    "/tags/agents/",
    "/?sort=added",
    "/feed/",
    "/feed/for-you/",
    # Filters chosen, and one wrong (the form shows its error).
    "/?tag=agents&period=30d&has_code=1&page=1",
    "/?from=2026-02-30&category=cs.XX",
    "/trending/",
]


@pytest.fixture
def catalog():
    agents, vision = TagFactory(name="Agents", slug="agents"), TagFactory(name="Vision")
    now = timezone.now()
    papers = [
        PaperFactory(
            title=f"Agents paper {n} with $O(n)$ math",
            abstract="A long abstract about agents. " * (n + 3),
            tags=[agents, vision] if n % 2 else [agents],
            published_at=now - datetime.timedelta(hours=n),
        )
        for n in range(6)
    ]
    CodeLinkFactory(paper=papers[0])
    return {"tags": (agents, vision), "papers": papers}


def readers(catalog) -> list[Client]:
    agents, vision = catalog["tags"]
    papers = catalog["papers"]
    follower, saver = UserFactory(), UserFactory()
    SubscriptionFactory(user=follower, tag=agents)
    SubscriptionFactory(user=saver, tag=agents)
    SubscriptionFactory(user=saver, tag=vision)
    for paper in papers[:3]:
        SavedPaperFactory(user=saver, paper=paper)
    for rank, paper in enumerate(papers[2:], 1):  # the saver's For you, with reasons
        Recommendation.objects.create(
            user=saver,
            paper=paper,
            score=1 / rank,
            because_paper=papers[0] if rank % 2 else None,
            because_tag=None if rank % 2 else agents,
        )
    # Some of the feed is new since the saver's last visit.
    Profile.objects.filter(user=saver).update(recommended_at=timezone.now())
    Profile.objects.filter(user=saver).update(
        feed_seen_at=timezone.now() - datetime.timedelta(hours=3)
    )
    clients = [Client()]
    for user in (follower, saver, UserFactory()):
        client = Client()
        client.force_login(user)
        clients.append(client)
    clients[1].cookies[settings.LANGUAGE_COOKIE_NAME] = "ko"  # one reads in Korean
    return clients


def page(client: Client, path: str) -> str:
    response = client.get(path, follow=True)
    assert response.status_code == 200
    return CSRF_TOKEN.sub('name="csrfmiddlewaretoken" value="-"', response.content.decode())


def test_shared_cards_give_each_reader_the_page_rendered_afresh(catalog, settings):
    clients = readers(catalog)
    settings.PAPER_CARD_CACHE_SIZE = settings.FILTER_FORM_CACHE_SIZE = 0
    fresh = {(n, path): page(client, path) for n, client in enumerate(clients) for path in PAGES}
    for_you = fresh[2, "/feed/for-you/"]  # the saver's
    assert "Because you saved" in for_you and "Not interested" in for_you
    assert 'aria-pressed="true"' in fresh[2, "/"]  # saved papers and followed tags
    settings.PAPER_CARD_CACHE_SIZE = settings.FILTER_FORM_CACHE_SIZE = 100
    for _ in range(2):  # filling the cards, then reading them
        for n, client in enumerate(clients):
            for path in PAGES:
                assert page(client, path) == fresh[n, path], (n, path)


def test_pages_shared_by_readers_give_each_reader_the_page_rendered_afresh(
    catalog, settings, redis_cache
):
    clients = readers(catalog)
    agents = catalog["tags"][0]
    paper = catalog["papers"][1]
    pages = [
        *(path for path in PAGES if not path.startswith("/feed/")),
        f"/tags/{agents.slug}/?period=30d",
        f"/categories/{paper.primary_category.code}/",
        paper.get_absolute_url(),
        "/tags/",
        "/categories/",
    ]
    with_cache = settings.CACHES
    settings.CACHES = {
        **with_cache,
        "catalog": {"BACKEND": "django.core.cache.backends.dummy.DummyCache"},
    }
    fresh = {(n, path): page(client, path) for n, client in enumerate(clients) for path in pages}
    settings.CACHES = with_cache
    for _ in range(2):  # the first reader fills each page, the others read it
        for n, client in enumerate(clients):
            for path in pages:
                assert page(client, path) == fresh[n, path], (n, path)
    assert not any("<!--slot:" in html for html in fresh.values())
    # One entry a page for anonymous readers, one each language's logged-in readers share.
    assert len(redis_cache.keys("catalog:page:*")) == len(pages)
    assert len(redis_cache.keys("catalog:reader-page:*")) == 2 * len(pages)  # English, Korean


def test_a_reader_sees_their_own_change_on_a_shared_page(
    catalog, redis_cache, django_capture_on_commit_callbacks
):
    paper = catalog["papers"][0]
    reader, other = UserFactory(), UserFactory()
    clients = {reader: Client(), other: Client()}
    for user, client in clients.items():
        client.force_login(user)
    clients[other].get("/")  # the page is in the cache

    with django_capture_on_commit_callbacks(execute=True):  # each request commits
        clients[reader].post(reverse("accounts:paper-save", args=[paper.pk]))
        clients[reader].post(reverse("accounts:tag-subscribe", args=["agents"]))
    page(clients[reader], "/")  # with the messages the changes left

    mine, theirs = page(clients[reader], "/"), page(clients[other], "/")
    # Saved, and #agents followed on every card.
    assert mine.count('aria-pressed="true"') == 1 + len(catalog["papers"])
    assert 'aria-pressed="true"' not in theirs
    assert reader.email in mine and reader.email not in theirs
    assert other.email in theirs and other.email not in mine


def test_a_changed_paper_gets_a_new_card(catalog, client):
    paper = catalog["papers"][0]
    assert "Agents paper 0" in page(client, "/")

    paper.title = "Renamed paper"
    paper.save()
    paper.tags.add(TagFactory(name="Robotics"))
    html = page(client, "/")

    assert "Renamed paper" in html
    assert "#Robotics" in html
    assert '<option value="robotics">Robotics</option>' in html  # the filter's options too


def test_the_tag_and_category_indexes_show_every_change_at_once(catalog, client):
    agents = catalog["tags"][0]
    paper = catalog["papers"][0]
    assert "6 papers" in page(client, "/tags/")
    categories = page(client, "/categories/")

    agents.name = "Autonomous agents"
    agents.save()
    PaperFactory(tags=[agents], categories=[paper.primary_category])
    tags = page(client, "/tags/")

    assert "#Autonomous agents" in tags and "7 papers" in tags
    assert page(client, "/categories/") != categories


def test_shared_toggles_are_the_toggle_templates_rendered_for_the_page(catalog, rf):
    agents = catalog["tags"][0]
    paper = catalog["papers"][0]
    reader = UserFactory()
    for path in ('/?q="x"&tag=agents', "/tags/agents/?page=2"):
        request = rf.get(path)
        request.user = reader
        slots = reader_parts.AccountReaderParts(
            request=request,
            saved_paper_ids=frozenset([paper.pk]),
            subscribed=reader_parts.ReaderState(tag_ids=frozenset([agents.pk])),
        )
        token = slots.csrf_token
        for _ in range(2):  # rendered, then read from the process's store
            expected = {
                "save": render_to_string(
                    toggles.SAVE_TEMPLATE,
                    {
                        **toggles.save_context(request=request, paper_id=paper.pk, is_saved=True),
                        "user": reader,
                        "csrf_token": token,
                    },
                ),
                "chip": render_to_string(
                    toggles.SUBSCRIBE_TEMPLATE,
                    {
                        **toggles.subscribe_context(
                            request=request, target=agents, is_subscribed=True, look="chip"
                        ),
                        "user": reader,
                        "csrf_token": token,
                    },
                ),
            }
            assert slots.save_toggle(paper.pk) == expected["save"]
            assert slots.follow_chip(agents) == expected["chip"]
            assert f'value="{escape(request.get_full_path())}"' in expected["save"]
            assert token in expected["save"]
            slots.rendered.clear()
