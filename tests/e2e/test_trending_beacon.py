"""Opening a paper from the personal feed sends a beacon the site counts toward trending."""

import time

import pytest
from playwright.sync_api import expect

from catalog.models import ReaderSignal
from tests.accounts_factories import SubscriptionFactory, UserFactory
from tests.e2e.conftest import log_in, policy_violations
from tests.factories import PaperFactory, TagFactory

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_opening_a_paper_from_the_feed_is_counted_once(page, live_server):
    reader = UserFactory()
    tag = TagFactory(name="Reasoning", slug="reasoning")
    SubscriptionFactory(user=reader, tag=tag)
    paper = PaperFactory(title="Self-checking chains of thought", tags=[tag])
    log_in(page, live_server, reader)

    for _ in range(2):
        page.goto("/feed/")
        page.get_by_role("link", name=paper.title).click()
        expect(page).to_have_url(f"{live_server.url}{paper.get_absolute_url()}")
    deadline = time.monotonic() + 5
    while not ReaderSignal.objects.exists() and time.monotonic() < deadline:
        time.sleep(0.1)

    assert list(ReaderSignal.objects.values_list("paper", "reader", "kind")) == [
        (paper.pk, reader.pk, "click")
    ]
    assert policy_violations(page) == []
    # Elsewhere, opening a paper sends nothing.
    page.goto("/")
    page.get_by_role("link", name=paper.title).click()
    expect(page).to_have_url(f"{live_server.url}{paper.get_absolute_url()}")
    assert ReaderSignal.objects.count() == 1
