"""Browser tests: Debian's Chromium driven by Playwright against a live server.

The live server runs in this process on the test database, so tests set up
data with factories and read sent mail from django.core.mail.outbox.
A failing test leaves a screenshot of its page in test-artifacts/.
"""

import io
import re
from pathlib import Path

import pytest
from django.conf import settings
from PIL import Image

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = Path(settings.BASE_DIR) / "test-artifacts"
# Records what a Content-Security-Policy blocked, so a page that needs an
# inline script (the site's own or an injected one) fails the test.
WATCH_POLICY_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__cspViolations.push(`${event.violatedDirective} ${event.blockedURI}`);
});
"""


@pytest.fixture(scope="package", autouse=True)
def allow_orm_beside_playwright():
    """Playwright's sync API keeps an event loop in this thread between calls;
    the ORM calls the tests make between browser steps are still synchronous.
    Only these tests: a later subprocess must not inherit the switch."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        yield


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.when == "call":
        item.failed_call = report.failed
    return report


# Per module, not per session: Playwright's event loop must not outlive the
# browser tests, or later tests that run async code in this thread would meet it.
@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: `make e2e` installs Debian's chromium package.")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, live_server, request):
    context = browser.new_context(base_url=live_server.url, locale="en-US")
    context.set_default_timeout(10_000)
    context.add_init_script(WATCH_POLICY_VIOLATIONS)
    page = context.new_page()
    page.dialogs = []
    page.on("dialog", lambda dialog: (page.dialogs.append(dialog.message), dialog.dismiss()))
    # What the page logged as an error, failed loads (a 404 favicon) included.
    page.console_errors = []
    page.on(
        "console",
        lambda message: message.type == "error" and page.console_errors.append(message.text),
    )
    yield page
    if getattr(request.node, "failed_call", False):
        ARTIFACTS.mkdir(exist_ok=True)
        name = re.sub(r"[^\w.-]+", "_", request.node.nodeid)
        page.screenshot(path=ARTIFACTS / f"{name}.png", full_page=True)
    context.close()


def policy_violations(page) -> list[str]:
    return page.evaluate("window.__cspViolations || []")


def log_in(page, live_server, user) -> None:
    """Give the page's browser a session of `user`, as after logging in."""
    from django.test import Client

    client = Client()
    client.force_login(user)
    session = client.cookies["sessionid"].value
    page.context.add_cookies([{"name": "sessionid", "value": session, "url": live_server.url}])


def png(width: int, height: int) -> bytes:
    """A real PNG, so a loaded image has a natural size to check."""
    data = io.BytesIO()
    Image.new("RGB", (width, height), "white").save(data, format="PNG")
    return data.getvalue()
