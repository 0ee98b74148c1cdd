"""axe-core finds no violation, of any impact, on every public page and every page
of a logged-in reader: at desktop and phone sizes, light and dark, in each language
(English in all four looks, the other languages in two that cover both sizes and
both themes); so do the compact view, the API's reference and the admin pages of
papers and of adding them by link."""

import itertools
from pathlib import Path

import pytest
from django.core.files.base import ContentFile
from django.test import Client
from django.utils import timezone

from accounts.models import Profile
from catalog import trending
from catalog.models import PaperImage, ReaderSignal, SimilarPaper, Summary
from discovery.models import Recommendation
from discussion import services as discussion
from tests.accounts_factories import SavedPaperFactory, SubscriptionFactory, UserFactory
from tests.e2e.conftest import WATCH_POLICY_VIOLATIONS, png, policy_violations
from tests.factories import (
    CategoryFactory,
    CodeLinkFactory,
    PaperFactory,
    SummaryFactory,
    TagFactory,
)

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
# axe-core 4.10.3 from npm (tests/e2e/vendor/axe-core-LICENSE).
AXE = (Path(__file__).parent / "vendor" / "axe.min.js").read_text()
SIZES = {"desktop": (1366, 900), "phone": (390, 844)}
THEMES = ("light", "dark")
PUBLIC = [
    "/",
    "/?q=reasoning&period=30d&tag=reasoning&has_code=1",
    "/?q=verifier",  # marked words and a snippet
    "/?period=1d",
    "/trending/",
    "/?sort=trending&window=24h",
    "/papers/2505.15034/",
    "/papers/2505.15034/discussion/",
    "/tags/",
    "/tags/reasoning/",
    "/categories/",
    "/categories/cs.CL/",
    "/daily/",  # the latest day's edition
    "/tags/reasoning/daily/",
    "/readers/Ada/",  # a reader's public profile
    "/authors/kaiwen-zha/",
    "/accounts/login/",
    "/accounts/signup/",
    "/accounts/password/reset/",
    "/no-such-page/",
    "/api/docs",
]
ADMIN = ["/admin/catalog/paper/", "/admin/ingest/linkrequest/add/", "/admin/discussion/comment/"]
READER = [
    "/",
    "/papers/2505.15034/",
    "/papers/2505.15034/discussion/",
    "/tags/reasoning/",
    "/authors/kaiwen-zha/",
    "/feed/",
    "/feed/for-you/",
    "/saved/",
    "/accounts/subscriptions/",
    "/accounts/email/",
    "/accounts/password/change/",
]


