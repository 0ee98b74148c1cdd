"""The security baseline: deploy checks, headers and CSP, CSRF, redirects, access control."""

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from allauth.account.models import EmailAddress
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import URLResolver, get_resolver
from django.utils.http import url_has_allowed_host_and_scheme

from accounts.models import Profile, SavedPaper, Subscription
from accounts.services import unsubscribe_token
from catalog.models import Paper
from tests.accounts_factories import PASSWORD, SavedPaperFactory, SubscriptionFactory, UserFactory
from tests.factories import CategoryFactory, PaperFactory, SummaryFactory, TagFactory
from tests.html_checks import live_markup

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_rate_limits")]
EVIL = ["https://evil.example/steal", "//evil.example/", "http://testserver.evil.example/"]


@pytest.fixture
def catalog():
    tag = TagFactory(name="Reasoning", slug="reasoning")
    category = CategoryFactory(code="cs.CL")
    paper = PaperFactory(tags=[tag], categories=[category], authors=["Ada Lovelace"])
    SummaryFactory(paper=paper, body="**Bold** claim.")
    return {"tag": tag, "category": category, "paper": paper}


def deploy_check(**environment: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "DEBUG": "0",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "papershelf.example",
        **environment,
    }
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=Path(settings.BASE_DIR),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_deploy_checks_pass_with_production_settings():
    result = deploy_check()

    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_pages_carry_the_security_headers(client, catalog):
    response = client.get("/")

    policy = dict(
        directive.strip().split(" ", 1)
        for directive in response["Content-Security-Policy"].split(";")
    )
    assert policy["script-src"] == "'self'"
    assert policy["style-src"] == "'self'"
    assert policy["object-src"] == "'none'"
    assert policy["frame-ancestors"] == "'none'"
    assert "unsafe" not in response["Content-Security-Policy"]
    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"] == "same-origin"


def test_no_page_relies_on_inline_script_or_style(client, catalog):
    paper = catalog["paper"]
    curator = UserFactory(is_staff=True, is_superuser=True)
    summary = paper.summaries.get()
    public = [
        "/",
        "/?q=reasoning&period=30d&tag=reasoning",
        paper.get_absolute_url(),
        "/tags/",
        "/tags/reasoning/",
        "/categories/",
        "/categories/cs.CL/",
        "/accounts/login/",
        "/accounts/signup/",
        "/accounts/password/reset/",
    ]
    reader_pages = ["/feed/", "/saved/", "/accounts/subscriptions/", "/accounts/email/"]
    admin_pages = [
        "/admin/",
        "/admin/catalog/paper/",
        f"/admin/catalog/paper/{paper.pk}/change/",
        "/admin/catalog/paper/add/",
        "/admin/catalog/tag/add/",
        f"/admin/catalog/summary/{summary.pk}/change/",
    ]

    blocked = {}
    for user, paths in ((None, public), (UserFactory(), reader_pages), (curator, admin_pages)):
        visitor = Client()
        if user:
            visitor.force_login(user)
        for path in paths:
            response = visitor.get(path)
            assert response.status_code == 200, path
            if found := live_markup(response.content.decode()):
                blocked[path] = found

    assert blocked == {}


def test_passwords_are_hashed_with_argon2():
    user = UserFactory()

    assert user.password.startswith("argon2")
    assert Client().post("/accounts/login/", {"login": user.email, "password": PASSWORD}).url


def walk_views(resolver: URLResolver, prefix: str = ""):
    for pattern in resolver.url_patterns:
        if isinstance(pattern, URLResolver):
            yield from walk_views(pattern, prefix + str(pattern.pattern))
        else:
            yield prefix + str(pattern.pattern), pattern.callback


def test_only_the_one_click_unsubscribes_and_the_api_skip_csrf():
    # RFC 8058: mail clients post there (the digest's and a discussion's) with no
    # session; the signed token is the proof.
    # The API acts only for a bearer token, never for a session cookie (a browser
    # cannot be made to send the token), so there is no request to forge.
    exempt = [
        route for route, view in walk_views(get_resolver()) if getattr(view, "csrf_exempt", 0)
    ]

    assert sorted(route for route in exempt if not route.startswith("api/v1/")) == [
        "digests/unsubscribe/<str:token>/",
        "discussion/unsubscribe/<str:token>/",
    ]


def saved_state() -> dict:
    """Everything a forged POST below could change."""
    return {
        "subscriptions": set(Subscription.objects.values_list("user_id", "tag_id", "category_id")),
        "saved": set(SavedPaper.objects.values_list("user_id", "paper_id")),
        "profiles": set(
            Profile.objects.values_list(
                "user_id", "digest_frequency", "feed_token", "display_name", "public_profile"
            )
        ),
        "users": set(get_user_model().objects.values_list("pk", "password")),
        "emails": set(EmailAddress.objects.values_list("email", flat=True)),
        "visible": set(Paper.objects.values_list("pk", "is_visible", "title")),
    }


