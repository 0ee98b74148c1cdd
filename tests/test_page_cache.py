"""Anonymous pages in the catalog cache: one entry per canonical page, per host
and scheme, stored compressed, never outliving the catalog version they were
rendered under. (The cache's memory bound under a flood is a fault test:
tests/faults/test_cache_flood.py.)"""

import re

import pytest
import redis
from django.core import checks
from django.core.cache import caches
from django.test import Client
from django.urls import reverse

from accounts import reader_parts
from catalog import cache as catalog_cache
from tests.accounts_factories import SavedPaperFactory, UserFactory
from tests.factories import PaperFactory, TagFactory
from tests.services import redis_db_url

pytestmark = pytest.mark.django_db
TEST_REDIS = redis_db_url(9)


@pytest.fixture
def server(settings):
    """The catalog cache as configured in production, on this suite's own Redis database."""
    settings.CACHES = {
        **settings.CACHES,
        "catalog": {**settings.CATALOG_CACHE_REDIS, "LOCATION": TEST_REDIS},
    }
    server = redis.Redis.from_url(TEST_REDIS)
    server.flushdb()
    yield server
    server.flushdb()


def page_keys(server) -> list[bytes]:
    return server.keys("*catalog:page:*")


def test_unknown_parameters_neither_make_new_entries_nor_reach_the_page(client, server):
    PaperFactory()
    client.get("/")
    responses = [client.get(f"/?utm_source=mail&x={n}") for n in range(5)]

    assert len(page_keys(server)) == 1
    assert all(r.status_code == 200 for r in responses)
    assert all("utm_source" not in r.content.decode() for r in responses)


def test_order_repeats_and_empty_fields_of_known_parameters_share_one_entry(client, server):
    a, b = TagFactory(slug="a"), TagFactory(slug="b")
    PaperFactory(tags=[a, b])
    variants = [
        "/?tag=a&tag=b&q=study",
        "/?q=study&tag=b&tag=a",
        "/?tag=b&tag=a&tag=b&q=other&q=study",
        # The filter form sends every field, filled or not.
        "/?q=study&period=&has_code=&tag=a&tag=b&from=&to=",
    ]
    # The form's empty fields are redirected to the clean address first.
    pages = [client.get(path, follow=True) for path in variants]

    assert len(page_keys(server)) == 1
    # The search's word is marked in the title.
    assert all("A <mark>study</mark> of reasoning" in page.content.decode() for page in pages)


def test_each_host_and_scheme_has_its_own_entry(client, server, settings):
    settings.ALLOWED_HOSTS = ["testserver", "mirror.example"]
    settings.TRUSTED_PROXIES = ["127.0.0.1"]
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    paper = PaperFactory()
    url = paper.get_absolute_url()

    client.get(url, HTTP_HOST="mirror.example")
    client.get(url, HTTP_X_FORWARDED_PROTO="https")
    page = client.get(url).content.decode()

    assert f'<link rel="canonical" href="http://testserver{url}">' in page
    assert len(page_keys(server)) == 3


def test_pages_are_stored_compressed(client, server):
    PaperFactory.create_batch(20)
    page = client.get("/").content

    (key,) = page_keys(server)
    assert server.strlen(key) < len(page) / 3


def test_a_lost_version_never_brings_back_pages_of_an_older_one(client, server):
    paper = PaperFactory(title="First title")
    client.get("/")
    paper.title = "Second title"
    paper.save()
    catalog_cache.bump_catalog_version()
    assert "Second title" in client.get("/").content.decode()

    # Evicted, as a cache under memory pressure may do with any key.
    caches["catalog"].delete(catalog_cache.VERSION_KEY)

    assert "Second title" in client.get("/").content.decode()


def test_head_is_answered_from_the_cache_like_get(client, server, django_assert_num_queries):
    PaperFactory()
    client.get("/")

    with django_assert_num_queries(0):
        response = client.head("/")
    assert response.status_code == 200
    assert response.content == b""


