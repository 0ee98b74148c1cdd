"""Readers' API tokens: made and revoked on the subscriptions page, kept hashed,
and the personal endpoints they open, to their owner alone."""

import hashlib
import re

import pytest
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from accounts import services
from accounts.models import ApiToken, SavedPaper, Subscription
from tests.accounts_factories import SavedPaperFactory, SubscriptionFactory, UserFactory
from tests.factories import CategoryFactory, PaperFactory, TagFactory

pytestmark = pytest.mark.django_db


def bearer(secret: str) -> dict:
    return {"HTTP_AUTHORIZATION": f"Bearer {secret}"}


@pytest.fixture
def reader():
    user = UserFactory()
    _, secret = services.create_api_token(user=user, name="script")
    return user, secret


def test_a_token_is_made_on_the_settings_page_shown_once_and_kept_hashed(client):
    user = UserFactory()
    client.force_login(user)

    made = client.post("/accounts/api-tokens/", {"name": "my script"})

    assert made.status_code == 201
    secret = re.search(r"psk_[A-Za-z0-9_-]{40,}", made.content.decode())[0]
    token = ApiToken.objects.get(user=user)
    assert token.name == "my script"
    assert token.digest == hashlib.sha256(secret.encode()).hexdigest()
    assert secret not in {token.digest, token.hint, token.name}
    # Listed afterwards by name and hint, never with the secret again.
    page = client.get("/accounts/subscriptions/").content.decode()
    assert "my script" in page and token.hint in page
    assert secret not in page
    assert Client().get("/api/v1/me/saved", **bearer(secret)).status_code == 200


def test_a_revoked_token_stops_working(client, reader):
    user, secret = reader
    client.force_login(user)
    token = ApiToken.objects.get(user=user)

    response = client.post(f"/accounts/api-tokens/{token.pk}/revoke/", follow=True)

    assert "revoked" in response.content.decode()
    assert not ApiToken.objects.exists()
    assert Client().get("/api/v1/me/saved", **bearer(secret)).status_code == 401


def test_a_reader_cannot_revoke_anothers_token(client, reader):
    owner, secret = reader
    client.force_login(UserFactory())

    client.post(f"/accounts/api-tokens/{ApiToken.objects.get().pk}/revoke/")

    assert ApiToken.objects.filter(user=owner).exists()
    assert Client().get("/api/v1/me/saved", **bearer(secret)).status_code == 200


def test_tokens_need_a_name_and_are_limited_per_reader(client, settings):
    settings.API_TOKENS_PER_READER = 2
    client.force_login(UserFactory())

    assert client.post("/accounts/api-tokens/", {"name": ""}).status_code == 400
    assert client.post("/accounts/api-tokens/", {"name": "a"}).status_code == 201
    assert client.post("/accounts/api-tokens/", {"name": "b"}).status_code == 201
    refused = client.post("/accounts/api-tokens/", {"name": "c"})
    assert refused.status_code == 400
    assert "revoke one first" in refused.content.decode()
    assert ApiToken.objects.count() == 2


def test_token_pages_need_a_login_and_a_post(client):
    assert client.post("/accounts/api-tokens/", {"name": "x"}).status_code == 302
    client.force_login(UserFactory())
    assert client.get("/accounts/api-tokens/").status_code == 405


@pytest.mark.parametrize(
    "header",
    [None, "Bearer", "Bearer ", "Bearer psk_wrong", "Basic dXNlcjpwYXNz", "Token psk_x"],
)
@pytest.mark.parametrize(
    "path", ["/api/v1/me/feed", "/api/v1/me/saved", "/api/v1/me/subscriptions"]
)
def test_personal_endpoints_need_a_valid_token(client, reader, header, path):
    extra = {"HTTP_AUTHORIZATION": header} if header is not None else {}
    response = client.get(path, **extra)

    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert "token" in response.json()["detail"]


def test_a_session_is_no_token(client, reader):
    client.force_login(reader[0])
    assert client.get("/api/v1/me/saved").status_code == 401


