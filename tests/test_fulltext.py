"""Full texts: arXiv's HTML rendering read into sections and figures, the PDF's
text where there is none, what cannot be read reported and never half-stored."""

import io
import itertools
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from io import StringIO
from pathlib import Path

import pytest
from celery.exceptions import Retry
from django.core.management import CommandError, call_command
from PIL import Image

from catalog.models import FullText, FullTextFigure, FullTextSection
from enrichment.downloads import DownloadFailed
from enrichment.fulltext import fetch_fulltext, pdf_paragraphs, read_html
from enrichment.queue import queue_enrichment
from enrichment.tasks import fetch_paper_fulltext
from tests.factories import PaperFactory, TagFactory

pytestmark = pytest.mark.django_db

PAGE = (Path(__file__).parent / "data" / "fulltext" / "2601.00001v2.html").read_bytes()


def png(color, size=(300, 150)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, format="PNG")
    return buffer.getvalue()


def text_pdf(pages: list[list[str]]) -> bytes:
    """A PDF whose pages hold these lines in Helvetica, written object by object."""
    objects = ["<< /Type /Catalog /Pages 2 0 R >>", ""]
    kids = []
    font = 3 + 2 * len(pages)
    for number, lines in enumerate(pages):
        page, content = 3 + 2 * number, 4 + 2 * number
        kids.append(f"{page} 0 R")
        shown = " ".join(
            f"({line.replace('(', '[').replace(')', ']')}) Tj 0 -16 Td" for line in lines
        )
        stream = f"BT /F1 11 Tf 72 720 Td {shown} ET"
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 {font} 0 R >> >> /Contents {content} 0 R >>"
        )
        objects.append(f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream")
    objects[1] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {len(pages)} >>"
    objects.append("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    body, offsets = b"%PDF-1.4\n", []
    for number, text in enumerate(objects, start=1):
        offsets.append(len(body))
        body += f"{number} 0 obj\n{text}\nendobj\n".encode("latin-1")
    xref = len(body)
    body += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    body += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    body += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n"
    ).encode()
    return body


class ArxivFiles(ThreadingHTTPServer):
    """Serves what a test set for each path (/html/<id>..., /pdf/<id>); 404 otherwise."""

    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), ArxivFilesHandler)
        self.files = {}
        self.requests = []  # (path, arrival time)

    @property
    def root(self):
        return f"http://127.0.0.1:{self.server_address[1]}"

    def serve(self, path, body, *, status=200, content_type="text/html; charset=utf-8", delay=0):
        self.files[path] = (status, body, content_type, delay)


class ArxivFilesHandler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        self.server.requests.append((self.path, time.monotonic()))
        status, body, content_type, delay = self.server.files.get(
            self.path, (404, b"not found", "text/plain", 0)
        )
        time.sleep(delay)
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass


@pytest.fixture
def arxiv(settings, tmp_path):
    server = ArxivFiles()
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    settings.ARXIV_HTML_URL = f"{server.root}/html/{{id}}"
    settings.ARXIV_PDF_URL = f"{server.root}/pdf/{{id}}"
    settings.ARXIV_DELAY_SECONDS = 0
    settings.MEDIA_ROOT = tmp_path
    settings.FULLTEXT_TIMEOUT = 2
    settings.FULLTEXT_PAPERS = "curated"
    yield server
    server.shutdown()
    server.server_close()


def serve_html(arxiv, paper, page=PAGE):
    base = f"/html/{paper.versioned_id}"
    arxiv.serve(base, page)
    arxiv.serve(f"{base}/x1.png", png((200, 30, 30)), content_type="image/png")
    arxiv.serve(f"{base}/x2.png", png((30, 30, 200), (120, 80)), content_type="image/png")


