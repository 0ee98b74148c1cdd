"""Opening a paper from the personal feed sends a beacon the site counts toward trending."""

import threading

import pytest
from playwright.sync_api import expect

from accounts import services
from catalog.models import ReaderSignal
from tests.accounts_factories import SubscriptionFactory, UserFactory
from tests.e2e.conftest import log_in, policy_violations
from tests.factories import PaperFactory, TagFactory

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def beacons_handled(monkeypatch) -> threading.Semaphore:
    """Released as the site has handled each of the feed's beacons."""
    handled = threading.Semaphore(0)
    record = services.record_feed_click

    def recorded(**kwargs) -> None:
        try:
            record(**kwargs)
        finally:
            handled.release()

    monkeypatch.setattr(services, "record_feed_click", recorded)
    return handled


def test_opening_a_paper_from_the_feed_is_counted_once(page, live_server, beacons_handled):
    reader = UserFactory()
    tag = TagFactory(name="Reasoning", slug="reasoning")
    SubscriptionFactory(user=reader, tag=tag)
    paper = PaperFactory(title="Self-checking chains of thought", tags=[tag])
    log_in(page, live_server, reader)

    for _ in range(2):
        page.goto("/feed/")
        page.get_by_role("link", name=paper.title).click()
        expect(page).to_have_url(f"{live_server.url}{paper.get_absolute_url()}")
    for n in (1, 2):
        assert beacons_handled.acquire(timeout=15), f"beacon {n} of 2 was not handled"

    assert list(ReaderSignal.objects.values_list("paper", "reader", "kind")) == [
        (paper.pk, reader.pk, "click")
    ]
    assert policy_violations(page) == []
    # Elsewhere, opening a paper sends nothing.
    page.goto("/")
    page.get_by_role("link", name=paper.title).click()
    expect(page).to_have_url(f"{live_server.url}{paper.get_absolute_url()}")
    assert ReaderSignal.objects.count() == 1