def test_an_inactive_readers_token_is_refused(client, reader):
    user, secret = reader
    user.is_active = False
    user.save()
    assert client.get("/api/v1/me/saved", **bearer(secret)).status_code == 401


def test_saving_and_unsaving_through_the_api(client, reader):
    user, secret = reader
    paper = PaperFactory()

    saved = client.put(f"/api/v1/me/saved/{paper.arxiv_id}", **bearer(secret))
    again = client.put(f"/api/v1/me/saved/{paper.pk}", **bearer(secret))
    listed = client.get("/api/v1/me/saved", **bearer(secret)).json()

    assert saved.json() == {"id": paper.pk, "arxiv_id": paper.arxiv_id, "saved": True}
    assert again.status_code == 200
    assert SavedPaper.objects.filter(user=user, paper=paper).count() == 1
    assert [item["id"] for item in listed["items"]] == [paper.pk]

    removed = client.delete(f"/api/v1/me/saved/{paper.arxiv_id}", **bearer(secret))
    assert removed.json()["saved"] is False
    assert not SavedPaper.objects.exists()
    assert client.put("/api/v1/me/saved/9999.99999", **bearer(secret)).status_code == 404


def test_subscribing_and_the_feed_through_the_api(client, reader):
    user, secret = reader
    tag, category = TagFactory(slug="agents"), CategoryFactory(code="cs.AI")
    tagged, in_category = PaperFactory(tags=[tag]), PaperFactory(categories=[category])
    PaperFactory()

    assert client.put("/api/v1/me/subscriptions/tags/agents", **bearer(secret)).json() == {
        "kind": "tag",
        "key": "agents",
        "subscribed": True,
    }
    client.put("/api/v1/me/subscriptions/categories/cs.AI", **bearer(secret))
    subscriptions = client.get("/api/v1/me/subscriptions", **bearer(secret)).json()
    feed = client.get("/api/v1/me/feed", **bearer(secret))

    assert subscriptions["tags"] == [{"slug": "agents", "name": tag.name}]
    assert subscriptions["categories"] == [{"code": "cs.AI", "name": category.name}]
    assert {item["id"] for item in feed.json()["items"]} == {tagged.pk, in_category.pk}
    assert feed["Cache-Control"] == "private, no-cache"
    assert (
        client.get("/api/v1/me/feed", HTTP_IF_NONE_MATCH=feed["ETag"], **bearer(secret)).status_code
        == 304
    )
    # The feed takes the list filters.
    only_tagged = client.get("/api/v1/me/feed?tag=agents", **bearer(secret)).json()
    assert [item["id"] for item in only_tagged["items"]] == [tagged.pk]

    client.delete("/api/v1/me/subscriptions/tags/agents", **bearer(secret))
    client.delete("/api/v1/me/subscriptions/categories/cs.AI", **bearer(secret))
    assert not Subscription.objects.filter(user=user).exists()
    assert client.put("/api/v1/me/subscriptions/tags/nope", **bearer(secret)).status_code == 404


def test_a_token_follows_an_author_whose_papers_come_into_its_feed(client, reader):
    user, secret = reader
    by_her = PaperFactory(authors=["Kaiwen Zha", "Zhengqi Gao"])
    PaperFactory(authors=["Someone Else"])

    followed = client.put("/api/v1/me/subscriptions/authors/kaiwen-zha", **bearer(secret))
    subscriptions = client.get("/api/v1/me/subscriptions", **bearer(secret)).json()
    feed = client.get("/api/v1/me/feed", **bearer(secret)).json()

    assert followed.json() == {"kind": "author", "key": "kaiwen-zha", "subscribed": True}
    assert subscriptions["authors"] == [{"slug": "kaiwen-zha", "name": "Kaiwen Zha"}]
    assert [item["id"] for item in feed["items"]] == [by_her.pk]
    client.delete("/api/v1/me/subscriptions/authors/kaiwen-zha", **bearer(secret))
    assert not Subscription.objects.filter(user=user).exists()
    missing = client.put("/api/v1/me/subscriptions/authors/nobody", **bearer(secret))
    assert missing.status_code == 404