def test_logged_in_readers_share_a_page_and_query_only_for_themselves(
    client, server, django_assert_num_queries
):
    tag = TagFactory(slug="agents")
    papers = PaperFactory.create_batch(3, tags=[tag])
    first, reader = UserFactory(), UserFactory()
    SavedPaperFactory(user=reader, paper=papers[0])
    client.force_login(first)
    client.get("/")
    client.force_login(reader)

    # 1. the session, 2. the reader, 3. their subscriptions and saved papers
    with django_assert_num_queries(3):
        client.get("/")
    # 1. the session: the reader and their ids are kept too (accounts/reader_cache.py)
    with django_assert_num_queries(1):
        page = client.get("/").content.decode()

    assert len(server.keys("*catalog:reader-page:*")) == 1
    assert reader.email in page and first.email not in page
    assert page.count('aria-pressed="true"') == 1  # their saved paper


def test_every_form_of_a_stored_page_carries_one_token_that_is_accepted(client, server):
    paper = PaperFactory()
    reader = UserFactory()
    client = Client(enforce_csrf_checks=True)
    client.force_login(reader)
    client.get("/")
    page = client.get("/").content.decode()  # from the cache, the reader's toggles filled in

    tokens = set(re.findall(r'name="csrfmiddlewaretoken" value="([^"]+)"', page))
    assert len(tokens) == 1  # masked once a page, however many forms
    (token,) = tokens
    saved = client.post(f"/saved/{paper.pk}/save/", {"csrfmiddlewaretoken": token})
    assert saved.status_code == 302 and reader.saved_papers.filter(paper=paper).exists()


def test_a_reader_with_a_message_waiting_gets_the_page_itself(client, server):
    paper = PaperFactory()
    client.force_login(UserFactory())
    client.post(reverse("accounts:for-you-dismiss", args=[paper.pk]))

    page = client.get("/").content.decode()

    assert "You won&#x27;t be shown" in page
    assert not server.keys("*catalog:reader-page:*")


factory_calls: list[str] = []


def counted_reader_parts(request):
    factory_calls.append(request.path)
    return reader_parts.reader_parts(request)


def test_a_readers_page_asks_accounts_for_their_parts_once(client, server, settings):
    settings.READER_PARTS = "tests.test_page_cache.counted_reader_parts"
    factory_calls.clear()
    PaperFactory.create_batch(3, tags=[TagFactory(slug="agents")])
    client.force_login(UserFactory())

    client.get("/tags/agents/")  # rendered and stored
    page = client.get("/tags/agents/").content.decode()  # from the cache, filled

    assert factory_calls == ["/tags/agents/", "/tags/agents/"]
    assert 'class="toggle save-toggle' in page and "<!--slot:" not in page


def test_a_wrong_reader_parts_factory_is_reported_at_once(settings):
    for wrong in ("accounts.reader_parts.nothing", "accounts.reader_parts.BECAUSE_TEMPLATE"):
        settings.READER_PARTS = wrong
        found = [error.id for error in checks.run_checks() if error.id.startswith("catalog.")]
        assert found == ["catalog.E001"], wrong


def test_a_comment_moves_no_version_and_its_count_shows_on_stored_pages(
    client, server, django_capture_on_commit_callbacks
):
    from discussion.services import post_comment

    paper = PaperFactory(arxiv_id="2401.00001")
    other = PaperFactory()
    client.get("/")  # both cards, stored
    client.get(other.get_absolute_url())
    version = catalog_cache.catalog_version()

    with django_capture_on_commit_callbacks(execute=True):
        post_comment(user=UserFactory(), paper=paper, body="A remark.", parent_id=None)
    home = client.get("/").content.decode()
    detail = client.get(paper.get_absolute_url()).content.decode()

    assert catalog_cache.catalog_version() == version  # every stored page stays good
    link = '<a class="action-link comment-count" href="/papers/2401.00001/discussion/">'
    assert f"{link}1 comment</a>" in home
    assert home.count("comment-count") == 1  # none for the paper without comments
    assert "Read the discussion</a> (1 comment)" in detail
    assert "<!--slot:" not in home + detail
