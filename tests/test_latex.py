"""Abstracts, titles and summaries as arXiv authors write them: LaTeX macros become
links and emphasis, math is marked for KaTeX on pages and read as text in mail and feeds."""

import datetime

import feedparser
import pytest
from django.core import mail

from accounts import services
from accounts.models import Profile
from catalog.latex import latex_to_html, latex_to_text
from catalog.models import PaperTag, Summary
from tests.accounts_factories import SubscriptionFactory, UserFactory
from tests.factories import PaperFactory, SummaryFactory, TagFactory

ABSTRACT = (
    r"Code at \href{https://github.com/org/repo}{our repository}, data at \url{https://d.org/x\_y}."
    r" We reach $\mathcal{O}(n \log n)$ time, \emph{without} \textbf{any} tuning, 10\% faster."
)
# How \mathcal{O} reads as text: MATHEMATICAL SCRIPT CAPITAL O.
SCRIPT_O = "\U0001d4aa"


def test_macros_become_links_and_emphasis():
    html = latex_to_html(ABSTRACT)

    assert (
        '<a href="https://github.com/org/repo" rel="nofollow noopener">our repository</a>' in html
    )
    assert '<a href="https://d.org/x_y" rel="nofollow noopener">https://d.org/x_y</a>' in html
    assert "<em>without</em> <strong>any</strong>" in html
    assert r'<span class="math">\mathcal{O}(n \log n)</span>' in html
    assert "10% faster" in html
    assert "\\href" not in html and "$" not in html


def test_plain_text_reads_naturally():
    text = latex_to_text(ABSTRACT)

    assert text.startswith("Code at our repository (https://github.com/org/repo), data at")
    assert "https://d.org/x_y." in text
    assert f"{SCRIPT_O}(n" in text
    assert "without any tuning, 10% faster." in text
    assert "\\" not in text and "$" not in text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("It costs $5 and $10 today.", "It costs $5 and $10 today."),
        (r"Display $$\sum_i x_i$$ and \(a\)", None),
        (r"An unknown \cite{x} stays", r"An unknown \cite{x} stays"),
        (r"An unclosed \emph{brace", r"An unclosed \emph{brace"),
        ("<b>not a tag</b> & more", "&lt;b&gt;not a tag&lt;/b&gt; &amp; more"),
    ],
)
def test_what_is_not_latex_stays_as_written(text, expected):
    html = latex_to_html(text)
    if expected is not None:
        assert html == expected
    else:
        assert r'<span class="math math-display">\sum_i x_i</span>' in html
        assert '<span class="math">a</span>' in html


@pytest.mark.parametrize(
    "source",
    [
        r"\href{javascript:alert(1)}{click}",
        r'\href{https://x.example/" onmouseover="alert(1)}{click}',
        r"\url{data:text/html,<script>alert(1)</script>}",
        r"$<img src=x onerror=alert(1)>$",
    ],
)
def test_nothing_unsafe_gets_through(source):
    html = latex_to_html(source)

    assert "javascript:" not in html and "data:" not in html.replace("data:text", "")
    assert "<script" not in html and "<img" not in html
    assert '" onmouseover' not in html


@pytest.mark.django_db
def test_paper_page_and_list_show_links_and_math(client):
    paper = PaperFactory(
        arxiv_id="2501.00001", title=r"Sorting in $\mathcal{O}(n)$", abstract=ABSTRACT
    )

    for path in ("/", paper.get_absolute_url()):
        html = client.get(path).content.decode()
        assert '<span class="math">\\mathcal{O}(n)</span>' in html
        assert (
            '<a href="https://github.com/org/repo" rel="nofollow noopener">our repository</a>'
            in html
        )
    page = client.get(paper.get_absolute_url()).content.decode()
    assert f"<title>Sorting in {SCRIPT_O}(n) · Papershelf</title>" in page
    assert (
        'name="description" content="Code at our repository (https://github.com/org/repo)' in page
    )


@pytest.mark.django_db
def test_summaries_keep_math_apart_from_markdown(client):
    paper = PaperFactory()
    SummaryFactory(
        paper=paper,
        language="zh-hans",
        kind=Summary.Kind.TRANSLATION,
        body=r"我们在 $a_i * b_i$ 上达到 \textbf{最好}, 见 \href{https://e.org/a_b}{项目}。",
    )

    html = client.get(paper.get_absolute_url()).content.decode()

    assert '<span class="math">a_i * b_i</span>' in html
    assert "<strong>最好</strong>" in html
    assert '<a href="https://e.org/a_b" rel="nofollow noopener noreferrer">项目</a>' in html


@pytest.mark.django_db
def test_feeds_carry_readable_text(client):
    PaperFactory(title=r"Sorting in $\mathcal{O}(n)$", abstract=ABSTRACT)

    feed = feedparser.parse(client.get("/feeds/latest.rss").content)

    [entry] = feed.entries
    assert entry.title == f"Sorting in {SCRIPT_O}(n)"
    assert "our repository (https://github.com/org/repo)" in entry.summary
    assert "\\href" not in entry.summary and "$" not in entry.summary


@pytest.mark.django_db
def test_digests_carry_readable_text():
    tag = TagFactory()
    reader = UserFactory()
    SubscriptionFactory(user=reader, tag=tag)
    now = datetime.datetime(2026, 3, 10, 9, tzinfo=datetime.UTC)
    Profile.objects.filter(user=reader).update(last_digest_at=now - datetime.timedelta(days=1))
    paper = PaperFactory(title=r"Sorting in $\mathcal{O}(n)$", abstract=ABSTRACT)
    PaperTag.objects.create(paper=paper, tag=tag, added_at=now - datetime.timedelta(hours=1))

    services.send_due_digests(now=now)

    [message] = mail.outbox
    html = message.alternatives[0][0]
    for body in (message.body, html):
        assert f"Sorting in {SCRIPT_O}(n)" in body
        assert "our repository (https://github.com/org/repo)" in body
        assert "\\href" not in body and "\\mathcal" not in body
