"""Sign-up, log-in, log-out and account changes through django-allauth."""

import io
import os
import re
import subprocess
import sys

import pytest
from allauth.account.models import EmailAddress
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core import mail
from django.core.cache import cache
from django.core.management import call_command

from accounts.models import Profile
from tests.accounts_factories import PASSWORD, UserFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_rate_limits")]
NEW_PASSWORD = "a different long passphrase"


def link_in_last_mail(pattern: str) -> str:
    match = re.search(rf"https?://testserver({pattern})", mail.outbox[-1].body)
    assert match, mail.outbox[-1].body
    return match.group(1)


def log_in(client, email: str, password: str = PASSWORD, **extra):
    return client.post("/accounts/login/", {"login": email, "password": password}, **extra)


def test_sign_up_requires_confirming_the_email_before_logging_in(client):
    response = client.post(
        "/accounts/signup/",
        {"email": "ada@example.com", "password1": PASSWORD, "password2": PASSWORD},
    )
    assert response.status_code == 302
    assert "_auth_user_id" not in client.session
    user = get_user_model().objects.get(email="ada@example.com")
    assert user.password.startswith("argon2$")
    assert Profile.objects.get(user=user).digest_frequency == Profile.DigestFrequency.DAILY

    client.logout()
    response = log_in(client, "ada@example.com")
    assert "_auth_user_id" not in client.session
    assert response.url == "/accounts/confirm-email/"

    confirm_path = link_in_last_mail(r"/accounts/confirm-email/[^/\s]+/")
    assert client.post(confirm_path).status_code == 302
    assert EmailAddress.objects.get(user=user).verified
    response = log_in(client, "ada@example.com")
    assert response.status_code == 302
    assert response.url == "/feed/"
    assert int(client.session["_auth_user_id"]) == user.pk


def test_a_superuser_made_by_createsuperuser_logs_in_on_the_site(client, monkeypatch):
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", PASSWORD)
    call_command(
        "createsuperuser",
        "--noinput",
        "--username",
        "curator",
        "--email",
        "Curator@Example.com",
        stdout=io.StringIO(),
    )
    user = get_user_model().objects.get(username="curator")

    response = log_in(client, "curator@example.com")

    assert response.status_code == 302 and response.url == "/feed/"
    assert int(client.session["_auth_user_id"]) == user.pk
    assert not mail.outbox
    assert list(
        EmailAddress.objects.filter(user=user).values_list("email", "verified", "primary")
    ) == [("curator@example.com", True, True)]


def test_only_superusers_addresses_count_as_confirmed(client):
    staff = get_user_model().objects.create_user(
        "staff", email="staff@example.com", password=PASSWORD, is_staff=True
    )

    response = log_in(client, "staff@example.com")

    assert "_auth_user_id" not in client.session
    assert response.url == "/accounts/confirm-email/"
    assert not EmailAddress.objects.filter(user=staff, verified=True).exists()
    # Made a superuser in admin, the address counts as confirmed from then on.
    staff.is_superuser = True
    staff.save()
    assert log_in(client, "staff@example.com").url == "/feed/"


def test_log_in_by_email_and_log_out(client):
    user = UserFactory()
    response = log_in(client, user.email)
    assert response.status_code == 302
    assert int(client.session["_auth_user_id"]) == user.pk
    page = client.get("/").content.decode()
    assert "My feed" in page and "Log out" in page

    client.post("/accounts/logout/")
    assert "_auth_user_id" not in client.session
    assert "Log in" in client.get("/").content.decode()


def test_wrong_password_is_refused_with_a_message(client):
    user = UserFactory()
    response = log_in(client, user.email, "not the password")
    assert response.status_code == 200
    assert "_auth_user_id" not in client.session
    assert "not correct" in response.content.decode()


def test_repeated_failures_lock_the_account_out_for_a_while(client):
    user = UserFactory()
    for _ in range(settings.LOGIN_FAILURES_ALLOWED):
        log_in(client, user.email, "guessing")

    # Even the right password is refused during the lockout.
    response = log_in(client, user.email)
    assert response.status_code == 200
    assert "_auth_user_id" not in client.session
    assert "Too many failed login attempts. Try again later." in response.content.decode()

    # Another account is not affected.
    other = UserFactory()
    assert log_in(client, other.email).status_code == 302

    cache.clear()  # the lockout window has passed
    client.logout()
    assert log_in(client, user.email).status_code == 302


