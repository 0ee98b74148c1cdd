"""A paper's Read view: its stored text with a table of contents, figures in
place, math for KaTeX; and the figure strip on the paper's page."""

import io

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from PIL import Image

from catalog.models import FullText, FullTextFigure
from enrichment.fulltext import ParsedFigure, ParsedSection, ParsedText, Picture, store_fulltext
from tests.factories import PaperFactory

pytestmark = pytest.mark.django_db


def webp(size=(320, 160)) -> Picture:
    buffer = io.BytesIO()
    Image.new("RGB", size, (10, 120, 10)).save(buffer, format="WEBP")
    return Picture(data=buffer.getvalue(), width=size[0], height=size[1])


@pytest.fixture
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    settings.MEDIA_URL = "/media/"


def read_paper(**fields):
    paper = PaperFactory(**fields)
    parsed = ParsedText(
        source=FullText.Source.HTML,
        sections=[
            ParsedSection(
                heading="1 Introduction",
                level=1,
                paragraphs=["Attention costs $O(n^2)$.", "We make it <linear> & cheap."],
            ),
            ParsedSection(heading="1.1 Setting", level=2, paragraphs=["Tokens $x_i$."]),
        ],
        figures=[
            ParsedFigure(
                section_position=0, after_paragraph=1, caption="Figure 1: Cost.", image_url="x"
            ),
            ParsedFigure(
                section_position=1, after_paragraph=1, caption="Figure 2: No picture.", image_url=""
            ),
        ],
    )
    store_fulltext(paper=paper, parsed=parsed, pictures=[webp(), None])
    return paper


def test_read_view_shows_sections_contents_and_figures_in_place(client, media):
    paper = read_paper()

    page = client.get(f"/papers/{paper.arxiv_id}/read/").content.decode()

    contents = page[
        page.index('class="read-contents"') : page.index(
            "</nav>", page.index('class="read-contents"')
        )
    ]
    assert '<a href="#section-1">1 Introduction</a>' in contents
    assert 'class="read-contents-level-2"><a href="#section-2">1.1 Setting</a>' in contents
    assert '<section class="read-section" id="section-1">' in page
    assert "<h2>1 Introduction</h2>" in page and "<h3>1.1 Setting</h3>" in page
    # Math goes to KaTeX as TeX; the text is escaped.
    assert '<span class="math">O(n^2)</span>' in page
    assert "We make it &lt;linear&gt; &amp; cheap." in page
    # The figure after the first paragraph, sized, lazy and enlargeable.
    figure = FullTextFigure.objects.get(paper=paper, position=0)
    first, second = page.index("Attention costs"), page.index("We make it")
    assert first < page.index('id="figure-1"') < second
    assert (
        f'<a href="{figure.image.url}" data-enlarge><img src="{figure.image.url}" '
        'width="320" height="160" loading="lazy" alt="Figure 1: Cost.">'
    ) in page
    assert 'id="image-viewer"' in page
    # A figure without a picture keeps its caption, at its section's end.
    assert page.index("Tokens") < page.index("Figure 2: No picture.")
    assert f'href="{paper.pdf_url}"' in page and f'href="{paper.abs_url}"' in page
    assert "Text and figures from arXiv's HTML rendering of the paper." in page


def test_read_view_costs_three_queries(client, media, django_assert_num_queries):
    paper = read_paper()

    # 1. the paper with its full text, 2. its sections, 3. its figures.
    with django_assert_num_queries(3):
        assert client.get(f"/papers/{paper.arxiv_id}/read/").status_code == 200


def test_pdf_text_is_headed_by_its_pages(client, media):
    paper = PaperFactory()
    parsed = ParsedText(
        source=FullText.Source.PDF,
        sections=[ParsedSection(heading="", level=1, paragraphs=["First page text."])],
    )
    store_fulltext(paper=paper, parsed=parsed, pictures=[])

    page = client.get(f"/papers/{paper.arxiv_id}/read/").content.decode()

    assert "<h2>Page 1</h2>" in page
    assert "Text read from the paper's PDF, a section a page" in page


def test_an_older_version_read_says_so(client, media):
    paper = read_paper(version=1)
    paper.version = 2
    paper.save()

    page = client.get(f"/papers/{paper.arxiv_id}/read/").content.decode()

    assert "This is version 1; version 2 has not been read yet." in page


def test_no_stored_text_is_not_found(client, media):
    unread = PaperFactory()
    failed = PaperFactory()
    FullText.objects.create(paper=failed, version=1, status=FullText.Status.FAILED, error="x")
    hidden = read_paper(is_visible=False)

    for paper in (unread, failed, hidden):
        assert client.get(f"/papers/{paper.arxiv_id}/read/").status_code == 404
    assert client.get("/papers/not-an-id/read/").status_code == 404


def test_a_versioned_address_redirects(client, media):
    paper = read_paper()

    answer = client.get(f"/papers/{paper.arxiv_id}v1/read/")

    assert answer.status_code == 301
    assert answer["Location"] == f"/papers/{paper.arxiv_id}/read/"


def test_paper_page_shows_the_figure_strip_and_read_link_without_extra_queries(client, media):
    bare, read = PaperFactory(), read_paper()

    with CaptureQueriesContext(connection) as bare_queries:
        bare_page = client.get(bare.get_absolute_url()).content.decode()
    with CaptureQueriesContext(connection) as read_queries:
        page = client.get(read.get_absolute_url()).content.decode()

    # The strip and the link are columns of the paper's own row.
    assert len(read_queries) == len(bare_queries)
    assert "/read/" not in bare_page and 'id="figures-title"' not in bare_page
    assert f'href="/papers/{read.arxiv_id}/read/">Read</a>' in page
    figure = FullTextFigure.objects.get(paper=read, position=0)
    strip = page[page.index('id="figures-title"') :]
    assert (
        f'<img src="{figure.image.url}" width="320" height="160" loading="lazy" '
        'alt="Figure 1: Cost.">' in strip
    )
    # Only figures with a picture are in the strip.
    assert "No picture" not in strip[: strip.index("</section>")]
    assert 'id="image-viewer"' in page
