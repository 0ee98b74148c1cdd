"""RSS 2.0 and Atom feeds of the paper lists and of a reader's subscriptions."""

import calendar
import datetime
import html

import feedparser
import pytest
from django.utils import timezone

from accounts.models import Profile
from tests.accounts_factories import SubscriptionFactory, UserFactory
from tests.factories import CategoryFactory, PaperFactory, TagFactory

pytestmark = pytest.mark.django_db
FORMATS = ["rss", "atom"]


def parse(response):
    assert response.status_code == 200, response.content[:500]
    feed = feedparser.parse(response.content)
    assert feed.bozo == 0, feed.bozo_exception
    return feed


@pytest.mark.parametrize("fmt", FORMATS)
def test_latest_feed_is_valid_with_absolute_links_and_dates(client, fmt):
    published = timezone.now().replace(microsecond=0) - datetime.timedelta(days=2)
    paper = PaperFactory(
        title="Escaping <tags> & ampersands",
        abstract="We show that x < y & <b>bold</b> claims hold.",
        published_at=published,
        authors=["Ada Lovelace", "Alan Turing"],
        tags=[TagFactory(name="Alpha"), TagFactory(name="Beta")],
    )
    PaperFactory(is_visible=False)

    response = client.get(f"/feeds/latest.{fmt}")
    expected_type = "application/rss+xml" if fmt == "rss" else "application/atom+xml"
    assert response["Content-Type"].startswith(expected_type)
    feed = parse(response)
    assert len(feed.entries) == 1  # one entry per paper, hidden papers left out
    entry = feed.entries[0]
    assert entry.title == paper.title
    assert entry.link == f"http://testserver{paper.get_absolute_url()}"
    assert calendar.timegm(entry.published_parsed) == int(published.timestamp())
    # The abstract is text: shown as written, never read as markup.
    assert entry.summary == "We show that x &lt; y &amp; &lt;b&gt;bold&lt;/b&gt; claims hold."
    assert {tag.term for tag in entry.tags} == {"Alpha", "Beta"}
    assert "Ada Lovelace" in entry.author
    assert feed.feed.link == "http://testserver/"


@pytest.mark.parametrize("fmt", FORMATS)
def test_tag_and_category_feeds(client, fmt):
    tag = TagFactory()
    category = CategoryFactory(code="math.GT")
    PaperFactory(title="Tagged", tags=[tag])
    PaperFactory(title="Knots", categories=[category])

    assert [e.title for e in parse(client.get(f"/feeds/tags/{tag.slug}.{fmt}")).entries] == [
        "Tagged"
    ]
    category_feed = parse(client.get(f"/feeds/categories/math.GT.{fmt}"))
    assert [e.title for e in category_feed.entries] == ["Knots"]
    assert client.get(f"/feeds/tags/no-such-tag.{fmt}").status_code == 404
    assert client.get(f"/feeds/categories/xx.NOPE.{fmt}").status_code == 404


def shown(detail) -> str:
    """What a feed reader shows for a text or HTML construct, with its markup
    kept visible: text as it is, HTML only when it holds no markup at all."""
    if detail.type == "text/plain":
        return detail.value
    assert detail.type == "text/html"
    assert "<" not in detail.value, f"markup in {detail.value!r}"
    return html.unescape(detail.value)


@pytest.mark.parametrize("fmt", FORMATS)
def test_curators_text_in_a_feeds_description_is_shown_as_written(client, fmt):
    TagFactory(slug="agents", description="Agents <b>that act</b> & plan")
    CategoryFactory(code="cs.MA", name="Multiagent <i>Systems</i> & more")

    tag_feed = parse(client.get(f"/feeds/tags/agents.{fmt}")).feed
    category_feed = parse(client.get(f"/feeds/categories/cs.MA.{fmt}")).feed

    # RSS's channel description may be read as HTML, Atom's subtitle is text.
    assert tag_feed.subtitle_detail.type == ("text/html" if fmt == "rss" else "text/plain")
    assert shown(tag_feed.subtitle_detail) == "Agents <b>that act</b> & plan"
    assert shown(category_feed.subtitle_detail) == (
        "The newest papers in Multiagent <i>Systems</i> & more."
    )


@pytest.mark.parametrize("fmt", FORMATS)
def test_search_feed_takes_the_list_parameters(client, fmt):
    tag = TagFactory()
    PaperFactory(title="Sparse attention for long context", tags=[tag])
    PaperFactory(title="Sparse attention elsewhere")
    PaperFactory(title="Something unrelated", tags=[tag])

    feed = parse(client.get(f"/feeds/search.{fmt}?q=sparse+attention&tag={tag.slug}"))
    assert [e.title for e in feed.entries] == ["Sparse attention for long context"]
    assert feed.feed.link.startswith("http://testserver/?q=sparse")

    # Parameters the list ignores are ignored here too.
    assert len(parse(client.get(f"/feeds/search.{fmt}?page=abc&utm=x")).entries) == 3