def test_every_state_changing_post_needs_the_csrf_token(catalog):
    tag, category, paper = catalog["tag"], catalog["category"], catalog["paper"]
    reader = UserFactory(is_staff=True, is_superuser=True)
    other_tag = TagFactory(name="Agents", slug="agents")
    SubscriptionFactory(user=reader, tag=other_tag)
    SubscriptionFactory(user=reader, category=CategoryFactory(code="cs.LG"))
    other_paper = PaperFactory()
    SavedPaperFactory(user=reader, paper=other_paper)
    posts = [
        ("/i18n/setlang/", {"language": "ko", "next": "/"}),
        (f"/tags/{tag.slug}/subscribe/", {}),
        ("/tags/agents/unsubscribe/", {}),
        (f"/categories/{category.code}/subscribe/", {}),
        ("/categories/cs.LG/unsubscribe/", {}),
        (f"/saved/{paper.pk}/save/", {}),
        (f"/saved/{other_paper.pk}/unsave/", {}),
        ("/accounts/subscriptions/", {"digest_frequency": "weekly"}),
        ("/accounts/feed-token/", {}),
        ("/accounts/public-profile/", {"display_name": "Forged", "public_profile": "on"}),
        ("/accounts/logout/", {}),
        (
            "/accounts/password/change/",
            {
                "oldpassword": PASSWORD,
                "password1": "n3w-Passphrase!",
                "password2": "n3w-Passphrase!",
            },
        ),
        ("/accounts/email/", {"action_add": "", "email": "second@example.com"}),
        (
            "/accounts/signup/",
            {
                "email": "new@example.com",
                "password1": "n3w-Passphrase!",
                "password2": "n3w-Passphrase!",
            },
        ),
        ("/accounts/login/", {"login": reader.email, "password": PASSWORD}),
        (f"/admin/catalog/paper/{paper.pk}/change/", {"title": "Defaced", "is_visible": ""}),
        (
            "/admin/catalog/paper/",
            {"action": "delete_selected", "_selected_action": [paper.pk], "post": "yes"},
        ),
    ]
    client = Client(enforce_csrf_checks=True)
    client.force_login(reader)
    before = saved_state()

    statuses = {url: client.post(url, data).status_code for url, data in posts}

    assert statuses == {url: 403 for url, _ in posts}
    assert saved_state() == before
    assert client.get("/feed/").status_code == 200  # still logged in


def test_the_same_posts_work_with_the_token(catalog):
    # Guards the test above: a 403 must come from the missing token, not a broken form.
    reader = UserFactory()
    client = Client(enforce_csrf_checks=True)
    client.force_login(reader)
    client.get("/tags/reasoning/")
    token = client.cookies[settings.CSRF_COOKIE_NAME].value

    response = client.post("/tags/reasoning/subscribe/", {"csrfmiddlewaretoken": token})

    assert response.status_code == 302
    assert Subscription.objects.filter(user=reader, tag=catalog["tag"]).exists()


def stays_on_site(response) -> bool:
    return url_has_allowed_host_and_scheme(response["Location"], allowed_hosts={"testserver"})


@pytest.mark.parametrize("next_url", EVIL)
def test_next_never_leads_off_the_site(client, catalog, next_url):
    user = UserFactory()
    responses = {
        "login": client.post(
            f"/accounts/login/?next={next_url}", {"login": user.email, "password": PASSWORD}
        ),
        "set_language": client.post("/i18n/setlang/", {"language": "ko", "next": next_url}),
        "subscribe": client.post("/tags/reasoning/subscribe/", {"next": next_url}),
        "save": client.post(f"/saved/{catalog['paper'].pk}/save/", {"next": next_url}),
        "logout": client.post("/accounts/logout/", {"next": next_url}),
    }

    assert {name: r.status_code for name, r in responses.items()} == dict.fromkeys(responses, 302)
    assert {name: stays_on_site(r) for name, r in responses.items()} == dict.fromkeys(
        responses, True
    )


def test_set_language_follows_a_next_on_this_site(client):
    response = client.post("/i18n/setlang/", {"language": "ko", "next": "/tags/"})

    assert response["Location"] == "/tags/"


@pytest.mark.parametrize("path", ["/admin/", "/admin/catalog/paper/", "/admin/auth/user/"])
def test_admin_is_only_for_staff(path):
    anonymous, reader, staff_without_rights = Client(), Client(), Client()
    reader.force_login(UserFactory())
    staff_without_rights.force_login(UserFactory(is_staff=True))

    for visitor in (anonymous, reader):
        response = visitor.get(path)
        assert response.status_code == 302
        assert response["Location"].startswith("/admin/login/")
    if path != "/admin/":
        assert staff_without_rights.get(path).status_code == 403


def test_staff_see_only_the_models_they_were_given():
    curator = UserFactory(is_staff=True)
    curator.user_permissions.add(
        *Permission.objects.filter(content_type__app_label="catalog", codename__endswith="paper")
    )
    client = Client()
    client.force_login(curator)

    assert client.get("/admin/catalog/paper/").status_code == 200
    assert client.get("/admin/auth/user/").status_code == 403


