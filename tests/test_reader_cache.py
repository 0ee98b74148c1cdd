"""A logged-in reader's user row and ids kept in the catalog cache between
requests (accounts/reader_cache.py): a shared page then costs no query for the
reader, and any change to them, from any device or path, shows on their next
request."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from accounts import reader_cache
from accounts.models import SavedPaper, Subscription
from catalog.models import Tag
from config.db_routers import ReplicaRouter
from tests.accounts_factories import SubscriptionFactory, UserFactory
from tests.factories import PaperFactory, TagFactory

pytestmark = pytest.mark.django_db

User = get_user_model()


@pytest.fixture
def reader(redis_cache):
    TagFactory(slug="agents", name="agents")
    return UserFactory()


def device(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def shows_subscribed(client: Client) -> bool:
    response = client.get("/tags/agents/")
    assert response.status_code == 200
    return "look-button is-on" in response.content.decode()


def test_a_repeat_visit_reads_neither_the_user_nor_their_ids(reader, django_assert_num_queries):
    client = device(reader)
    client.get("/tags/agents/")

    # 1. the session; the reader, their ids and the page come from the cache
    with django_assert_num_queries(1):
        page = client.get("/tags/agents/").content.decode()
    assert reader.email in page


def test_a_change_on_another_device_shows_on_the_next_request(
    reader, django_capture_on_commit_callbacks
):
    phone, laptop = device(reader), device(reader)
    assert not shows_subscribed(laptop)

    with django_capture_on_commit_callbacks(execute=True):  # the request commits
        phone.post(reverse("accounts:tag-subscribe", args=["agents"]))
    laptop.get("/")  # the message the change left, shown once

    assert shows_subscribed(laptop)


def test_changes_made_outside_the_site_show_too(reader, django_capture_on_commit_callbacks):
    laptop = device(reader)
    assert not shows_subscribed(laptop)
    with django_capture_on_commit_callbacks(execute=True):  # a command, a shell
        SubscriptionFactory(user=reader, tag=Tag.objects.get(slug="agents"))
    assert shows_subscribed(laptop)

    with django_capture_on_commit_callbacks(execute=True):  # a curator deleting in the admin
        Subscription.objects.filter(user=reader).delete()
    assert not shows_subscribed(laptop)


@pytest.mark.parametrize("change", ["deactivate", "password", "delete"])
def test_a_reader_shut_out_elsewhere_is_logged_out_at_once(
    reader, change, django_capture_on_commit_callbacks
):
    laptop = device(reader)
    assert reader.email in laptop.get("/").content.decode()

    with django_capture_on_commit_callbacks(execute=True):
        if change == "deactivate":
            reader.is_active = False
            reader.save()
        elif change == "password":
            reader.set_password("another long passphrase")
            reader.save()
        else:
            reader.delete()

    response = laptop.get("/")
    assert response.status_code == 200
    assert reader.email not in response.content.decode()
    assert reverse("account_login") in response.content.decode()


def test_what_was_read_before_a_change_committed_is_never_used(reader):
    """A request reads the reader, another commits a change in between, and
    the first stores what it read: under a version the change left behind."""

    def load_then_change():
        user = User.objects.get(pk=reader.pk)
        User.objects.filter(pk=reader.pk).update(email="new@example.com")
        reader_cache.bump_version(f"reader:{reader.pk}:version")  # the change's commit
        return user

    stale = reader_cache.cached_reader(user_id=reader.pk, load=load_then_change)
    assert stale.email == reader.email  # what that request read

    fresh = reader_cache.cached_reader(
        user_id=reader.pk, load=lambda: User.objects.get(pk=reader.pk)
    )
    assert fresh.email == "new@example.com"


def test_a_lost_version_never_brings_back_an_older_entry(reader, redis_cache):
    laptop = device(reader)
    laptop.get("/")
    # Changed behind the signals' back, and the version evicted meanwhile.
    User.objects.filter(pk=reader.pk).update(email="moved@example.com")
    redis_cache.delete(f"reader:{reader.pk}:version")

    assert "moved@example.com" in laptop.get("/").content.decode()


def test_saved_papers_come_with_the_reader(reader, django_capture_on_commit_callbacks):
    paper = PaperFactory()
    laptop, phone = device(reader), device(reader)
    laptop.get("/")

    with django_capture_on_commit_callbacks(execute=True):
        phone.post(reverse("accounts:paper-save", args=[paper.pk]))

    assert SavedPaper.objects.filter(user=reader, paper=paper).exists()
    assert laptop.get("/").content.decode().count('aria-pressed="true"') == 1


def test_without_a_working_cache_every_request_reads_the_database(
    reader, settings, django_assert_num_queries
):
    settings.CACHES = {
        **settings.CACHES,
        "catalog": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",  # nothing listens there
            "OPTIONS": {"IGNORE_EXCEPTIONS": True, "SOCKET_CONNECT_TIMEOUT": 0.2},
        },
    }
    client = device(reader)
    for _ in range(2):
        response = client.get("/tags/agents/")
        assert response.status_code == 200
        assert reader.email in response.content.decode()


@pytest.mark.django_db(transaction=True)
def test_a_reader_missing_from_the_cache_is_read_on_the_primary(redis_cache):
    """A replica a moment behind must not have its rows stored under a newer version."""
    reader = UserFactory()
    router = ReplicaRouter()
    assert router.db_for_read(User) == "replica"
    chosen = []

    def load():
        chosen.append(router.db_for_read(User))
        return User.objects.get(pk=reader.pk)

    reader_cache.cached_reader(user_id=reader.pk, load=load)

    assert chosen == ["default"]
