"""A newcomer's first minutes in Chromium, at 1366x900 and 390x844: what used to
break stays fixed, and the design's promises hold."""

import datetime

import pytest
from django.core.files.base import ContentFile
from django.utils import timezone
from playwright.sync_api import expect

from accounts.models import SavedPaper, Subscription
from catalog.models import PaperImage
from tests.accounts_factories import PASSWORD, UserFactory
from tests.e2e.conftest import log_in, png, policy_violations
from tests.factories import CodeLinkFactory, PaperFactory, TagFactory

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
DESKTOP = {"width": 1366, "height": 900}
PHONE = {"width": 390, "height": 844}
LONG_ABSTRACT = " ".join(f"Sentence {n} explains one more step of the method." for n in range(30))
REMOVE = "\u00d7"  # what a picker chip's remove button shows


def days_ago(days: float) -> datetime.datetime:
    return timezone.now() - datetime.timedelta(days=days)


@pytest.fixture
def reasoning():
    return TagFactory(name="Reasoning", slug="reasoning")


def test_preview_images_load_on_the_paper_page_and_in_lists(page, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    paper = PaperFactory(title="A paper with pictures")
    for kind in (PaperImage.Kind.FIRST_PAGE, PaperImage.Kind.FIGURE):
        image = PaperImage(paper=paper, kind=kind, width=2, height=3)
        image.image.save(f"{kind}.png", ContentFile(png(2, 3)))

    page.goto(paper.get_absolute_url())
    pictures = page.locator(".paper-images img")
    expect(pictures).to_have_count(2)
    for picture in pictures.all():
        picture.scroll_into_view_if_needed()
        expect(picture).to_have_js_property("complete", True)
        assert picture.evaluate("img => img.naturalWidth") == 2

    page.goto("/")
    thumbnail = page.locator(".paper-thumbnail img")
    expect(thumbnail).to_have_js_property("complete", True)
    assert thumbnail.evaluate("img => img.naturalWidth") == 2
    assert page.console_errors == []


def test_show_full_abstract_only_where_the_abstract_is_cut(page):
    long = PaperFactory(title="Long", abstract=LONG_ABSTRACT, published_at=days_ago(1))
    # Long enough to be cut on a phone, short enough to fit the two lines of a desktop card.
    medium = PaperFactory(title="Medium", abstract="Word " * 30, published_at=days_ago(2))
    short = PaperFactory(title="Short", abstract="One short sentence.", published_at=days_ago(3))

    page.set_viewport_size(DESKTOP)
    page.goto("/")
    expect(page.locator(f"#paper-{long.pk} .abstract-expand")).to_be_visible()
    expect(page.locator(f"#paper-{medium.pk} .abstract-expand")).to_be_hidden()
    expect(page.locator(f"#paper-{short.pk} .abstract-expand")).to_have_count(0)

    page.set_viewport_size(PHONE)
    page.goto("/")
    expect(page.locator(f"#paper-{medium.pk} .abstract-expand")).to_be_visible()
    page.locator(f"#paper-{long.pk} .abstract-expand").click()
    expect(page.locator(f"#paper-{long.pk} .abstract-expand .less")).to_be_visible()
    expect(page.locator(f"#paper-{long.pk} .abstract-expand .more")).to_be_hidden()


def test_links_are_labelled_by_where_they_go(page):
    PaperFactory(arxiv_id="2505.15034")

    page.goto("/")

    link = page.get_by_role("link", name="Hugging Face")
    expect(link).to_have_attribute("href", "https://huggingface.co/papers/2505.15034")
    expect(page.get_by_text("Papers with Code")).to_have_count(0)


def test_latex_becomes_typeset_math_links_and_emphasis(page):
    paper = PaperFactory(
        title=r"Attention in $\mathcal{O}(n)$",
        abstract=r"We use \emph{linear} maps; see \href{https://example.org/code}{the code}.",
    )

    for path in ("/", paper.get_absolute_url()):
        page.goto(path)
        expect(page.locator(".paper-title .katex, h1 .katex").first).to_be_visible()
        expect(page.get_by_role("link", name="the code")).to_have_attribute(
            "href", "https://example.org/code"
        )
        expect(page.locator("em", has_text="linear")).to_be_visible()
        shown = page.locator(".paper-title, h1, .abstract, .abstract-full").all_inner_texts()
        assert "\\mathcal" not in " ".join(shown)
        assert policy_violations(page) == []
        assert page.console_errors == []


def test_long_tag_names_stay_inside_their_cards(page):
    TagFactory(name="Reinforcement_Learning_From_Verifiable_Rewards_For_Reasoning_Models")

    for viewport in (DESKTOP, PHONE):
        page.set_viewport_size(viewport)
        page.goto("/tags/")
        card = page.locator(".index-card").first
        assert card.evaluate("card => card.scrollWidth <= card.clientWidth")
        assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]