@pytest.fixture
def catalog(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    reasoning = TagFactory(name="Reasoning", slug="reasoning")
    long_name = TagFactory(name="Reinforcement_Learning_From_Verifiable_Rewards_At_Scale")
    category = CategoryFactory(code="cs.CL", name="Computation and Language")
    paper = PaperFactory(
        arxiv_id="2505.15034",
        title=r"RL Tango: verifiers in $\mathcal{O}(n)$",
        abstract=(
            r"We train a generator and a verifier together \emph{by reinforcement learning}. "
            r"Code at \href{https://github.com/kaiwenzha/rl-tango}{our repository}. " * 4
        ),
        tags=[reasoning, long_name],
        categories=[category],
        authors=["Kaiwen Zha", "Zhengqi Gao"],
    )
    CodeLinkFactory(paper=paper, url="https://github.com/kaiwenzha/rl-tango")
    SummaryFactory(paper=paper, language="zh-hans", kind=Summary.Kind.TRANSLATION)
    # What ko and zh-hans readers meet first on the card and the page.
    SummaryFactory(paper=paper, language="zh-hans", kind=Summary.Kind.SUMMARY)
    SummaryFactory(paper=paper, language="ko", kind=Summary.Kind.SUMMARY, body="검증기 요약.")
    SummaryFactory(paper=paper, language="en", kind=Summary.Kind.TAKEAWAYS, body="1. One\n2. Two")
    image = PaperImage(paper=paper, kind=PaperImage.Kind.FIRST_PAGE, width=2, height=3)
    image.image.save("page.png", ContentFile(png(2, 3)))
    others = [
        PaperFactory(title=f"Another paper on reasoning {n}", tags=[reasoning]) for n in range(3)
    ]
    reader = UserFactory()
    SubscriptionFactory(user=reader, tag=reasoning)
    SubscriptionFactory(user=reader, author=paper.authors.get(name="Kaiwen Zha"))
    SavedPaperFactory(user=reader, paper=paper)
    # A trending paper, with its badge.
    trending.record_signal(paper_id=paper.pk, reader_id=reader.pk, kind=ReaderSignal.Kind.SAVE)
    trending.refresh_trending()
    # What the nightly discovery jobs leave: similar papers, and the reader's For you.
    for rank, other in enumerate(others, 1):
        SimilarPaper.objects.create(
            paper=paper, similar=other, rank=rank, score=0.5, terms=["verifier"]
        )
        Recommendation.objects.create(
            user=reader,
            paper=other,
            score=0.5 - rank / 10,
            because_paper=paper if rank < 3 else None,
            because_tag=reasoning if rank == 3 else None,
        )
    profile = Profile.objects.get(user=reader)
    profile.recommended_at = timezone.now()
    profile.display_name, profile.public_profile = "Ada", True
    profile.save()
    # A discussion: the reader's comment with math, another's reply, one deleted.
    other = UserFactory()
    Profile.objects.filter(user=other).update(display_name="Grace", public_profile=True)
    mine = discussion.post_comment(
        user=reader, paper=paper, body="The bound on $\\epsilon$ is **tight**.", parent_id=None
    )
    discussion.post_comment(user=other, paper=paper, body="Agreed.", parent_id=mine.pk)
    gone = discussion.post_comment(user=other, paper=paper, body="Oops.", parent_id=None)
    discussion.delete_comment(user=other, comment=gone)
    return reader


def session_of(user) -> str:
    client = Client()
    client.force_login(user)
    return client.cookies["sessionid"].value


def violations(page) -> list[str]:
    page.wait_for_load_state("load")
    # Math is typeset after load; check what the reader finally sees.
    if page.locator(".math").count():
        page.locator(".math.is-typeset").first.wait_for()
    page.evaluate(AXE)
    # Every default rule, and the size of touch targets (WCAG 2.2), which Lighthouse checks too.
    options = {"rules": {"target-size": {"enabled": True}}}
    results = page.evaluate(
        "async (options) => (await axe.run(document, options)).violations", options
    )
    return [
        f"{v['id']} ({v['impact']}): {', '.join(str(n['target']) for n in v['nodes'][:3])}"
        for v in results
    ]


EVERY_LOOK = list(itertools.product(SIZES, THEMES))
TWO_LOOKS = [("desktop", "light"), ("phone", "dark")]


@pytest.mark.parametrize(
    ("language", "looks"), [("en", EVERY_LOOK), ("ko", TWO_LOOKS), ("zh-hans", TWO_LOOKS)]
)
def test_no_page_has_an_axe_violation(browser, live_server, catalog, language, looks):
    reader_session = session_of(catalog)
    found = {}
    for size, theme in looks:
        width, height = SIZES[size]
        for paths, session in ((PUBLIC, None), (READER, reader_session)):
            context = browser.new_context(
                base_url=live_server.url,
                viewport={"width": width, "height": height},
                color_scheme=theme,
                locale=language,
                extra_http_headers={"Accept-Language": language},
            )
            context.add_init_script(WATCH_POLICY_VIOLATIONS)
            if session:
                context.add_cookies(
                    [{"name": "sessionid", "value": session, "url": live_server.url}]
                )
            page = context.new_page()
            for path in paths:
                page.goto(path)
                problems = violations(page) + policy_violations(page)
                if problems:
                    found[f"{size} {theme} {'reader' if session else 'visitor'} {path}"] = problems
            context.close()

    assert found == {}


def test_open_menus_and_pickers_have_no_axe_violation(browser, live_server, catalog):
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1366, "height": 900})
    context.add_cookies(
        [{"name": "sessionid", "value": session_of(catalog), "url": live_server.url}]
    )
    page = context.new_page()
    page.goto("/")
    page.locator(".account-menu summary").click()
    assert violations(page) == []
    page.keyboard.press("Escape")
    page.locator("#id_tag-search").fill("rea")
    assert violations(page) == []
    page.keyboard.press("Enter")
    page.locator("[data-open-dialog=shortcuts]").click()
    assert violations(page) == []
    context.close()


@pytest.mark.parametrize(("size", "theme"), EVERY_LOOK)
def test_the_compact_view_and_the_admin_pages_have_no_axe_violation(
    browser, live_server, catalog, size, theme
):
    width, height = SIZES[size]
    context = browser.new_context(
        base_url=live_server.url, viewport={"width": width, "height": height}, color_scheme=theme
    )
    context.add_init_script("localStorage.setItem('view', 'compact')")
    found = {}
    page = context.new_page()
    for path in ("/", "/?q=verifier", "/tags/reasoning/"):
        page.goto(path)
        found[path] = violations(page)
    context.add_cookies(
        [
            {
                "name": "sessionid",
                "value": session_of(UserFactory(is_staff=True, is_superuser=True)),
                "url": live_server.url,
            }
        ]
    )
    for path in ADMIN:
        page.goto(path)
        if "linkrequest" in path:  # select2 draws its boxes once the page has loaded
            page.locator(".select2-container").first.wait_for()
        found[path] = violations(page)
    context.close()

    assert {path: problems for path, problems in found.items() if problems} == {}
