"""Stored script payloads render as inert text everywhere a person reads them.

The browser test (tests/e2e/test_xss_browser.py) checks the same catalog in
Chromium: no payload runs.
"""

import datetime
import html
import xml.etree.ElementTree as ET

import pytest
from django.core import mail
from django.test import Client
from django.utils import timezone

from accounts import emails, selectors
from catalog.rendering import render_markdown
from tests.accounts_factories import SavedPaperFactory, SubscriptionFactory, UserFactory
from tests.html_checks import runnable_markup
from tests.xss_factories import HOSTILE_MARKDOWN, PAYLOADS, RUN, hostile_catalog

pytestmark = pytest.mark.django_db


@pytest.fixture
def hostile():
    return hostile_catalog()


@pytest.fixture
def reader(hostile):
    user = UserFactory()
    SubscriptionFactory(user=user, tag=hostile["tag"])
    SavedPaperFactory(user=user, paper=hostile["paper"])
    return user


def test_public_pages_show_the_payloads_as_text(client, hostile):
    paper = hostile["paper"]
    pages = [
        "/",
        paper.get_absolute_url(),
        "/tags/",
        "/tags/hostile-tag/",
        "/categories/",
        "/categories/cs.XSS/",
        "/?" + "&".join(["tag=hostile-tag", "category=cs.XSS", "period=30d"]),
    ]

    for path in pages:
        page = client.get(path).content.decode()
        assert runnable_markup(page) == [], path
        assert RUN in html.unescape(page), f"{path} does not show the stored text at all"


@pytest.mark.parametrize("payload", PAYLOADS)
def test_search_text_is_shown_back_inert(client, hostile, payload):
    page = client.get("/", {"q": payload}).content.decode()

    assert runnable_markup(page) == []
    assert payload in html.unescape(page)


def test_reader_pages_show_the_payloads_as_text(hostile, reader):
    client = Client()
    client.force_login(reader)

    for path in ("/feed/", "/saved/", "/accounts/subscriptions/"):
        page = client.get(path).content.decode()
        assert runnable_markup(page) == [], path
        assert RUN in html.unescape(page), path


def test_admin_pages_show_the_payloads_as_text(hostile):
    paper = hostile["paper"]
    summary = paper.summaries.first()
    client = Client()
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    pages = [
        "/admin/catalog/paper/",
        f"/admin/catalog/paper/{paper.pk}/change/",
        "/admin/catalog/tag/",
        f"/admin/catalog/tag/{hostile['tag'].pk}/change/",
        "/admin/catalog/summary/",
        f"/admin/catalog/summary/{summary.pk}/change/",
        "/admin/catalog/author/",
        "/admin/catalog/category/",
    ]

    for path in pages:
        response = client.get(path)
        assert response.status_code == 200, path
        assert runnable_markup(response.content.decode()) == [], path


def test_markdown_summaries_keep_formatting_and_drop_scripts():
    rendered = render_markdown(HOSTILE_MARKDOWN)

    assert runnable_markup(rendered) == []
    assert "<strong>Bold</strong> survives." in rendered
    assert "javascript:" not in rendered.lower().replace("&lt;javascript:", "")


@pytest.mark.parametrize("feed", ["latest", "tags/hostile-tag", "categories/cs.XSS"])
@pytest.mark.parametrize("kind", ["rss", "atom"])
def test_feed_entries_are_inert_once_a_reader_decodes_them(client, hostile, feed, kind):
    # Readers unescape the XML, then show an RSS item's description and Atom's
    # type="html" elements as HTML; titles are plain text in both.
    response = client.get(f"/feeds/{feed}.{kind}")
    root = ET.fromstring(response.content)  # noqa: S314 (our own response)
    atom = "{http://www.w3.org/2005/Atom}"

    if kind == "rss":
        shown_as_html = [item.findtext("description") for item in root.iter("item")]
    else:
        shown_as_html = [e.text for e in root.iter(f"{atom}summary") if e.get("type") == "html"]
    assert shown_as_html
    assert all(RUN in text for text in shown_as_html)
    for text in shown_as_html:
        assert runnable_markup(text) == [], text


def test_digest_email_is_inert(hostile, reader):
    now = timezone.now()
    digest = selectors.digest(user=reader, since=now - datetime.timedelta(days=2), until=now)

    emails.send_digest(user=reader, digest=digest, unsubscribe_token="token", language="en")

    (body, mimetype) = mail.outbox[0].alternatives[0]
    assert mimetype == "text/html"
    assert runnable_markup(body) == []
    assert RUN in html.unescape(body)