def test_each_reader_sees_only_their_own_subscriptions_saved_papers_and_feed_token(catalog):
    alice, bob = UserFactory(), UserFactory()
    private_tag = TagFactory(name="AlicesTopic", slug="alices-topic")
    SubscriptionFactory(user=alice, tag=private_tag)
    SavedPaperFactory(user=alice, paper=PaperFactory(title="Alice saved this one"))
    alice_token = alice.profile.feed_token
    as_bob = Client()
    as_bob.force_login(bob)

    pages = {path: as_bob.get(path).content.decode() for path in (
        "/accounts/subscriptions/", "/saved/", "/feed/", "/tags/alices-topic/",
    )}  # fmt: skip
    bob_feed = as_bob.get(f"/feeds/private/{bob.profile.feed_token}.rss")
    guessed = alice_token[:-1] + ("y" if alice_token.endswith("x") else "x")
    stolen = Client().get(f"/feeds/private/{guessed}.rss")

    for path, html in pages.items():
        assert alice_token not in html, path
        assert alice.email not in html, path
    assert "AlicesTopic" not in pages["/accounts/subscriptions/"]
    assert "Alice saved this one" not in pages["/saved/"]
    assert bob.profile.feed_token in pages["/accounts/subscriptions/"]
    assert "Subscribe to this tag" in pages["/tags/alices-topic/"]
    assert bob_feed.status_code == 200
    assert "Alice saved this one" not in bob_feed.content.decode()
    assert stolen.status_code == 404


def test_a_foreign_host_is_a_logged_bad_request(client, settings, caplog, catalog):
    settings.DEBUG = False
    client.raise_request_exception = False

    response = client.get("/", HTTP_HOST="evil.example")

    assert response.status_code == 400
    assert "Bad request" in response.content.decode()
    assert any(
        r.name == "django.security.DisallowedHost" and "evil.example" in r.getMessage()
        for r in caplog.records
    )


READ_ONLY_PAGES = [
    "/",
    "/tags/",
    "/tags/reasoning/",
    "/categories/",
    "/categories/cs.CL/",
    "/healthz",
    "/feeds/latest.rss",
]


@pytest.mark.parametrize("path", READ_ONLY_PAGES)
def test_read_only_pages_answer_head_and_options(client, catalog, path):
    head = client.head(path)
    options = client.options(path)

    assert head.status_code == 200
    assert head.content == b""
    assert options.status_code == 200
    assert {"GET", "HEAD", "OPTIONS"} <= {m.strip() for m in options["Allow"].split(",")}
    assert client.delete(path).status_code == 405


def test_a_papers_pages_answer_head_and_options(client, catalog):
    paper = catalog["paper"]
    listing = PaperFactory(arxiv_id=None)
    for path in (paper.get_absolute_url(), f"/p/{listing.pk}/"):
        assert client.head(path).status_code == 200, path
        assert client.options(path).status_code == 200, path


def cache_control(response) -> set[str]:
    return {part.strip() for part in response.get("Cache-Control", "").split(",") if part}


def test_private_pages_are_kept_by_no_cache_on_the_way(client, catalog):
    reader = UserFactory()
    client.force_login(reader)
    pages = [
        "/feed/",
        "/saved/",
        "/accounts/subscriptions/",
        "/accounts/email/",
        "/accounts/password/change/",
        "/",
        catalog["paper"].get_absolute_url(),
    ]
    for path in pages:
        response = client.get(path)
        assert response.status_code == 200, path
        assert {"private", "no-store"} <= cache_control(response), path


def test_account_pages_are_private_even_before_logging_in(client):
    for path in ["/accounts/login/", "/accounts/password/reset/"]:
        assert {"private", "no-store"} <= cache_control(client.get(path)), path
    # Public pages that never asked who is reading are left to the caches.
    assert "no-store" not in cache_control(client.get("/feeds/latest.rss"))


def test_a_digest_unsubscribe_page_is_private(client):
    token = unsubscribe_token(profile=UserFactory().profile)

    response = client.get(f"/digests/unsubscribe/{token}/")

    assert response.status_code == 200
    assert {"private", "no-store"} <= cache_control(response)


@pytest.mark.parametrize(
    ("password", "problem"),
    [
        ("kestrel-mot", "at least 12 characters"),  # 11 characters
        ("password1234", "too common"),
        ("qwerty123456", "too common"),
    ],
)
def test_sign_up_refuses_short_and_common_passwords(client, password, problem):
    response = client.post(
        "/accounts/signup/",
        {"email": "new@example.com", "password1": password, "password2": password},
    )

    assert response.status_code == 200
    assert problem in response.content.decode()
    assert not get_user_model().objects.filter(email="new@example.com").exists()


def test_the_deploy_check_wants_the_page_cache_apart_from_the_broker():
    shared = deploy_check(REDIS_URL="redis://broker:6379/0")
    apart = deploy_check(
        REDIS_URL="redis://broker:6379/0", CATALOG_CACHE_URL="redis://cache:6379/0"
    )

    assert shared.returncode != 0
    assert "catalog.W001" in shared.stderr + shared.stdout
    assert apart.returncode == 0, apart.stdout + apart.stderr
