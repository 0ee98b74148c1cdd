"""Stored script payloads stay text in a real browser: nothing runs and nothing is even
blocked by the Content-Security-Policy (a blocked inline script would mean it got in)."""

from urllib.parse import quote

import pytest

from tests.accounts_factories import SavedPaperFactory, SubscriptionFactory, UserFactory
from tests.e2e.conftest import log_in, policy_violations
from tests.xss_factories import PAYLOADS, RUN, hostile_catalog

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_no_stored_payload_runs_in_the_browser(page, live_server):
    hostile = hostile_catalog()
    reader = UserFactory()
    SubscriptionFactory(user=reader, tag=hostile["tag"])
    SavedPaperFactory(user=reader, paper=hostile["paper"])
    log_in(page, live_server, reader)
    paths = [
        "/",
        hostile["paper"].get_absolute_url(),
        "/tags/",
        "/tags/hostile-tag/",
        "/categories/cs.XSS/",
        "/feed/",
        "/saved/",
        "/accounts/subscriptions/",
        *(f"/?q={quote(payload)}" for payload in PAYLOADS[:3]),
    ]

    seen = {}
    for path in paths:
        page.goto(path)
        page.wait_for_load_state("load")
        # Expand everything a reader could open, so hidden text renders too.
        for toggle in page.locator(".abstract-expand:visible").all():
            toggle.click()
        seen[path] = {
            "ran": page.evaluate("window.__xss === undefined ? null : window.__xss"),
            "blocked": policy_violations(page),
            "shown": RUN in page.locator("main").inner_text(),
        }

    assert page.dialogs == []
    assert {path: (s["ran"], s["blocked"]) for path, s in seen.items()} == dict.fromkeys(
        paths, (None, [])
    )
    assert all(s["shown"] for s in seen.values()), seen
