"""Generated query strings and form posts against every public URL: never a 5xx.

The suite tries 20 queries a route and 40 posts a form (about 2,200 requests);
`make fuzz` multiplies both by FUZZ_SCALE (10 by default) for a deeper pass.
`--hypothesis-show-statistics` prints how many each test ran.
"""

import os
import re
from urllib.parse import quote

import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import URLResolver, get_resolver
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.accounts_factories import SubscriptionFactory, UserFactory
from tests.factories import CategoryFactory, CodeLinkFactory, PaperFactory, TagFactory

# Thousands of generated requests: in `make test` and `make fuzz`, not the quick loop.
pytestmark = [pytest.mark.django_db, pytest.mark.slow]

# Strings that have broken parsers before: SQL and tsquery syntax, markup,
# dates and numbers out of range, odd whitespace, a NUL, very long input.
NASTY = [
    "",
    " ",
    "'",
    '"',
    "' OR 1=1 --",
    "a & | ! ( ) : * <-> b",
    "<script>alert(1)</script>",
    "%",
    "%00",
    "\x00",
    "\t\n\r",
    "../../etc/passwd",
    "2025-13-45",
    "0000-00-00",
    "9999-12-31",
    "-1",
    "0",
    "1e309",
    "9" * 40,
    "NaN",
    "😀",
    "\u202e\u200b",
    "x" * 5000,
    "https://evil.example/",
    "//evil.example",
    "reasoning",
    "cs.CL",
    "2505.10001",
    "2505.10001v2",
    "https://arxiv.org/abs/2505.10001",
    "hep-ex/0406020",
    "7d",
    "relevance",
]
text = st.one_of(
    st.sampled_from(NASTY),
    st.text(st.characters(exclude_categories=("Cs",)), max_size=60),
)
LIST_PARAMS = [
    *["q", "tag", "category", "period", "sort", "window", "has_code", "from", "to", "page"],
    *["cursor", "limit"],
]
query = st.lists(st.tuples(st.one_of(st.sampled_from(LIST_PARAMS), text), text), max_size=8)
path_value = {
    "int": st.one_of(st.integers(min_value=0, max_value=10**30), st.sampled_from(["1", "2"])),
    "slug": st.one_of(
        st.sampled_from(["reasoning", "agents"]), st.from_regex(r"[-a-zA-Z0-9_]+", fullmatch=True)
    ),
    "text": text.filter(bool),
    # A day's address: any calendar date (0001 to 9999), or digits that are none.
    "day": st.one_of(
        st.dates().map(lambda day: day.isoformat()),
        st.from_regex(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", fullmatch=True),
    ),
    "fmt": st.one_of(st.sampled_from(["bib", "ris", "csl.json"]), text.filter(bool)),
}

# Each public route and what its parameters are: ("int" | "slug" | "text" | "fmt" | "day").
# Routes with a regex (allauth's) are listed by the path they answer to.
GET_ROUTES = {
    "": "/",
    "papers/<path:arxiv_id>/": "/papers/{text}/",
    "p/<int:pk>/": "/p/{int}/",
    "papers/<path:arxiv_id>/discussion/": "/papers/{text}/discussion/",
    "papers/<path:arxiv_id>/read/": "/papers/{text}/read/",
    "papers/<path:arxiv_id>/ask/": "/papers/{text}/ask/",
    "p/<int:pk>/discussion/": "/p/{int}/discussion/",
    "discussion/<int:paper_id>/": "/discussion/{int}/",
    "discussion/comments/<int:comment_id>/edit/": "/discussion/comments/{int}/edit/",
    "discussion/unsubscribe/<str:token>/": "/discussion/unsubscribe/{text}/",
    "feeds/discussion/<int:paper_id>.rss": "/feeds/discussion/{int}.rss",
    "feeds/discussion/<int:paper_id>.atom": "/feeds/discussion/{int}.atom",
    "trending/": "/trending/",
    "tags/": "/tags/",
    "tags/<slug:slug>/": "/tags/{slug}/",
    "daily/": "/daily/",
    "daily/<day:day>/": "/daily/{day}/",
    "daily/<day:day>/feed.rss": "/daily/{day}/feed.rss",
    "daily/<day:day>/feed.atom": "/daily/{day}/feed.atom",
    "tags/<slug:slug>/daily/": "/tags/{slug}/daily/",
    "tags/<slug:slug>/daily/<day:day>/": "/tags/{slug}/daily/{day}/",
    "tags/<slug:slug>/daily/<day:day>/feed.rss": "/tags/{slug}/daily/{day}/feed.rss",
    "tags/<slug:slug>/daily/<day:day>/feed.atom": "/tags/{slug}/daily/{day}/feed.atom",
    "categories/": "/categories/",
    "categories/<path:code>/": "/categories/{text}/",
    "authors/<str:slug>/": "/authors/{text}/",
    "robots.txt": "/robots.txt",
    "favicon.ico": "/favicon.ico",
    "media/<path:path>": "/media/{text}",
    "feed/": "/feed/",
    "feed/for-you/": "/feed/for-you/",
    "saved/": "/saved/",
    "accounts/subscriptions/": "/accounts/subscriptions/",
    "suggest/": "/suggest/",
    "search/suggestions/": "/search/suggestions/",
    "readers/<str:display_name>/": "/readers/{text}/",
    "feeds/latest.rss": "/feeds/latest.rss",
    "feeds/latest.atom": "/feeds/latest.atom",
    "feeds/search.rss": "/feeds/search.rss",
    "feeds/search.atom": "/feeds/search.atom",
    "feeds/tags/<slug:slug>.rss": "/feeds/tags/{slug}.rss",
    "feeds/tags/<slug:slug>.atom": "/feeds/tags/{slug}.atom",
    "feeds/authors/<str:slug>.rss": "/feeds/authors/{text}.rss",
    "feeds/authors/<str:slug>.atom": "/feeds/authors/{text}.atom",
    "feeds/categories/<path:code>.rss": "/feeds/categories/{text}.rss",
    "feeds/categories/<path:code>.atom": "/feeds/categories/{text}.atom",
    "feeds/private/<str:token>.rss": "/feeds/private/{text}.rss",
    "feeds/private/<str:token>.atom": "/feeds/private/{text}.atom",
    "digests/unsubscribe/<str:token>/": "/digests/unsubscribe/{text}/",
    "accounts/login/": "/accounts/login/",
    "accounts/signup/": "/accounts/signup/",
    "accounts/inactive/": "/accounts/inactive/",
    "accounts/confirm-email/": "/accounts/confirm-email/",
    "accounts/^confirm-email/(?P<key>[-:\\w]+)/$": "/accounts/confirm-email/{slug}/",
    "accounts/password/reset/": "/accounts/password/reset/",
    "accounts/password/reset/done/": "/accounts/password/reset/done/",
    "accounts/password/reset/key/done/": "/accounts/password/reset/key/done/",
    "accounts/^password/reset/key/(?P<uidb36>[0-9A-Za-z]+)-(?P<key>.+)/$": (
        "/accounts/password/reset/key/{slug}-{text}/"
    ),
    "accounts/login/code/confirm/": "/accounts/login/code/confirm/",
    "accounts/email/": "/accounts/email/",
    "accounts/password/change/": "/accounts/password/change/",
    "accounts/password/set/": "/accounts/password/set/",
    "accounts/reauthenticate/": "/accounts/reauthenticate/",
    "accounts/reauthenticate/code/": "/accounts/reauthenticate/code/",
    "accounts/reauthenticate/code/confirm/": "/accounts/reauthenticate/code/confirm/",
    "accounts/3rdparty/": "/accounts/3rdparty/",
    "accounts/3rdparty/login/cancelled/": "/accounts/3rdparty/login/cancelled/",
    "accounts/3rdparty/login/error/": "/accounts/3rdparty/login/error/",
    "accounts/3rdparty/signup/": "/accounts/3rdparty/signup/",
    "accounts/social/login/cancelled/": "/accounts/social/login/cancelled/",
    "accounts/social/login/error/": "/accounts/social/login/error/",
    "accounts/social/signup/": "/accounts/social/signup/",
    "accounts/social/connections/": "/accounts/social/connections/",
    "export.<str:fmt>": "/export.{fmt}",
    "tags/<slug:slug>/export.<str:fmt>": "/tags/{slug}/export.{fmt}",
    "categories/<path:code>/export.<str:fmt>": "/categories/{text}/export.{fmt}",
    "authors/<str:slug>/export.<str:fmt>": "/authors/{text}/export.{fmt}",
    "feed/export.<str:fmt>": "/feed/export.{fmt}",
    "saved/export.<str:fmt>": "/saved/export.{fmt}",
    "sitemap.xml": "/sitemap.xml",
    "sitemap-pages.xml": "/sitemap-pages.xml",
    "sitemap-papers-<int:block>.xml": "/sitemap-papers-{int}.xml",
    "opensearch.xml": "/opensearch.xml",
    # The API (also fuzzed from its schema, in tests/test_api_fuzz.py).
    "api/docs": "/api/docs",
    "api/": "/api/",
    "api/v1/": "/api/v1/",
    "api/v1/openapi.json": "/api/v1/openapi.json",
    "api/v1/papers": "/api/v1/papers",
    "api/v1/trending": "/api/v1/trending",
    "api/v1/changes": "/api/v1/changes",
    "api/v1/dump": "/api/v1/dump",
    "api/v1/dump/papers.jsonl.gz": "/api/v1/dump/papers.jsonl.gz",
    "api/v1/papers/<path:ref>": "/api/v1/papers/{text}",
    "api/v1/papers/<path:ref>/upvote": "/api/v1/papers/{text}/upvote",
    "api/v1/papers/<path:ref>/comments": "/api/v1/papers/{text}/comments",
    "api/v1/tags": "/api/v1/tags",
    "api/v1/categories": "/api/v1/categories",
    "api/v1/me/feed": "/api/v1/me/feed",
    "api/v1/me/saved": "/api/v1/me/saved",
    "api/v1/me/saved/<path:ref>": "/api/v1/me/saved/{text}",
    "api/v1/me/subscriptions": "/api/v1/me/subscriptions",
    "api/v1/me/subscriptions/tags/<slug>": "/api/v1/me/subscriptions/tags/{slug}",
    "api/v1/me/subscriptions/authors/<author>": "/api/v1/me/subscriptions/authors/{text}",
    "api/v1/me/subscriptions/categories/<path:code>": (
        "/api/v1/me/subscriptions/categories/{text}"
    ),
}
# The forms a visitor can post, with the fields each form reads.
POST_FORMS = {
    "i18n/setlang/": ("/i18n/setlang/", ["language", "next"]),
    "feed/opened/<int:paper_id>/": ("/feed/opened/{int}/", []),
    "saved/<int:paper_id>/save/": ("/saved/{int}/save/", ["next"]),
    "feed/for-you/<int:paper_id>/not-interested/": (
        "/feed/for-you/{int}/not-interested/",
        ["next"],
    ),
    "saved/<int:paper_id>/unsave/": ("/saved/{int}/unsave/", ["next"]),
    "upvotes/<int:paper_id>/upvote/": ("/upvotes/{int}/upvote/", ["next"]),
    "upvotes/<int:paper_id>/take-back/": ("/upvotes/{int}/take-back/", ["next"]),
    "tags/<slug:key>/subscribe/": ("/tags/{slug}/subscribe/", ["next", "look"]),
    "tags/<slug:key>/unsubscribe/": ("/tags/{slug}/unsubscribe/", ["next", "look"]),
    "categories/<path:key>/subscribe/": ("/categories/{text}/subscribe/", ["next", "look"]),
    "categories/<path:key>/unsubscribe/": ("/categories/{text}/unsubscribe/", ["next", "look"]),
    "authors/<str:key>/follow/": ("/authors/{text}/follow/", ["next", "look"]),
    "authors/<str:key>/unfollow/": ("/authors/{text}/unfollow/", ["next", "look"]),
    "accounts/subscriptions/": ("/accounts/subscriptions/", ["digest_frequency"]),
    "accounts/feed-token/": ("/accounts/feed-token/", []),
    "accounts/public-profile/": (
        "/accounts/public-profile/",
        ["display_name", "public_profile", "show_upvotes"],
    ),
    "accounts/api-tokens/": ("/accounts/api-tokens/", ["name"]),
    "accounts/api-tokens/<int:token_id>/revoke/": ("/accounts/api-tokens/{int}/revoke/", []),
    "suggest/": ("/suggest/", ["link", "tag", "note"]),
    "discussion/<int:paper_id>/post/": ("/discussion/{int}/post/", ["body", "parent", "website"]),
    "discussion/<int:paper_id>/follow/": ("/discussion/{int}/follow/", ["follow"]),
    "ask/<int:paper_id>/": ("/ask/{int}/", ["question"]),
    "discussion/comments/<int:comment_id>/edit/": ("/discussion/comments/{int}/edit/", ["body"]),
    "discussion/comments/<int:comment_id>/delete/": ("/discussion/comments/{int}/delete/", []),
    "discussion/comments/<int:comment_id>/report/": (
        "/discussion/comments/{int}/report/",
        ["reason"],
    ),
    "discussion/unsubscribe/<str:token>/": ("/discussion/unsubscribe/{text}/", []),
    "digests/unsubscribe/<str:token>/": ("/digests/unsubscribe/{text}/", []),
    "accounts/login/": ("/accounts/login/", ["login", "password", "remember", "next"]),
    "accounts/signup/": ("/accounts/signup/", ["email", "password1", "password2"]),
    "accounts/password/reset/": ("/accounts/password/reset/", ["email"]),
    "accounts/logout/": ("/accounts/logout/", ["next"]),
}
PLACEHOLDER = re.compile(r"\{(int|slug|text|fmt|day)\}")


FUZZ_SCALE = int(os.environ.get("FUZZ_SCALE", "1"))


def fuzz(examples: int) -> settings:
    # The catalog fixture is shared by all examples of a test, which only read it.
    return settings(
        max_examples=examples * FUZZ_SCALE,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )


def public_routes() -> set[str]:
    def walk(resolver: URLResolver, prefix: str = ""):
        for pattern in resolver.url_patterns:
            if isinstance(pattern, URLResolver):
                yield from walk(pattern, prefix + str(pattern.pattern))
            else:
                yield prefix + str(pattern.pattern)

    return {route for route in walk(get_resolver()) if not route.startswith("admin/")}


@st.composite
def url(draw, template: str) -> str:
    return PLACEHOLDER.sub(lambda m: quote(str(draw(path_value[m.group(1)])), safe=""), template)


@pytest.fixture
def catalog():
    cache.clear()
    reasoning = TagFactory(name="Reasoning", slug="reasoning")
    TagFactory(name="Agents", slug="agents")
    category = CategoryFactory(code="cs.CL")
    papers = [PaperFactory(tags=[reasoning], categories=[category]) for _ in range(3)]
    CodeLinkFactory(paper=papers[0])
    yield papers
    cache.clear()


@pytest.fixture
def reader_client():
    reader = UserFactory()
    SubscriptionFactory(user=reader, tag=TagFactory(name="Followed", slug="followed"))
    client = Client(raise_request_exception=False)
    client.force_login(reader)
    return client


def assert_no_server_error(response, method: str, path: str, data) -> None:
    assert response.status_code < 500, f"{method} {path} {data!r} -> {response.status_code}"


def test_every_public_route_is_fuzzed():
    # A new URL fails this until it is added to the tables above.
    assert public_routes() == set(GET_ROUTES) | set(POST_FORMS) | {"accounts/logout/"}


@pytest.mark.parametrize("template", sorted(GET_ROUTES.values()))
@fuzz(20)
@given(data=st.data())
def test_get_with_any_query_is_never_a_server_error(catalog, reader_client, template, data):
    path = data.draw(url(template))
    params = data.draw(query)
    logged_in = data.draw(st.booleans())
    client = reader_client if logged_in else Client(raise_request_exception=False)

    response = client.get(path, params, HTTP_HX_REQUEST=data.draw(st.sampled_from(["", "true"])))

    assert_no_server_error(response, "GET", path, params)


@pytest.mark.parametrize(("template", "fields"), POST_FORMS.values())
@fuzz(40)
@given(data=st.data())
def test_form_posts_with_any_values_are_never_a_server_error(
    catalog, reader_client, template, fields, data
):
    path = data.draw(url(template))
    form = {name: data.draw(text) for name in fields}
    form.update(data.draw(st.dictionaries(text, text, max_size=3)))
    logged_in = data.draw(st.booleans())
    client = reader_client if logged_in else Client(raise_request_exception=False)

    response = client.post(path, form, HTTP_HX_REQUEST=data.draw(st.sampled_from(["", "true"])))

    assert_no_server_error(response, "POST", path, form)


@pytest.mark.parametrize("next_url", ["'", "feed", "catalog:nothing"])
def test_a_next_that_is_no_path_is_not_taken_for_a_view_name(catalog, reader_client, next_url):
    # Found by the fuzzing above: redirect() tried to reverse these and failed with a 500.
    response = reader_client.post("/tags/reasoning/subscribe/", {"next": next_url})

    assert response.status_code == 302