def test_the_language_menu_names_each_language_in_itself(page):
    page.goto("/")
    page.select_option("#language-select", "ko")
    expect(page.locator("html")).to_have_attribute("lang", "ko")

    options = page.locator("#language-select option")
    expect(options).to_have_text(["English", "한국어", "简体中文"])


def test_no_console_errors_and_a_favicon(page):
    PaperFactory()
    page.goto("/")
    assert page.evaluate("fetch('/favicon.ico').then(r => r.status)") == 200
    assert page.console_errors == []


def test_the_header_stays_one_line_at_desktop_width_logged_in(page, live_server):
    log_in(page, live_server, UserFactory(email="a.very.long.address@example.com"))
    page.set_viewport_size(DESKTOP)
    for language in ("en", "ko", "zh-hans"):
        page.goto("/")
        page.select_option("#language-select", language)
        expect(page.locator("html")).to_have_attribute("lang", language)
        bar = page.locator(".header-bar").bounding_box()
        assert bar["height"] < 70, language
        tops = page.locator(".header-bar > *").evaluate_all(
            "items => items.map(item => item.getBoundingClientRect().top)"
        )
        assert max(tops) - min(tops) < 12, (language, tops)
        # Every section of the menu shows whole: none is cut off at the search box.
        nav = page.locator(".main-nav")
        assert nav.evaluate("nav => nav.scrollWidth <= nav.clientWidth"), language


def test_the_account_menu_opens_closes_and_names_the_reader_by_email(page, live_server):
    log_in(page, live_server, UserFactory(username="reader7x2", email="ada@example.com"))
    page.goto("/")

    page.locator(".account-menu summary").click()
    menu = page.locator(".menu-panel")
    expect(menu).to_be_visible()
    expect(menu).to_contain_text("ada@example.com")
    expect(menu.get_by_role("link", name="Subscriptions and digests")).to_be_visible()
    page.keyboard.press("Escape")
    expect(menu).to_be_hidden()
    page.locator(".account-menu summary").click()
    page.locator("h1").click()
    expect(menu).to_be_hidden()
    assert "reader7x2" not in page.content()


def test_logging_in_says_log_in_and_greets_by_email(page):
    UserFactory(username="generated-name", email="ada@example.com")

    page.goto("/accounts/login/")
    expect(page.locator("h1")).to_have_text("Log in")
    assert "Sign In" not in page.content()
    page.fill("input[name=login]", "ada@example.com")
    page.fill("input[name=password]", PASSWORD)
    page.locator("main form [type=submit]").click()

    expect(page.locator(".messages")).to_contain_text("Logged in as ada@example.com.")
    assert "generated-name" not in page.content()


def test_tags_are_picked_with_a_chip_picker(page, reasoning):
    agents = TagFactory(name="Agents", slug="agents")
    both = PaperFactory(title="Reasoning agents", tags=[reasoning, agents])
    PaperFactory(title="Only reasoning", tags=[reasoning])

    page.set_viewport_size(DESKTOP)
    page.goto("/")
    picker = page.locator("#id_tag-search")
    picker.fill("reas")
    expect(page.get_by_role("option", name="Reasoning")).to_be_visible()
    expect(page.get_by_role("option", name="Agents")).to_have_count(0)
    picker.press("Enter")
    # Each pick applies at once; the picker comes back with the list, focused.
    expect(page.locator(".active-filters")).to_contain_text("Reasoning")
    expect(picker).to_be_focused()
    picker.fill("age")
    page.get_by_role("option", name="Agents").click()
    chips = page.locator(".field-tag .picker-chip")
    expect(chips).to_have_text([f"Agents{REMOVE}", f"Reasoning{REMOVE}"])
    page.get_by_role("button", name="Remove Reasoning").click()
    expect(chips).to_have_text([f"Agents{REMOVE}"])

    expect(page.locator(".paper-title")).to_have_text([both.title])
    expect(page.locator(".field-tag .picker-chip")).to_have_text([f"Agents{REMOVE}"])


