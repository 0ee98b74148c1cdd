"""A subscriber signs up, verifies the email, follows a tag, reads the feed and
leaves the digest by the link in the mail."""

import re
from urllib.parse import urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.utils import timezone
from playwright.sync_api import expect

from accounts import services
from accounts.models import Profile
from catalog.models import PaperTag
from tests.e2e.conftest import policy_violations
from tests.factories import PaperFactory, TagFactory

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
EMAIL = "ada@example.com"
PASSWORD = "a long and unusual passphrase"


def path_of_link(text: str, pattern: str) -> str:
    """The path of the link in a mail; the mail names the public site, the test a live server."""
    match = re.search(rf"https?://\S*?({pattern})", text)
    assert match, text
    return urlsplit(match.group(0)).path


def test_subscriber_signs_up_follows_a_tag_and_unsubscribes_from_the_digest(page):
    tag = TagFactory(name="Reasoning", slug="reasoning")
    tagged = PaperFactory(title="Self-checking chains of thought", tags=[tag])
    PaperFactory(title="Something else entirely")

    page.goto("/accounts/signup/")
    page.fill("input[name=email]", EMAIL)
    page.fill("input[name=password1]", PASSWORD)
    page.fill("input[name=password2]", PASSWORD)
    page.locator("form:has(input[name=password2]) [type=submit]").click()
    expect(page.locator("main")).to_contain_text("Verify")

    page.goto(path_of_link(mail.outbox[-1].body, r"/accounts/confirm-email/\S+/"))
    page.locator("main form [type=submit]").click()
    expect(page.locator(".main-nav")).to_contain_text("My feed")

    page.goto("/tags/reasoning/")
    page.get_by_role("button", name="Subscribe to this tag").click()
    expect(page.locator(".list-head")).to_contain_text("Subscribed")

    page.goto("/feed/")
    expect(page.locator(".paper-title")).to_have_text([tagged.title])
    assert policy_violations(page) == []

    newly_tagged = PaperFactory(title="A fresh result on reasoning")
    PaperTag.objects.create(paper=newly_tagged, tag=tag)
    profile = Profile.objects.get(user__email=EMAIL)
    assert services.send_digest(profile=profile, now=timezone.now())
    digest = mail.outbox[-1]
    assert digest.to == [EMAIL]
    assert newly_tagged.title in digest.body

    page.goto(path_of_link(digest.body, r"/digests/unsubscribe/\S+/"))
    page.get_by_role("button", name="Unsubscribe from digests").click()
    expect(page.locator("main")).to_contain_text("No more digests will be sent")
    profile.refresh_from_db()
    assert profile.digest_frequency == Profile.DigestFrequency.OFF
    assert get_user_model().objects.filter(email=EMAIL).count() == 1
