import io
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from io import StringIO

import pypdfium2 as pdfium
import pytest
from celery.exceptions import Retry
from django.core.cache import cache
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from PIL import Image

from catalog.models import PaperImage
from enrichment.previews import PreviewDownloadError, download_pdf
from enrichment.queue import queue_enrichment
from enrichment.tasks import render_paper_previews
from tests.factories import PaperFactory

pytestmark = pytest.mark.django_db

PAGE = (612, 792)  # US letter, in PDF points
RED, BLUE, GREEN = (220, 20, 20), (20, 20, 220), (20, 160, 20)


def make_pdf(first_figure=RED, second_figure=BLUE) -> bytes:
    """Three pages: a figure and a small logo, a larger figure, a full-page scan."""

    def place(pdf, page, color, box):
        image = pdfium.PdfImage.new(pdf)
        image.set_bitmap(pdfium.PdfBitmap.from_pil(Image.new("RGB", (40, 30), color)))
        left, bottom, width, height = box
        image.set_matrix(pdfium.PdfMatrix().scale(width, height).translate(left, bottom))
        page.insert_obj(image)

    pdf = pdfium.PdfDocument.new()
    for figures in (
        [(first_figure, (100, 400, 300, 225)), (GREEN, (20, 740, 30, 30))],
        [(second_figure, (56, 300, 500, 300))],
        [(GREEN, (0, 0, 612, 792))],
    ):
        page = pdf.new_page(*PAGE)
        for color, box in figures:
            place(pdf, page, color, box)
        page.gen_content()
    buffer = io.BytesIO()
    pdf.save(buffer)
    return buffer.getvalue()


class PdfServer(ThreadingHTTPServer):
    """Serves /pdf/<id>: the bytes, status and headers a test set for that id."""

    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), PdfHandler)
        self.responses = {}
        self.requests = []  # (path, headers, arrival time)


class PdfHandler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        server = self.server
        server.requests.append((self.path, dict(self.headers), time.monotonic()))
        arxiv_id = self.path.removeprefix("/pdf/")
        status, body, options = server.responses.get(arxiv_id, (404, b"not found", {}))
        time.sleep(options.get("delay", 0))
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/pdf")
            if "declared_length" in options:
                self.send_header("Content-Length", str(options["declared_length"]))
            elif not options.get("undeclared"):
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            for start in range(0, len(body), 64 * 1024):
                self.wfile.write(body[start : start + 64 * 1024])
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client stopped reading, as it should past the size limit


@pytest.fixture
def pdf_server(settings, tmp_path):
    server = PdfServer()
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    settings.ARXIV_PDF_URL = f"http://127.0.0.1:{server.server_address[1]}/pdf/{{id}}"
    settings.ARXIV_DELAY_SECONDS = 0
    settings.ARXIV_USER_AGENT = "Papershelf tests (mailto:test@example.org)"
    settings.MEDIA_ROOT = tmp_path
    settings.PREVIEW_PAGE_WIDTH = 300
    settings.PREVIEW_MAX_PDF_BYTES = 500_000
    settings.PREVIEW_TIMEOUT = 2
    cache.clear()
    yield server
    server.shutdown()
    server.server_close()


def serve(server, paper, body, status=200, **options):
    server.responses[paper.versioned_id] = (status, body, options)


def render(*args):
    out, err = StringIO(), StringIO()
    call_command("render_previews", *args, stdout=out, stderr=err)
    return out.getvalue()


def render_failing(*args):
    err = StringIO()
    with pytest.raises(CommandError, match="previews were left as they were"):
        call_command("render_previews", *args, stdout=StringIO(), stderr=err)
    return err.getvalue()


def images(paper):
    return list(PaperImage.objects.filter(paper=paper).order_by("kind", "position"))


