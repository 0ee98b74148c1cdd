"""List cards rendered once and shared between readers (catalog/cards.py), and
whole pages shared by every logged-in reader (catalog/page_cache.py): every
reader's page is exactly what rendering it afresh gives."""

import datetime
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.template.autoreload import reset_loaders
from django.template.loader import render_to_string
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape

from accounts import reader_parts, toggles
from accounts.models import Profile
from catalog import cards, curation, services
from catalog.models import CodeLink, Paper, PaperImage
from catalog.selectors import with_list_related
from discovery.models import Recommendation
from tests.accounts_factories import SavedPaperFactory, SubscriptionFactory, UserFactory
from tests.factories import CategoryFactory, CodeLinkFactory, PaperFactory, TagFactory

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
    sizes = [
        "PAPER_CARD_CACHE_SIZE",
        "INDEX_CARDS_CACHE_SIZE",
        "FILTER_FORM_CACHE_SIZE",
        "READER_PARTS_CACHE_SIZE",
        "FOR_YOU_REASONS_CACHE_SIZE",
    ]
    for size in sizes:
        setattr(settings, size, 0)
    fresh = {(n, path): page(client, path) for n, client in enumerate(clients) for path in PAGES}
    for_you = fresh[2, "/feed/for-you/"]  # the saver's
    assert "Because you saved" in for_you and "Not interested" in for_you
    assert 'aria-pressed="true"' in fresh[2, "/"]  # saved papers and followed tags
    for size in sizes:
        setattr(settings, size, 100)
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
    assert ">Robotics</a>" in html
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

    assert ">Autonomous agents</a>" in tags and "7 papers" in tags
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


def card_of(paper: Paper, *, trending_window: str | None = None) -> tuple[str, str]:
    """The paper's card as a list gets it from the process's store, and rendered afresh."""
    listed = with_list_related(Paper.objects.filter(pk=paper.pk)).get()
    context = {"paper": listed, "list_thumbnails": True, "trending_window": trending_window}
    fresh = render_to_string(cards.CARD_TEMPLATE, context)
    shared = cards.shared_card(listed, thumbnails=True, trending_window=trending_window)
    return shared, fresh


def test_a_change_to_anything_a_card_shows_gives_a_new_card(settings):
    settings.PREVIEW_LIST_THUMBNAILS = True
    agents, vision = TagFactory(name="Agents", slug="agents"), TagFactory(name="Vision")
    paper = PaperFactory(tags=[agents], authors=["Ada Lovelace"])
    other_category = CategoryFactory(code="cs.RO", name="Robotics")

    def set_on(target, **values):
        for name, value in values.items():
            setattr(target, name, value)
        target.save()

    changes = {
        "title": lambda: set_on(paper, title="A renamed study"),
        "abstract": lambda: set_on(paper, abstract="Another abstract."),
        "arXiv id": lambda: set_on(paper, arxiv_id="2601.00001"),
        "authors": lambda: services.set_authors(paper, ["Ada Lovelace", "Alan Turing"]),
        "first published": lambda: set_on(
            paper, published_at=paper.published_at - datetime.timedelta(days=40)
        ),
        "date precision": lambda: set_on(paper, published_precision=Paper.DatePrecision.MONTH),
        "added, shown without a published date": lambda: set_on(paper, published_at=None),
        "added date": lambda: set_on(paper, added_at=paper.added_at - datetime.timedelta(days=3)),
        "category name": lambda: set_on(paper.primary_category, name="Computation and Language"),
        "category code": lambda: set_on(paper.primary_category, code="cs.CY"),
        "primary category": lambda: set_on(paper, primary_category=other_category),
        "tag name": lambda: set_on(agents, name="Autonomous agents"),
        "tag slug": lambda: set_on(agents, slug="autonomous-agents"),
        "tag added": lambda: paper.tags.add(vision),
        "tag taken off": lambda: curation.remove_tag(
            Paper.objects.filter(pk=paper.pk), vision, by="test"
        ),
        "official code": lambda: CodeLinkFactory(paper=paper, url="https://github.com/lab/a"),
        "official code moved": lambda: set_on(
            CodeLink.objects.get(paper=paper), url="https://github.com/lab/b"
        ),
        "official code gone": lambda: CodeLink.objects.get(paper=paper).delete(),
        "thumbnail": lambda: PaperImage.objects.create(
            paper=paper, kind=PaperImage.Kind.FIRST_PAGE, image="previews/1/page-0-a.png"
        ),
        "thumbnail replaced": lambda: set_on(
            PaperImage.objects.get(paper=paper), image="previews/1/page-0-b.png"
        ),
    }
    shown, fresh = card_of(paper)
    assert shown == fresh
    for change, write in changes.items():
        write()
        paper.refresh_from_db()
        before = shown
        shown, fresh = card_of(paper)
        assert shown == fresh, change
        assert shown != before, change

    # Trending scores are rewritten by their refresh alone: the badge is an option of the list.
    plain, _ = card_of(paper, trending_window="7d")
    Paper.objects.filter(pk=paper.pk).update(trending_7d=1.5)
    shown, fresh = card_of(paper, trending_window="7d")
    assert shown == fresh
    assert shown != plain and "Trending" in shown