def test_on_a_phone_filters_wait_behind_one_button_and_a_paper_shows_first(page, reasoning):
    PaperFactory(title="The newest paper", tags=[reasoning], abstract=LONG_ABSTRACT)
    PaperFactory.create_batch(3)

    page.set_viewport_size(PHONE)
    page.goto("/")
    expect(page.locator(".filter-panel")).to_be_hidden()
    title = page.locator(".paper-title").first.bounding_box()
    assert title["y"] + title["height"] < PHONE["height"]

    page.get_by_role("button", name="Filters").click()
    expect(page.locator(".filter-panel")).to_be_visible()
    expect(page.get_by_role("button", name="Filters")).to_have_attribute("aria-expanded", "true")


def test_a_card_shows_each_tag_once_a_code_badge_and_the_same_date_as_its_page(
    page, live_server, reasoning
):
    log_in(page, live_server, UserFactory())
    paper = PaperFactory(title="Tagged once", tags=[reasoning], published_at=days_ago(3))
    CodeLinkFactory(paper=paper)

    page.goto("/")
    card = page.locator(f"#paper-{paper.pk}")
    expect(card.get_by_text("Reasoning", exact=True)).to_have_count(1)
    expect(card.get_by_role("button", name="Follow Reasoning")).to_be_visible()
    expect(card.locator(".code-badge")).to_have_text("Official code")
    listed = card.locator(".paper-date").inner_text()

    card.get_by_role("link", name="Tagged once").click()
    expect(page.locator(".paper-header .paper-date")).to_have_text(listed)
    assert listed.startswith("First published ")


def test_dark_mode_is_remembered(page):
    PaperFactory()
    page.emulate_media(color_scheme="light")
    page.goto("/")
    light = page.evaluate("getComputedStyle(document.body).backgroundColor")

    page.get_by_role("button", name="Dark mode").click()
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    page.reload()
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    expect(page.get_by_role("button", name="Dark mode")).to_have_attribute("aria-pressed", "true")
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") != light

    page.get_by_role("button", name="Dark mode").click()
    page.reload()
    expect(page.locator("html")).to_have_attribute("data-theme", "light")


def test_keyboard_shortcuts(page, live_server):
    reader = UserFactory()
    log_in(page, live_server, reader)
    first = PaperFactory(title="First", published_at=days_ago(1))
    second = PaperFactory(title="Second", published_at=days_ago(2))

    page.goto("/")
    page.keyboard.press("/")
    expect(page.locator("#header-q")).to_be_focused()
    page.locator("h1").click()

    page.keyboard.press("j")
    expect(page.locator(f"#paper-{first.pk}")).to_have_class("paper-card is-current")
    page.keyboard.press("j")
    expect(page.locator(f"#paper-{second.pk}")).to_have_class("paper-card is-current")
    page.keyboard.press("k")
    expect(page.locator(f"#paper-{first.pk}")).to_have_class("paper-card is-current")
    page.keyboard.press("s")
    expect(page.locator(f"#paper-{first.pk} [data-save]")).to_have_attribute("aria-pressed", "true")
    assert SavedPaper.objects.filter(user=reader, paper=first).exists()

    page.keyboard.press("?")
    expect(page.get_by_role("dialog", name="Keyboard shortcuts")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.get_by_role("dialog")).to_be_hidden()
    page.keyboard.press("o")
    expect(page.locator("h1")).to_have_text("First")


def test_an_empty_period_names_the_newest_date_and_offers_a_wider_one(page, reasoning):
    PaperFactory(title="Ten days old", tags=[reasoning], published_at=days_ago(10))

    page.goto("/?period=7d&tag=reasoning")
    empty = page.locator(".empty-state")
    newest = days_ago(10).date().isoformat()
    expect(empty).to_contain_text(f"listed on {newest}")
    empty.get_by_role("link", name="Show papers from: Last 30 days").click()

    expect(page.locator(".paper-title")).to_have_text(["Ten days old"])
    expect(page.locator(".active-filters")).to_contain_text("Reasoning")


def test_follow_from_a_card_without_a_second_tag_row(page, live_server, reasoning):
    reader = UserFactory()
    log_in(page, live_server, reader)
    PaperFactory(tags=[reasoning])

    page.goto("/")
    page.get_by_role("button", name="Follow Reasoning").click()
    expect(page.get_by_role("button", name="Follow Reasoning")).to_have_attribute(
        "aria-pressed", "true"
    )
    assert Subscription.objects.filter(user=reader, tag=reasoning).exists()