def main_color(row):
    with row.image.open() as file, Image.open(file) as image:
        rgb = image.convert("RGB")
        return rgb.getpixel((rgb.width // 2, rgb.height // 2))


def test_render_previews_stores_first_page_and_largest_figures(pdf_server, tmp_path):
    paper = PaperFactory()
    serve(pdf_server, paper, make_pdf())

    out = render("--paper", paper.arxiv_id)

    assert out == f"{paper.arxiv_id}: stored the first page and 2 figure(s)\n"
    figure_1, figure_2, page = images(paper)
    assert (page.kind, page.width) == ("page", 300)
    assert abs(page.height - 300 * 792 / 612) <= 1
    assert (figure_1.kind, figure_1.position, figure_2.position) == ("figure", 0, 1)
    # Figures keep their proportions (300x225 and 500x300 points) and reading order.
    assert abs(figure_1.width / figure_1.height - 300 / 225) < 0.05
    assert abs(figure_2.width / figure_2.height - 500 / 300) < 0.05
    assert main_color(figure_1) == RED
    assert main_color(figure_2) == BLUE
    for row in (page, figure_1, figure_2):
        assert (tmp_path / row.image.name).is_file()
        assert row.image.name.startswith(f"previews/{paper.pk}/")
    ((path, headers, _),) = pdf_server.requests
    assert path == f"/pdf/{paper.arxiv_id}v1"
    assert headers["User-Agent"] == "Papershelf tests (mailto:test@example.org)"


def test_rendering_again_replaces_images_and_their_files(
    pdf_server, tmp_path, django_capture_on_commit_callbacks
):
    paper = PaperFactory()
    serve(pdf_server, paper, make_pdf())
    with django_capture_on_commit_callbacks(execute=True):
        render("--paper", paper.arxiv_id)
    old_names = {row.image.name for row in images(paper)}
    serve(pdf_server, paper, make_pdf(first_figure=GREEN))

    with django_capture_on_commit_callbacks(execute=True):
        render("--paper", paper.arxiv_id)

    rows = images(paper)
    assert len(rows) == 3
    assert main_color(rows[0]) == GREEN
    new_names = {row.image.name for row in rows}
    for name in old_names - new_names:
        assert not (tmp_path / name).exists()
    assert all((tmp_path / name).is_file() for name in new_names)


@pytest.mark.parametrize(
    ("body", "options", "reason"),
    [
        (b"%PDF-1.4\n garbage that is no PDF", {}, "not a readable PDF"),
        (b"<html>Please wait</html>", {}, "the download is not a PDF"),
        (b"%PDF-1.4" + b"0" * 100, {"declared_length": 10**9}, "1000000000 bytes, over the"),
        (b"%PDF-1.4" + b"0" * 600_000, {"undeclared": True}, "over the 500000 byte limit"),
    ],
)
def test_broken_or_huge_pdf_is_reported_and_keeps_the_current_images(
    pdf_server, body, options, reason
):
    paper = PaperFactory()
    serve(pdf_server, paper, make_pdf())
    render("--paper", paper.arxiv_id)
    before = images(paper)
    serve(pdf_server, paper, body, **options)

    err = render_failing("--paper", paper.arxiv_id)

    assert f"{paper.arxiv_id}: FAILED: " in err and reason in err
    assert images(paper) == before
    paper.refresh_from_db()
    assert paper.is_visible


def test_missing_pdf_is_reported(pdf_server):
    paper = PaperFactory()

    err = render_failing("--paper", paper.arxiv_id)

    assert "FAILED: no PDF at http://127.0.0.1" in err


def test_slow_pdf_is_a_download_error(pdf_server, settings):
    settings.PREVIEW_TIMEOUT = 0.3
    paper = PaperFactory()
    serve(pdf_server, paper, make_pdf(), delay=1)

    with pytest.raises(PreviewDownloadError, match="could not fetch"):
        download_pdf(arxiv_id=paper.versioned_id)


def test_pdf_requests_wait_for_arxiv_delay(pdf_server, settings):
    settings.ARXIV_DELAY_SECONDS = 0.4
    paper = PaperFactory()
    serve(pdf_server, paper, make_pdf())

    download_pdf(arxiv_id=paper.versioned_id)
    download_pdf(arxiv_id=paper.versioned_id)

    first, second = (arrived for _, _, arrived in pdf_server.requests)
    assert second - first >= 0.4


def test_missing_renders_only_papers_without_images(pdf_server):
    done, lacking = PaperFactory(), PaperFactory()
    PaperFactory(arxiv_id=None)
    for paper in (done, lacking):
        serve(pdf_server, paper, make_pdf())
    render("--paper", done.arxiv_id)
    pdf_server.requests.clear()

    out = render("--missing")

    assert out == f"{lacking.arxiv_id}: stored the first page and 2 figure(s)\n"
    assert [path for path, _, _ in pdf_server.requests] == [f"/pdf/{lacking.versioned_id}"]


def test_task_retries_when_arxiv_is_unavailable(pdf_server):
    paper = PaperFactory()
    serve(pdf_server, paper, b"busy", status=503)

    with pytest.raises(Retry) as retry:
        render_paper_previews.apply(args=[paper.pk])

    assert isinstance(retry.value.exc, PreviewDownloadError)
    # The first retry waits a jittered share of the 60 s backoff (full jitter may pick 0).
    assert 0 <= retry.value.when <= 60


def test_task_reports_a_broken_pdf_without_retrying(pdf_server):
    paper = PaperFactory()
    serve(pdf_server, paper, b"%PDF-1.4 broken")

    result = render_paper_previews.apply(args=[paper.pk]).get()

    assert result["error"].startswith("not a readable PDF")
    assert images(paper) == []
    assert len(pdf_server.requests) == 1


def test_paper_without_arxiv_id_has_no_previews(pdf_server):
    paper = PaperFactory(arxiv_id=None)

    result = render_paper_previews.apply(args=[paper.pk]).get()

    assert result["error"] == "the paper has no arXiv id, so no PDF"
    assert pdf_server.requests == []


def test_new_papers_get_previews_after_commit(
    pdf_server, settings, django_capture_on_commit_callbacks
):
    settings.SUMMARY_AUTO = False
    settings.PREVIEW_AUTO = True
    paper = PaperFactory()
    serve(pdf_server, paper, make_pdf())

    with django_capture_on_commit_callbacks(execute=True):
        queue_enrichment([paper.pk])
        assert images(paper) == []

    assert len(images(paper)) == 3


def test_previews_are_not_queued_when_switched_off(
    pdf_server, settings, django_capture_on_commit_callbacks
):
    settings.PREVIEW_AUTO = False
    settings.SUMMARY_AUTO = False
    paper = PaperFactory()

    with django_capture_on_commit_callbacks(execute=True):
        queue_enrichment([paper.pk])

    assert pdf_server.requests == []


def test_paper_page_shows_screenshots_without_extra_queries(pdf_server, client, settings):
    settings.MEDIA_URL = "/media/"
    bare, pictured = PaperFactory(), PaperFactory()
    serve(pdf_server, pictured, make_pdf())
    render("--paper", pictured.arxiv_id)

    with CaptureQueriesContext(connection) as bare_queries:
        bare_page = client.get(bare.get_absolute_url()).content.decode()
    with CaptureQueriesContext(connection) as pictured_queries:
        page = client.get(pictured.get_absolute_url()).content.decode()

    assert len(pictured_queries) == len(bare_queries)
    assert "Screenshots of the paper" not in bare_page
    assert "Screenshots of the paper" in page
    figure_1, figure_2, first_page = images(pictured)
    assert page.index(first_page.image.url) < page.index(figure_1.image.url)
    assert page.index(figure_1.image.url) < page.index(figure_2.image.url)
    assert 'alt="The first page of the paper"' in page
    assert page.count('alt="A figure from the paper"') == 2