@pytest.fixture
def edited_templates(settings) -> dict[str, str]:
    """Templates a test edits in place, ahead of the project's, behind the cached loader
    as in production; `reset_loaders()` is what the development server's reload does."""
    edited: dict[str, str] = {}
    settings.TEMPLATES = [
        {
            **settings.TEMPLATES[0],
            "APP_DIRS": False,
            "OPTIONS": {
                **settings.TEMPLATES[0]["OPTIONS"],
                "loaders": [
                    (
                        "django.template.loaders.cached.Loader",
                        [
                            ("django.template.loaders.locmem.Loader", edited),
                            "django.template.loaders.filesystem.Loader",
                            "django.template.loaders.app_directories.Loader",
                        ],
                    )
                ],
            },
        }
    ]
    return edited


def test_an_edited_card_template_gives_new_cards_without_a_restart(edited_templates):
    """The development server reloads edited templates without restarting."""
    edited = edited_templates
    edited["catalog/_paper_date.html"] = "<span>date one</span>"
    paper = PaperFactory()
    assert "date one" in card_of(paper)[0]

    edited["catalog/_paper_date.html"] = "<span>date two</span>"  # an include of the card
    reset_loaders()

    shown, fresh = card_of(paper)
    assert "date two" in shown
    assert shown == fresh


def test_a_change_to_anything_an_index_card_shows_is_shown_at_once(client):
    agents = TagFactory(name="Agents", slug="agents", description="Papers on agents.")
    paper = PaperFactory(tags=[agents])
    category = paper.primary_category

    def set_on(target, **values):
        for name, value in values.items():
            setattr(target, name, value)
        target.save()

    tag_changes = [
        (lambda: set_on(agents, name="Autonomous agents"), ">Autonomous agents<"),
        (lambda: set_on(agents, slug="autonomous"), 'href="/tags/autonomous/"'),
        (lambda: set_on(agents, description="Agents that act."), "Agents that act."),
        (lambda: PaperFactory(tags=[agents]), "2 papers"),
        (lambda: TagFactory(name="Vision"), ">Vision<"),
    ]
    category_changes = [
        (lambda: set_on(category, name="Computational linguistics"), "Computational linguistics"),
        (lambda: set_on(category, code="cs.CY"), 'href="/categories/cs.CY/"'),
        (lambda: PaperFactory(primary_category=category), "3 papers"),
        (lambda: PaperFactory(primary_category=CategoryFactory(code="cs.RO")), "cs.RO"),
    ]
    for path, changes in (("/tags/", tag_changes), ("/categories/", category_changes)):
        page = client.get(path).content.decode()
        for write, shown in changes:
            assert shown not in page, (path, shown)
            write()
            page = client.get(path).content.decode()
            assert shown in page, (path, shown)


def test_a_change_to_the_filters_options_is_shown_at_once(client):
    agents = TagFactory(name="Agents", slug="agents")
    PaperFactory(tags=[agents])

    def options() -> str:
        return client.get("/?tag=agents").content.decode()

    assert '<option value="agents" selected>Agents</option>' in options()
    agents.name = "Autonomous agents"
    agents.save()
    assert '<option value="agents" selected>Autonomous agents</option>' in options()
    TagFactory(name="Vision", slug="vision")
    assert '<option value="vision">Vision</option>' in options()
    CategoryFactory(code="cs.RO")
    assert '<option value="cs.RO">cs.RO ' in options()
    agents.slug = "autonomous"
    agents.save()
    page = options()  # the chosen tag is gone: the form says so
    assert '<option value="autonomous">Autonomous agents</option>' in page
    assert "field-error" in page


def test_a_store_sized_below_zero_stops_the_site_from_starting():
    env = {**os.environ, "DEBUG": "1", "INDEX_CARDS_CACHE_SIZE": "-1"}
    started = subprocess.run(
        [sys.executable, "-c", "import config.settings"],
        cwd=Path(__file__).resolve().parent.parent,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )

    assert started.returncode != 0
    assert "INDEX_CARDS_CACHE_SIZE is a number of fragments, 0 or more, not -1." in started.stderr


def test_an_edited_toggle_template_gives_new_toggles_without_a_restart(edited_templates, rf):
    """Reader parts kept rendered per process are keyed on their template's source too."""
    edited = edited_templates
    edited[toggles.SAVE_TEMPLATE] = "<button>save one</button>"
    paper, request = PaperFactory(), rf.get("/")
    request.user = UserFactory()

    def save_toggle() -> str:
        parts = reader_parts.AccountReaderParts(
            request=request, saved_paper_ids=frozenset(), subscribed=reader_parts.ReaderState()
        )
        return parts.save_toggle(paper.pk)

    assert "save one" in save_toggle()
    edited[toggles.SAVE_TEMPLATE] = "<button>save two</button>"
    reset_loaders()

    assert "save two" in save_toggle()