def fetch(*args):
    out = StringIO()
    call_command("fetch_fulltext", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def fetch_failing(*args, match="failed"):
    err = StringIO()
    with pytest.raises(CommandError, match=match):
        call_command("fetch_fulltext", *args, stdout=StringIO(), stderr=err)
    return err.getvalue()


def sections(paper):
    return list(FullTextSection.objects.filter(paper=paper).order_by("position"))


def figures(paper):
    return list(FullTextFigure.objects.filter(paper=paper).order_by("position"))


def color_of(figure):
    """The colour in the middle of the figure, to the nearest ten (WebP is lossy)."""
    with figure.image.open() as file, Image.open(file) as image:
        pixel = image.convert("RGB").getpixel((image.width // 2, image.height // 2))
        return tuple(10 * round(value / 10) for value in pixel)


def test_html_rendering_is_stored_as_sections_and_figures(arxiv, tmp_path):
    paper = PaperFactory(arxiv_id="2601.00001", version=2)
    serve_html(arxiv, paper)

    out = fetch("--paper", "2601.00001")

    assert out == (
        "2601.00001: stored 4 section(s) and 3 figure(s) (1 without a picture) "
        "from arXiv's HTML rendering\n"
    )
    read = FullText.objects.get(paper=paper)
    assert (read.version, read.source, read.status, read.error) == (2, "html", "stored", "")
    intro, method, stride, results = sections(paper)
    assert [(s.heading, s.level) for s in sections(paper)] == [
        ("1 Introduction", 1),
        ("2 Method", 1),
        ("2.1 Choosing the stride", 2),
        ("3 Results on $\\textsc{LongBench}$", 1),
    ]
    # Math as its TeX, footnotes and the references left out, paragraphs apart.
    assert intro.paragraphs == [
        "Transformers attend to every token, which costs $O(n^{2})$ for a document of $n$ "
        "tokens. We propose strided sparse attention, which keeps the cost linear [1].",
        "The rest of this paper is organised as follows.",
    ]
    assert "$$\\mathrm{Attn}(q_{i})=\\sum_{j\\in S_{i}}\\alpha_{ij}v_{j}$$ (1)" in method.text
    assert stride.paragraphs == [
        "A stride near $\\sqrt{n}$ balances the two parts & keeps memory low."
    ]
    assert "footnote" not in intro.text and "Long attention" not in results.text
    first, second, third = figures(paper)
    # Each figure in place: after the first paragraph of the introduction, at
    # the end of the subsection, and in the results.
    assert (first.section_position, first.after_paragraph) == (0, 1)
    assert first.caption == "Figure 1: Attention patterns: dense (left) and strided (right)."
    assert (first.width, first.height) == (300, 150)
    assert color_of(first) == (200, 30, 30)
    assert first.image.name.startswith(f"figures/{paper.pk}/") and first.image.name.endswith(
        ".webp"
    )
    assert (tmp_path / first.image.name).is_file()
    # A figure of panels keeps its own caption and its first panel's picture.
    assert (second.section_position, second.after_paragraph) == (2, 1)
    assert second.caption == "Figure 2: Memory and speed against the stride."
    assert color_of(second) == (30, 30, 200)
    # A picture on another site is never asked for; the caption stays.
    assert (third.section_position, third.image.name) == (3, "")
    assert third.caption.startswith("Figure 3:")
    assert [path for path, _ in arxiv.requests] == [
        "/html/2601.00001v2",
        "/html/2601.00001v2/x1.png",
        "/html/2601.00001v2/x2.png",
    ]
    assert read.characters == sum(
        len(s.heading) + len(s.text.replace("\n\n", "")) for s in sections(paper)
    ) + sum(len(f.caption) for f in figures(paper))


def test_a_paper_arxiv_did_not_render_is_read_from_its_pdf(arxiv):
    paper = PaperFactory()
    arxiv.serve(
        f"/pdf/{paper.versioned_id}",
        text_pdf(
            [
                [
                    "Deep Nets for Weather",
                    "We forecast rain with a con-",
                    "volutional network.",
                    "Short line.",
                ],
                ["Results", "Rain was forecast well."],
            ]
        ),
        content_type="application/pdf",
    )

    out = fetch("--paper", paper.arxiv_id)

    assert out == f"{paper.arxiv_id}: stored 2 section(s) and 0 figure(s) from the PDF's text\n"
    read = FullText.objects.get(paper=paper)
    assert (read.source, read.status) == ("pdf", "stored")
    first, second = sections(paper)
    assert first.heading == "" and first.position == 0
    assert "We forecast rain with a convolutional network." in first.text
    assert "Rain was forecast well." in second.text
    assert [path for path, _ in arxiv.requests] == [
        f"/html/{paper.versioned_id}",
        f"/pdf/{paper.versioned_id}",
    ]


def test_pdf_lines_become_paragraphs():
    lines = "A long line of running text that goes on,\r\nand ends here.\r\nNext one starts"
    assert pdf_paragraphs(lines) == [
        "A long line of running text that goes on, and ends here.",
        "Next one starts",
    ]


def test_a_rendering_with_no_text_falls_back_to_the_pdf(arxiv):
    paper = PaperFactory()
    arxiv.serve(
        f"/html/{paper.versioned_id}",
        b"<html><body><article><h1 class='ltx_title'>Conversion failed</h1></article>"
        b"</body></html>",
    )
    arxiv.serve(
        f"/pdf/{paper.versioned_id}",
        text_pdf([["Only the PDF has it."]]),
        content_type="application/pdf",
    )

    fetch("--paper", paper.arxiv_id)

    assert [s.text for s in sections(paper)] == ["Only the PDF has it."]


@pytest.mark.parametrize(
    ("pdf", "reason"),
    [
        (b"%PDF-1.4\n garbage that is no PDF", "not a readable PDF"),
        (b"<html>Please wait</html>", "the download is not a PDF"),
        (text_pdf([[]]), "the PDF has no text to read"),
    ],
)
def test_an_unreadable_paper_is_reported_and_its_old_text_removed(
    arxiv, pdf, reason, django_capture_on_commit_callbacks, tmp_path
):
    paper = PaperFactory(arxiv_id="2601.00001", version=2)
    serve_html(arxiv, paper)
    fetch("--paper", "2601.00001")
    old_files = [f.image.name for f in figures(paper) if f.image]
    paper.version = 3
    paper.save()
    arxiv.serve(f"/pdf/{paper.versioned_id}", pdf, content_type="application/pdf")

    with django_capture_on_commit_callbacks(execute=True):
        err = fetch_failing(
            "--paper", "2601.00001", match="1 paper\\(s\\) failed: 1 could not be read"
        )

    assert "2601.00001: FAILED: arXiv has no HTML rendering, and the PDF: " in err and reason in err
    read = FullText.objects.get(paper=paper)
    assert (read.status, read.version, read.source) == ("failed", 3, "")
    assert read.error.startswith("arXiv has no HTML rendering, and the PDF: ")
    assert sections(paper) == [] and figures(paper) == []
    assert not any((tmp_path / name).exists() for name in old_files)


def test_text_past_the_limit_is_refused_not_cut(arxiv, settings):
    settings.FULLTEXT_MAX_CHARACTERS = 200
    paper = PaperFactory()
    serve_html(arxiv, paper)

    err = fetch_failing("--paper", paper.arxiv_id)

    assert "over the 200 limit" in err
    assert sections(paper) == []


def test_a_pdf_of_too_many_pages_is_refused(arxiv, settings):
    settings.FULLTEXT_MAX_PDF_PAGES = 2
    paper = PaperFactory()
    arxiv.serve(
        f"/pdf/{paper.versioned_id}",
        text_pdf([["a."], ["b."], ["c."]]),
        content_type="application/pdf",
    )

    err = fetch_failing("--paper", paper.arxiv_id)

    assert "the PDF has 3 pages, over the 2 limit" in err


def test_odd_encodings_and_control_characters_are_stored_cleanly(arxiv):
    paper = PaperFactory()
    page = (
        "<html><head><meta charset='windows-1252'></head><body><article>"
        "<section class='ltx_section'><h2 class='ltx_title'>Caf\xe9</h2>"
        "<div class='ltx_para'><p>Na\xefve \x01text\x00 here.</p></div></section>"
        "</article></body></html>"
    ).encode("cp1252")
    arxiv.serve(f"/html/{paper.versioned_id}", page)

    fetch("--paper", paper.arxiv_id)

    (section,) = sections(paper)
    assert (section.heading, section.text) == ("Café", "Naïve text here.")


def test_an_unreadable_figure_keeps_its_caption(arxiv):
    paper = PaperFactory(arxiv_id="2601.00001", version=2)
    serve_html(arxiv, paper)
    arxiv.serve(f"/html/{paper.versioned_id}/x1.png", b"<svg></svg>", content_type="image/svg+xml")

    fetch("--paper", "2601.00001")

    first = figures(paper)[0]
    assert (first.image.name, first.width) == ("", 0)
    assert first.caption.startswith("Figure 1:")


def test_busy_arxiv_leaves_what_the_paper_had(arxiv):
    paper = PaperFactory(arxiv_id="2601.00001", version=2)
    serve_html(arxiv, paper)
    fetch("--paper", "2601.00001")
    before = [(s.heading, s.text) for s in sections(paper)]
    arxiv.serve(f"/html/{paper.versioned_id}/x2.png", b"busy", status=503)

    err = fetch_failing(
        "--paper", "2601.00001", "--force", match="could not be downloaded just now"
    )

    assert "answered HTTP 503" in err
    assert [(s.heading, s.text) for s in sections(paper)] == before
    assert FullText.objects.get(paper=paper).status == "stored"


def test_slow_answer_is_a_download_failure(arxiv, settings):
    settings.FULLTEXT_TIMEOUT = 0.3
    paper = PaperFactory()
    arxiv.serve(f"/html/{paper.versioned_id}", PAGE, delay=1)

    with pytest.raises(DownloadFailed):
        fetch_fulltext(paper=paper)
    assert not FullText.objects.filter(paper=paper).exists()


def test_requests_keep_arxiv_pacing(arxiv, settings):
    settings.ARXIV_DELAY_SECONDS = 0.3
    paper = PaperFactory(arxiv_id="2601.00001", version=2)
    serve_html(arxiv, paper)

    fetch_fulltext(paper=paper)

    arrivals = [arrived for _, arrived in arxiv.requests]
    assert len(arrivals) == 3
    assert all(later - earlier >= 0.3 for earlier, later in itertools.pairwise(arrivals))


def test_missing_reads_curated_papers_never_read_or_of_a_newer_version(arxiv):
    tag = TagFactory()
    read, moved_on, never = (PaperFactory(tags=[tag]) for _ in range(3))
    uncurated = PaperFactory()
    for paper in (read, moved_on, never, uncurated):
        arxiv.serve(f"/html/{paper.versioned_id}", PAGE)
    fetch("--paper", read.arxiv_id)
    fetch("--paper", moved_on.arxiv_id)
    moved_on.version = 2
    moved_on.save()
    arxiv.serve(f"/html/{moved_on.versioned_id}", PAGE)
    arxiv.requests.clear()

    out = fetch("--missing")

    assert sorted(line.split(":")[0] for line in out.splitlines()) == sorted(
        [moved_on.arxiv_id, never.arxiv_id]
    )
    assert FullText.objects.get(paper=moved_on).version == 2
    assert not FullText.objects.filter(paper=uncurated).exists()


def test_all_papers_by_the_setting_curated_first(arxiv, settings):
    settings.FULLTEXT_PAPERS = "all"
    newer_uncurated = PaperFactory()
    curated = PaperFactory(tags=[TagFactory()])
    # PaperFactory dates each later paper a minute earlier: the uncurated one is newer.
    assert newer_uncurated.published_at > curated.published_at
    for paper in (newer_uncurated, curated):
        arxiv.serve(f"/html/{paper.versioned_id}", PAGE)

    out = fetch("--missing")

    assert [line.split(":")[0] for line in out.splitlines()] == [
        curated.arxiv_id,
        newer_uncurated.arxiv_id,
    ]


def test_failed_reads_are_tried_again_with_failed(arxiv):
    paper = PaperFactory(tags=[TagFactory()])
    fetch_failing("--paper", paper.arxiv_id)
    assert fetch("--missing") == ""  # its version was tried
    arxiv.serve(f"/html/{paper.versioned_id}", PAGE)

    out = fetch("--failed")

    assert out.startswith(f"{paper.arxiv_id}: stored 4 section(s)")
    assert FullText.objects.get(paper=paper).status == "stored"


def test_a_read_version_is_not_asked_again(arxiv):
    paper = PaperFactory()
    arxiv.serve(f"/html/{paper.versioned_id}", PAGE)
    fetch("--paper", paper.arxiv_id)
    arxiv.requests.clear()

    assert fetch("--paper", paper.arxiv_id) == f"{paper.arxiv_id}: already read (v1)\n"
    assert arxiv.requests == []


def test_task_retries_when_arxiv_is_busy(arxiv):
    paper = PaperFactory()
    arxiv.serve(f"/html/{paper.versioned_id}", b"busy", status=503)

    with pytest.raises(Retry) as retry:
        fetch_paper_fulltext.apply(args=[paper.pk])

    assert isinstance(retry.value.exc, DownloadFailed)
    assert not FullText.objects.filter(paper=paper).exists()


def test_task_reports_an_unreadable_paper_without_retrying(arxiv):
    paper = PaperFactory()

    result = fetch_paper_fulltext.apply(args=[paper.pk]).get()

    assert result["error"] == (
        f"arXiv has no HTML rendering, and the PDF: no PDF at {arxiv.root}/pdf/{paper.versioned_id}"
    )
    assert FullText.objects.get(paper=paper).status == "failed"


def test_new_versions_of_curated_papers_are_read_after_commit(
    arxiv, settings, django_capture_on_commit_callbacks
):
    settings.FULLTEXT_AUTO = True
    tag = TagFactory()
    curated, uncurated = PaperFactory(tags=[tag]), PaperFactory()
    for paper in (curated, uncurated):
        arxiv.serve(f"/html/{paper.versioned_id}", PAGE)

    with django_capture_on_commit_callbacks(execute=True):
        queue_enrichment([curated.pk, uncurated.pk])
        assert not FullText.objects.exists()

    assert list(FullText.objects.values_list("paper", "version")) == [(curated.pk, 1)]
    curated.version = 2
    curated.save()
    arxiv.serve(f"/html/{curated.versioned_id}", PAGE)
    with django_capture_on_commit_callbacks(execute=True):
        queue_enrichment([curated.pk])
    assert FullText.objects.get(paper=curated).version == 2


def test_reading_html_without_network():
    parsed = read_html(PAGE, base_url="https://arxiv.org/html/2601.00001v2/")

    assert parsed.figures[0].image_url == "https://arxiv.org/html/2601.00001v2/x1.png"
    assert parsed.figures[2].image_url == ""