@pytest.mark.parametrize(
    "next_url", ["https://evil.example/steal", "//evil.example/", "http://testserver.evil.example/"]
)
def test_next_never_leads_off_the_site(client, next_url):
    user = UserFactory()
    response = client.post(
        f"/accounts/login/?next={next_url}", {"login": user.email, "password": PASSWORD}
    )
    assert response.status_code == 302
    assert response.url == "/feed/"


def test_next_on_this_site_is_followed(client):
    user = UserFactory()
    response = client.post(
        "/accounts/login/?next=/tags/", {"login": user.email, "password": PASSWORD}
    )
    assert response.url == "/tags/"


def test_password_reset_by_email(client):
    user = UserFactory()
    client.post("/accounts/password/reset/", {"email": user.email})
    assert mail.outbox[-1].to == [user.email]
    reset_path = link_in_last_mail(r"/accounts/password/reset/key/[^\s]+/")

    form_page = client.get(reset_path, follow=True)
    assert form_page.status_code == 200
    set_path = form_page.redirect_chain[-1][0] if form_page.redirect_chain else reset_path
    response = client.post(set_path, {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD})
    assert response.status_code == 302
    user.refresh_from_db()
    assert user.check_password(NEW_PASSWORD)


def test_change_password(client):
    user = UserFactory()
    client.force_login(user)
    response = client.post(
        "/accounts/password/change/",
        {"oldpassword": PASSWORD, "password1": NEW_PASSWORD, "password2": NEW_PASSWORD},
    )
    assert response.status_code == 302
    user.refresh_from_db()
    assert user.check_password(NEW_PASSWORD)


def test_change_email_takes_effect_once_the_new_address_is_confirmed(client):
    user = UserFactory()
    client.force_login(user)
    client.post("/accounts/email/", {"email": "new@example.com", "action_add": ""})
    assert mail.outbox[-1].to == ["new@example.com"]
    user.refresh_from_db()
    assert user.email != "new@example.com"

    client.post(link_in_last_mail(r"/accounts/confirm-email/[^/\s]+/"))
    user.refresh_from_db()
    assert user.email == "new@example.com"
    assert EmailAddress.objects.get(user=user, primary=True).email == "new@example.com"


def test_account_pages_use_the_site_layout_and_its_words(client):
    for path, heading in (("/accounts/login/", "Log in"), ("/accounts/signup/", "Sign up")):
        page = client.get(path).content.decode()
        assert 'class="site-header"' in page and settings.SITE_NAME in page
        assert f"<h1>{heading}</h1>" in page
        assert 'class="auth-form"' in page
        assert "Sign In" not in page and "Sign Up" not in page


@pytest.mark.slow
def test_social_logins_switch_on_only_with_their_keys():
    def installed_providers(extra_env: dict) -> str:
        # Settings are read once per process, so each environment needs its own.
        code = (
            "from config import settings;"
            "print(sorted(settings.SOCIALACCOUNT_PROVIDERS),"
            " [a for a in settings.INSTALLED_APPS if 'providers' in a])"
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "GOOGLE_"))}
        result = subprocess.run(
            [sys.executable, "-c", code],
            env={**env, **extra_env},
            cwd=settings.BASE_DIR,
            capture_output=True,
            text=True,
            check=True,
        )
        return result.stdout.strip()

    assert installed_providers({}) == "[] []"
    assert installed_providers({"GITHUB_CLIENT_ID": "id", "GITHUB_SECRET": "s"}) == (
        "['github'] ['allauth.socialaccount.providers.github']"
    )
    both = installed_providers(
        {
            "GITHUB_CLIENT_ID": "i",
            "GITHUB_SECRET": "s",
            "GOOGLE_CLIENT_ID": "i",
            "GOOGLE_SECRET": "s",
        }
    )
    assert both.startswith("['github', 'google']")
