"""Pictures of a paper: its first page and main figures, rendered from the arXiv PDF.

Figures are the largest images and embedded graphics (form XObjects, which is
how LaTeX includes a PDF or vector figure) on the first pages, cropped from the
rendered page so overlaid labels come along.
"""

import hashlib
import io
import logging
from dataclasses import dataclass

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from django.conf import settings
from django.core.files.base import ContentFile
from django.db import transaction
from django.db.models import Exists, OuterRef, QuerySet
from PIL import Image

from catalog.arxiv_ids import pdf_url
from catalog.changes import papers_changed
from catalog.models import Paper, PaperImage
from enrichment import downloads

logger = logging.getLogger(__name__)

# Share of the page a figure covers: smaller is a logo or icon, larger is a
# scanned page or a wrapper around the whole page.
MIN_FIGURE_SHARE = 0.04
MAX_FIGURE_SHARE = 0.9
# Figures are cropped from a page rendered at this many times the page width.
FIGURE_SCALE = 2


class PreviewUnavailable(Exception):
    """This paper's PDF cannot give previews (missing, broken, too large); retrying won't help."""


class PreviewDownloadError(Exception):
    """The PDF could not be fetched just now; worth retrying later."""


@dataclass(frozen=True)
class RenderedImage:
    kind: str
    position: int
    png: bytes
    width: int
    height: int


def download_pdf(*, arxiv_id: str) -> bytes:
    """The paper's PDF, refused past PREVIEW_MAX_PDF_BYTES or PREVIEW_TIMEOUT."""
    try:
        return downloads.download(
            url=pdf_url(arxiv_id),
            what="PDF",
            limit=settings.PREVIEW_MAX_PDF_BYTES,
            timeout=settings.PREVIEW_TIMEOUT,
        ).content
    except downloads.Unreadable as exc:
        raise PreviewUnavailable(str(exc)) from exc
    except downloads.DownloadFailed as exc:
        raise PreviewDownloadError(str(exc)) from exc


def _png(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.convert("RGB").save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()


def _render(page: pdfium.PdfPage, *, width: int) -> Image.Image:
    page_width, page_height = page.get_size()
    # A freakishly tall page must not become a huge bitmap.
    scale = min(width / page_width, 4 * width / page_height)
    image: Image.Image = page.render(scale=scale).to_pil()
    return image


def _figure_boxes(page: pdfium.PdfPage) -> list[tuple[float, float, float, float]]:
    """Bounds (left, bottom, right, top) of the page's figure-sized images and graphics."""
    left, bottom, right, top = page.get_cropbox()
    page_area = (right - left) * (top - bottom)
    boxes = []
    for obj in page.get_objects(
        filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE, pdfium_c.FPDF_PAGEOBJ_FORM], max_depth=0
    ):
        box = obj.get_bounds()
        share = (box[2] - box[0]) * (box[3] - box[1]) / page_area
        if MIN_FIGURE_SHARE <= share <= MAX_FIGURE_SHARE:
            boxes.append(box)
    return boxes


def _crop(
    rendered: Image.Image, page: pdfium.PdfPage, box: tuple[float, float, float, float]
) -> Image.Image:
    """The part of the rendered page inside box, in PDF points from the bottom left."""
    left, _bottom, right, top = page.get_cropbox()
    scale = rendered.width / (right - left)
    pixels = (
        (box[0] - left) * scale,
        (top - box[3]) * scale,
        (box[2] - left) * scale,
        (top - box[1]) * scale,
    )
    x0, y0, x1, y1 = (int(value) for value in pixels)
    return rendered.crop(
        (max(0, x0), max(0, y0), min(rendered.width, x1), min(rendered.height, y1))
    )


def render_pdf(*, data: bytes) -> list[RenderedImage]:
    """The first page and up to PREVIEW_MAX_FIGURES figures, in reading order."""
    width = settings.PREVIEW_PAGE_WIDTH
    try:
        document = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        raise PreviewUnavailable(f"not a readable PDF ({exc})") from exc
    try:
        if len(document) == 0:
            raise PreviewUnavailable("the PDF has no pages")
        first_page = _render(document[0], width=width)
        images = [
            RenderedImage(
                kind=PaperImage.Kind.FIRST_PAGE,
                position=0,
                png=_png(first_page),
                width=first_page.width,
                height=first_page.height,
            )
        ]
        candidates = []  # (area, page index, box)
        for index in range(min(settings.PREVIEW_FIGURE_PAGES, len(document))):
            page = document[index]
            if page.get_rotation():
                continue
            for box in _figure_boxes(page):
                candidates.append(((box[2] - box[0]) * (box[3] - box[1]), index, box))
        largest = sorted(candidates, key=lambda c: c[0], reverse=True)
        chosen = sorted(largest[: settings.PREVIEW_MAX_FIGURES], key=lambda c: (c[1], -c[2][3]))
        rendered_pages = {}
        for position, (_area, index, box) in enumerate(chosen):
            page = document[index]
            if index not in rendered_pages:
                rendered_pages[index] = _render(page, width=FIGURE_SCALE * width)
            figure = _crop(rendered_pages[index], page, box)
            images.append(
                RenderedImage(
                    kind=PaperImage.Kind.FIGURE,
                    position=position,
                    png=_png(figure),
                    width=figure.width,
                    height=figure.height,
                )
            )
    except pdfium.PdfiumError as exc:
        raise PreviewUnavailable(f"the PDF could not be rendered ({exc})") from exc
    finally:
        document.close()
    return images


def store_previews(*, paper: Paper, images: list[RenderedImage]) -> list[PaperImage]:
    """Replace the paper's preview images with these."""
    rows = []
    for rendered in images:
        digest = hashlib.sha256(rendered.png).hexdigest()[:12]
        row = PaperImage(
            paper=paper,
            kind=rendered.kind,
            position=rendered.position,
            width=rendered.width,
            height=rendered.height,
        )
        row.image.save(
            f"{rendered.kind}-{rendered.position}-{digest}.png",
            ContentFile(rendered.png),
            save=False,
        )
        rows.append(row)
    storage = PaperImage._meta.get_field("image").storage
    new_names = {row.image.name for row in rows if row.image.name}  # each saved just above
    try:
        with transaction.atomic():
            old_names = list(
                PaperImage.objects.select_for_update()
                .filter(paper=paper)
                .values_list("image", flat=True)
            )
            PaperImage.objects.filter(paper=paper).delete()
            PaperImage.objects.bulk_create(rows)
            # bulk_create sends no post_save: a paper's first images would stay unseen.
            papers_changed([paper.pk])
    except Exception:
        for name in new_names:
            storage.delete(name)
        raise

    def delete_old_files() -> None:
        for name in set(old_names) - new_names:
            storage.delete(name)

    transaction.on_commit(delete_old_files)
    return rows


def render_previews(*, paper: Paper) -> list[PaperImage]:
    """Download, render and store the paper's previews.

    Raises PreviewUnavailable (report and move on) or PreviewDownloadError
    (retry later); either way the paper's current images stay as they are.
    """
    if not paper.arxiv_id:
        raise PreviewUnavailable("the paper has no arXiv id, so no PDF")
    data = download_pdf(arxiv_id=paper.versioned_id)
    if not data.startswith(b"%PDF"):
        raise PreviewUnavailable("the download is not a PDF")
    return store_previews(paper=paper, images=render_pdf(data=data))


def papers_missing_previews() -> QuerySet[Paper]:
    return (
        Paper.objects.visible()
        .exclude(arxiv_id=None)
        .filter(~Exists(PaperImage.objects.filter(paper=OuterRef("pk"))))
        .newest_first()
    )
