"""Pages a researcher stays on, in Chromium at 1366x900: papers above the fold in
both views, the compact view kept, filters applied as they change with a clean
address, screenshots opened larger, a paper's figures as a strip on a phone,
the footer at the bottom."""

import re

import pytest
from django.core.files.base import ContentFile
from playwright.sync_api import expect

from catalog.models import FullText, PaperImage
from enrichment.fulltext import ParsedFigure, ParsedSection, ParsedText, Picture, store_fulltext
from tests.e2e.conftest import png
from tests.factories import CodeLinkFactory, PaperFactory, TagFactory

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
DESKTOP = {"width": 1366, "height": 900}
# An arXiv abstract's usual length, and a long title.
ABSTRACT = " ".join(f"Sentence {n} explains one more step of the method." for n in range(20))
TITLE = "Learning to reason over long documents with verifiable rewards and process supervision"

CARDS_ABOVE_THE_FOLD = """() => [...document.querySelectorAll(".paper-card")]
    .filter((card) => card.getBoundingClientRect().bottom <= innerHeight).length"""


@pytest.fixture
def catalog():
    tags = [TagFactory(name=name) for name in ("R1_Reasoning", "Reinforcement_Learning", "Agents")]
    papers = [
        PaperFactory(title=f"{TITLE} {n}", abstract=ABSTRACT, tags=tags, authors=["A. Author"] * 5)
        for n in range(20)
    ]
    for paper in papers[::3]:
        CodeLinkFactory(paper=paper)
    return papers


def test_four_cards_or_twelve_rows_above_the_fold_and_the_view_is_kept(page, catalog):
    page.set_viewport_size(DESKTOP)
    page.goto("/")
    assert page.evaluate(CARDS_ABOVE_THE_FOLD) >= 4

    page.get_by_role("button", name="Compact").click()
    expect(page.get_by_role("button", name="Compact")).to_have_attribute("aria-pressed", "true")
    assert page.evaluate(CARDS_ABOVE_THE_FOLD) >= 12

    # Kept for the next page, applied before it is drawn.
    page.goto("/tags/r1-reasoning/")
    expect(page.locator("html")).to_have_attribute("data-view", "compact")
    assert page.evaluate(CARDS_ABOVE_THE_FOLD) >= 12
    page.get_by_role("button", name="Cards").click()
    page.reload()
    expect(page.locator("html")).not_to_have_attribute("data-view", "compact")


def test_filters_apply_as_they_change_and_leave_a_clean_address(page, catalog, live_server):
    PaperFactory(title="Without code", abstract="Nothing here.")
    page.set_viewport_size(DESKTOP)
    page.goto("/")
    expect(page.locator(".apply-button")).to_be_hidden()

    page.select_option("#id_has_code", "1")

    expect(page.locator(".active-filters")).to_contain_text("With code")
    expect(page).to_have_url(f"{live_server.url}/?has_code=1")
    expect(page.locator(".paper-title", has_text="Without code")).to_have_count(0)
    page.select_option("#id_sort", "trending")
    expect(page).to_have_url(f"{live_server.url}/?sort=trending&has_code=1")  # the form's order
    page.go_back()
    expect(page).to_have_url(f"{live_server.url}/?has_code=1")


def test_a_screenshot_opens_larger_and_closes_with_escape(page, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    paper = PaperFactory()
    image = PaperImage(paper=paper, kind=PaperImage.Kind.FIRST_PAGE, width=20, height=30)
    image.image.save("page.png", ContentFile(png(20, 30)))

    page.goto(paper.get_absolute_url())
    link = page.get_by_role("link", name="The first page of the paper (show larger)")
    link.focus()
    page.keyboard.press("Enter")

    viewer = page.locator("#image-viewer")
    expect(viewer).to_be_visible()
    expect(viewer.locator("img")).to_have_attribute("src", re.compile(f"{image.image.url}$"))
    page.keyboard.press("Escape")
    expect(viewer).to_be_hidden()
    expect(link).to_be_focused()


def test_on_a_phone_the_figures_are_one_row_to_swipe_not_a_column(page, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    paper = PaperFactory()
    figures = [
        ParsedFigure(section_position=0, after_paragraph=1, caption=f"Figure {n}.", image_url="x")
        for n in range(6)
    ]
    text = ParsedSection(heading="1 Introduction", level=1, paragraphs=["Text."])
    store_fulltext(
        paper=paper,
        parsed=ParsedText(source=FullText.Source.HTML, sections=[text], figures=figures),
        pictures=[Picture(data=png(600, 300), width=600, height=300) for _ in figures],
    )
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(paper.get_absolute_url())

    tops = page.locator(".figure-strip img").evaluate_all(
        "(images) => images.map((image) => Math.round(image.getBoundingClientRect().top))"
    )
    assert len(tops) == 6 and len(set(tops)) == 1
    strip = page.locator(".figure-strip").evaluate("(e) => [e.scrollWidth, e.clientWidth]")
    assert strip[0] > strip[1]  # the strip scrolls sideways...
    # ...and the page does not.
    assert page.evaluate("document.documentElement.scrollWidth") == 390


def test_the_footer_sits_at_the_bottom_of_a_short_page(page):
    page.set_viewport_size(DESKTOP)
    page.goto("/tags/")
    footer = page.locator(".site-footer").bounding_box()
    assert footer["y"] + footer["height"] == pytest.approx(DESKTOP["height"], abs=1)