@pytest.mark.parametrize(
    "query",
    ["period=forever", "from=yesterday", "tag=no-such-tag", "from=2025-02-01&to=2025-01-01"],
)
def test_search_feed_with_bad_parameters_is_a_400(client, query):
    response = client.get(f"/feeds/search.atom?{query}")
    assert response.status_code == 400


@pytest.mark.parametrize("fmt", FORMATS)
def test_private_feed_of_a_readers_subscriptions(client, fmt):
    reader = UserFactory()
    tag = TagFactory()
    SubscriptionFactory(user=reader, tag=tag)
    PaperFactory(title="Followed", tags=[tag])
    PaperFactory(title="Not followed")
    token = Profile.objects.get(user=reader).feed_token

    feed = parse(client.get(f"/feeds/private/{token}.{fmt}"))
    assert [e.title for e in feed.entries] == ["Followed"]
    assert client.get(f"/feeds/private/not-a-token.{fmt}").status_code == 404


def test_a_new_private_feed_address_retires_the_old_one(client):
    reader = UserFactory()
    old_token = Profile.objects.get(user=reader).feed_token
    client.force_login(reader)
    assert old_token in client.get("/accounts/subscriptions/").content.decode()

    response = client.post("/accounts/feed-token/")
    assert response.url == "/accounts/subscriptions/"
    new_token = Profile.objects.get(user=reader).feed_token
    assert new_token != old_token
    assert client.get(f"/feeds/private/{old_token}.rss").status_code == 404
    parse(client.get(f"/feeds/private/{new_token}.rss"))
    assert client.get("/accounts/feed-token/").status_code == 405


def test_feed_tokens_are_unique_per_reader():
    tokens = {Profile.objects.get(user=UserFactory()).feed_token for _ in range(3)}
    assert len(tokens) == 3


@pytest.mark.parametrize("page_size", [5, 20])
@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("/feeds/latest.rss", 2),  # papers, tags
        ("/feeds/tags/{slug}.atom", 3),  # tag, papers, tags
        ("/feeds/search.rss?tag={slug}", 3),  # the tag parameter, papers, tags
        ("/feeds/private/{token}.atom", 4),  # profile, followed ids, papers, tags
    ],
)
def test_feeds_cost_the_same_queries_whatever_their_length(
    client, django_assert_num_queries, page_size, url, expected
):
    reader = UserFactory()
    tag = TagFactory()
    SubscriptionFactory(user=reader, tag=tag)
    for _ in range(page_size):
        PaperFactory(tags=[tag, TagFactory()])
    url = url.format(slug=tag.slug, token=Profile.objects.get(user=reader).feed_token)
    with django_assert_num_queries(expected):
        response = client.get(url)
    assert len(parse(response).entries) == page_size


def test_list_pages_link_their_feeds(client):
    tag = TagFactory()
    category = CategoryFactory(code="cs.CV")
    home = client.get("/").content.decode()
    assert '<link rel="alternate" type="application/atom+xml"' in home
    assert 'href="/feeds/latest.rss"' in home
    tag_page = client.get(tag.get_absolute_url()).content.decode()
    assert f'href="/feeds/tags/{tag.slug}.rss"' in tag_page
    assert f'href="/feeds/tags/{tag.slug}.atom"' in tag_page
    assert (
        'href="/feeds/categories/cs.CV.atom"'
        in client.get(category.get_absolute_url()).content.decode()
    )
    search = client.get("/?q=diffusion&period=7d&page=2").content.decode()
    assert 'href="/feeds/search.rss?period=7d&amp;q=diffusion"' in search


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_unchanged_feed_is_answered_304(client, fmt):
    PaperFactory()
    first = client.get(f"/feeds/latest.{fmt}")
    assert first["ETag"] and first["Last-Modified"]

    by_date = client.get(f"/feeds/latest.{fmt}", HTTP_IF_MODIFIED_SINCE=first["Last-Modified"])
    by_etag = client.get(f"/feeds/latest.{fmt}", HTTP_IF_NONE_MATCH=first["ETag"])
    assert (by_date.status_code, by_date.content) == (304, b"")
    assert (by_etag.status_code, by_etag.content) == (304, b"")

    PaperFactory(published_at=timezone.now())
    changed = client.get(
        f"/feeds/latest.{fmt}",
        HTTP_IF_MODIFIED_SINCE=first["Last-Modified"],
        HTTP_IF_NONE_MATCH=first["ETag"],
    )
    assert changed.status_code == 200
    assert len(parse(changed).entries) == 2


def test_a_private_feed_is_kept_by_no_cache_on_the_way(client):
    profile = SubscriptionFactory(tag=TagFactory()).user.profile

    response = client.get(f"/feeds/private/{profile.feed_token}.rss")

    assert response.status_code == 200
    assert {"private", "no-store"} <= {
        part.strip() for part in response["Cache-Control"].split(",")
    }