def test_a_token_reaches_only_its_owners_lists(client, reader):
    owner, secret = reader
    other = UserFactory()
    _, other_secret = services.create_api_token(user=other, name="theirs")
    mine, theirs = PaperFactory(), PaperFactory()
    SavedPaperFactory(user=owner, paper=mine)
    SavedPaperFactory(user=other, paper=theirs)
    SubscriptionFactory(user=other, tag=TagFactory(slug="secret-interest"))

    my_saved = client.get("/api/v1/me/saved", **bearer(secret)).json()
    their_saved = client.get("/api/v1/me/saved", **bearer(other_secret)).json()
    my_subscriptions = client.get("/api/v1/me/subscriptions", **bearer(secret)).json()
    client.delete(f"/api/v1/me/saved/{theirs.arxiv_id}", **bearer(secret))

    assert [item["id"] for item in my_saved["items"]] == [mine.pk]
    assert [item["id"] for item in their_saved["items"]] == [theirs.pk]
    assert my_subscriptions == {"tags": [], "categories": [], "authors": []}
    assert SavedPaper.objects.filter(user=other, paper=theirs).exists()


def test_personal_lists_take_a_fixed_number_of_queries(client, reader):
    user, secret = reader
    tag = TagFactory(slug="agents")
    SubscriptionFactory(user=user, tag=tag)
    for _ in range(6):
        SavedPaperFactory(user=user, paper=PaperFactory(tags=[tag]))

    # The token with its reader, then the page, its tags and its categories; the
    # feed first reads the ids the reader follows.
    for path, count in (
        ("/api/v1/me/saved?limit=2", 4),
        ("/api/v1/me/saved?limit=50", 4),
        ("/api/v1/me/feed", 5),
        ("/api/v1/me/feed?limit=50", 5),
    ):
        with CaptureQueriesContext(connection) as queries:
            assert client.get(path, **bearer(secret)).status_code == 200
        assert len(queries) == count, path
    # The token, the reader's subscriptions with their tags and categories.
    with CaptureQueriesContext(connection) as queries:
        client.get("/api/v1/me/subscriptions", **bearer(secret))
    assert len(queries) == 2


def test_token_requests_are_limited_per_token(client, reader, settings):
    settings.RATELIMIT_ENABLE = True
    settings.API_RATE_LIMIT = "2/m"
    settings.API_TOKEN_RATE_LIMIT = "4/m"
    cache.clear()
    _, secret = reader
    _, second = services.create_api_token(user=reader[0], name="another")
    try:
        statuses = [client.get("/api/v1/papers", **bearer(secret)).status_code for _ in range(5)]
        refused = client.get("/api/v1/me/saved", **bearer(secret))
        # Another token, and anonymous requests, have their own allowances.
        assert client.get("/api/v1/me/saved", **bearer(second)).status_code == 200
        assert client.get("/api/v1/tags").status_code == 200
    finally:
        cache.clear()
    assert statuses == [200, 200, 200, 200, 429]
    assert refused.status_code == 429
    assert int(refused["Retry-After"]) > 0


def test_a_reader_following_nothing_gets_an_empty_feed_whatever_the_filters(client):
    reader = UserFactory()
    _, secret = services.create_api_token(user=reader, name="empty")

    response = client.get(
        "/api/v1/me/feed?q=%C3%94reasoning&has_code=1&period=365d&to=6439-02-10&sort=newest",
        **bearer(secret),
    )

    assert response.status_code == 200
    assert response.json() == {
        "items": [],
        "total": 0,
        "total_is_estimate": False,
        "next_cursor": None,
        "previous_cursor": None,
        "ranked_of": None,
        "capped": False,
    }


def test_a_body_that_is_not_json_is_a_problem_not_a_crash(client):
    paper = PaperFactory()
    _, secret = services.create_api_token(user=UserFactory(), name="bad body")

    response = client.post(
        f"/api/v1/papers/{paper.pk}/comments",
        data=b"\x00",
        content_type="application/json",
        **bearer(secret),
    )

    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert "body" in response.json()["detail"]
