"""Subscribing to tags and categories from their pages and from any list."""

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client

from accounts.models import Subscription
from tests.accounts_factories import PASSWORD, SubscriptionFactory, UserFactory
from tests.factories import CategoryFactory, PaperFactory, TagFactory

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def reader(client):
    user = UserFactory()
    client.force_login(user)
    return user


def test_subscribe_to_a_tag_without_javascript(client, reader):
    tag = TagFactory()
    page = client.get(tag.get_absolute_url()).content.decode()
    assert f'action="/tags/{tag.slug}/subscribe/"' in page
    assert "Subscribe to this tag" in page

    response = client.post(f"/tags/{tag.slug}/subscribe/", {"next": tag.get_absolute_url()})
    assert response.status_code == 302
    assert response.url == tag.get_absolute_url()
    assert Subscription.objects.filter(user=reader, tag=tag).exists()
    page = client.get(tag.get_absolute_url()).content.decode()
    assert f'action="/tags/{tag.slug}/unsubscribe/"' in page

    client.post(f"/tags/{tag.slug}/unsubscribe/")
    assert not Subscription.objects.filter(user=reader).exists()


def test_subscribing_twice_keeps_one_subscription(client, reader):
    tag = TagFactory()
    client.post(f"/tags/{tag.slug}/subscribe/")
    client.post(f"/tags/{tag.slug}/subscribe/")
    assert Subscription.objects.filter(user=reader, tag=tag).count() == 1


def test_subscribe_to_a_category_by_its_code(client, reader):
    category = CategoryFactory(code="hep-th.X")
    page = client.get(category.get_absolute_url()).content.decode()
    assert "Subscribe to this category" in page
    client.post(f"/categories/{category.code}/subscribe/")
    assert Subscription.objects.filter(user=reader, category=category).exists()
    client.post(f"/categories/{category.code}/unsubscribe/")
    assert not Subscription.objects.filter(user=reader).exists()


def test_htmx_gets_the_toggled_button_back(client, reader):
    tag = TagFactory()
    response = client.post(f"/tags/{tag.slug}/subscribe/", {"next": tag.get_absolute_url()}, **HTMX)
    assert response.status_code == 200
    fragment = response.content.decode()
    assert fragment.lstrip().startswith("<form")
    assert f'hx-post="/tags/{tag.slug}/unsubscribe/"' in fragment
    # The re-rendered form still returns a no-JS post to the page it sits on.
    assert f'name="next" value="{tag.get_absolute_url()}"' in fragment

    response = client.post(f"/tags/{tag.slug}/unsubscribe/", **HTMX)
    assert f'hx-post="/tags/{tag.slug}/subscribe/"' in response.content.decode()
    assert not Subscription.objects.exists()


def test_chip_look_survives_the_htmx_swap(client, reader):
    tag = TagFactory()
    response = client.post(f"/tags/{tag.slug}/subscribe/", {"look": "chip"}, **HTMX)
    fragment = response.content.decode()
    assert 'class="chip-toggle"' in fragment and 'aria-pressed="true"' in fragment


def test_subscribe_from_the_tag_chips_of_any_list(client, reader):
    tag = TagFactory(name="Reasoning_Models")
    PaperFactory(tags=[tag])
    page = client.get("/").content.decode()
    assert f'hx-post="/tags/{tag.slug}/subscribe/"' in page
    response = client.post(f"/tags/{tag.slug}/subscribe/", {"next": "/?period=7d"})
    assert response.url == "/?period=7d"
    assert Subscription.objects.filter(user=reader, tag=tag).exists()


def test_next_to_another_site_falls_back_to_the_tag_page(client, reader):
    tag = TagFactory()
    response = client.post(f"/tags/{tag.slug}/subscribe/", {"next": "https://evil.example/"})
    assert response.url == tag.get_absolute_url()


def test_unknown_tag_or_category_is_404(client, reader):
    assert client.post("/tags/no-such-tag/subscribe/").status_code == 404
    assert client.post("/categories/xx.NOPE/unsubscribe/").status_code == 404


def test_get_on_the_post_urls_is_405(client, reader):
    tag, category = TagFactory(), CategoryFactory()
    assert client.get(f"/tags/{tag.slug}/subscribe/").status_code == 405
    assert client.get(f"/tags/{tag.slug}/unsubscribe/").status_code == 405
    assert client.get(f"/categories/{category.code}/subscribe/").status_code == 405
    assert not Subscription.objects.exists()


def test_logged_out_reader_logs_in_and_comes_back_subscribed(client):
    user = UserFactory()
    tag = TagFactory()
    page = client.get(tag.get_absolute_url()).content.decode()
    assert "Log in to subscribe to this tag" in page
    assert "hx-post" not in page  # the login page must not be swapped into a button

    response = client.post(f"/tags/{tag.slug}/subscribe/", {"next": tag.get_absolute_url()})
    assert response.status_code == 302
    assert response.url == f"/accounts/login/?next=/tags/{tag.slug}/"
    assert not Subscription.objects.exists()

    response = client.post(response.url, {"login": user.email, "password": PASSWORD})
    assert response.url == f"/tags/{tag.slug}/"
    assert Subscription.objects.filter(user=user, tag=tag).exists()
    page = client.get(response.url).content.decode()
    assert f"You are now subscribed to the tag {tag.name}." in page
    assert f'action="/tags/{tag.slug}/unsubscribe/"' in page


def test_the_no_javascript_form_carries_a_csrf_token():
    user = UserFactory()
    tag = TagFactory()
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    page = client.get(tag.get_absolute_url()).content.decode()
    form = re.search(rf'<form[^>]+action="/tags/{tag.slug}/subscribe/".*?</form>', page, re.S)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.group(0)).group(1)

    assert client.post(f"/tags/{tag.slug}/subscribe/").status_code == 403
    response = client.post(f"/tags/{tag.slug}/subscribe/", {"csrfmiddlewaretoken": token})
    assert response.status_code == 302
    assert Subscription.objects.filter(user=user, tag=tag).exists()


def test_a_reader_changes_only_their_own_subscriptions(client):
    tag = TagFactory()
    owner = SubscriptionFactory(tag=tag).user
    other = UserFactory()
    client.force_login(other)
    client.post(f"/tags/{tag.slug}/unsubscribe/")
    assert Subscription.objects.filter(user=owner, tag=tag).exists()
    page = client.get(tag.get_absolute_url()).content.decode()
    assert "Subscribe to this tag" in page


def test_htmx_is_served_from_the_site_with_no_inline_scripts(client, reader):
    page = client.get("/").content.decode()
    assert '<script src="/static/js/htmx.min.js" defer></script>' in page
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", page)
    assert (Path(settings.BASE_DIR) / "static/js/htmx.min.js").stat().st_size > 10_000


@pytest.mark.parametrize("page_size", [5, 20])
def test_list_buttons_cost_the_same_queries_whatever_the_page_size(
    client, reader, django_assert_num_queries, page_size
):
    tags = [TagFactory(), TagFactory()]
    SubscriptionFactory(user=reader, tag=tags[0])
    for _ in range(page_size):
        PaperFactory(tags=tags)
    client.get("/")  # warm the session and the template caches
    # session, user, papers with their count, tags, the filter form's choices,
    # the reader's subscriptions and saved papers
    with django_assert_num_queries(6):
        response = client.get("/")
    assert response.content.decode().count('class="chip-toggle"') == 2 * page_size
