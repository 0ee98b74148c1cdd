"""A paper's full text: arXiv's HTML rendering where it has one, else the PDF's text.

arXiv renders most recent papers to HTML with LaTeXML: sections are
`section.ltx_section` (and subsections), each headed by an `.ltx_title`,
paragraphs are `div.ltx_para`, figures `figure.ltx_figure` with their
`figcaption`, and math is MathML whose `alttext` is the TeX, which is kept
between $ signs for the pages to typeset. A paper arXiv did not render (or
whose rendering holds no text) is read from its PDF page by page instead, a
section a page, without figures (its previews have them).

Every download is one request in the shared arXiv turn, so a paper costs one
request for its page or PDF and one for each figure. Reading is bounded: the
download's size and time, the text's length, the PDF's pages and the time
its text takes. A paper that cannot be read is recorded as failed with why,
its earlier text removed in the same transaction; one that is read is stored
whole in one transaction, or not at all.
"""

import hashlib
import io
import logging
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit

import pypdfium2 as pdfium
from django.conf import settings
from django.core.files.base import ContentFile
from django.db import transaction
from django.utils import timezone
from lxml import etree
from lxml import html as lxml_html
from PIL import Image

from catalog.arxiv_ids import pdf_url
from catalog.changes import papers_changed
from catalog.models import FullText, FullTextFigure, FullTextSection, Paper
from catalog.search import index_texts
from enrichment import downloads
from enrichment.downloads import NotFound, Unreadable

logger = logging.getLogger(__name__)

# LaTeXML's sectioning classes and the level each is shown at.
SECTION_LEVELS = {
    "ltx_section": 1,
    "ltx_appendix": 1,
    "ltx_subsection": 2,
    "ltx_subsubsection": 3,
    "ltx_paragraph": 3,
}
# Parts of the page that are not the paper's running text: the references,
# the abstract (the paper already has it), the page's own navigation, and
# footnotes, which would cut sentences in two.
SKIPPED_CLASSES = {
    "ltx_bibliography",
    "ltx_abstract",
    "ltx_TOC",
    "ltx_page_header",
    "ltx_page_footer",
    "ltx_note",
    "ltx_authors",
    "ltx_dates",
}
SKIPPED_TAGS = {"script", "style", "nav", "header", "footer", "button", "noscript"}
# A picture of more pixels is not decoded (a decompression bomb, or a scan).
MAX_FIGURE_PIXELS = 50_000_000
# Control characters PostgreSQL or a page cannot hold; lone surrogates are
# replaced separately (see clean_text).
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffe\uffff]")
_SPACE = re.compile(r"\s+")
_SENTENCE_END = re.compile(r"[.?!:;]['\")\]]?$")


@dataclass
class ParsedSection:
    heading: str
    level: int
    paragraphs: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ParsedFigure:
    section_position: int
    after_paragraph: int
    caption: str
    image_url: str  # "" for a figure with no picture to fetch


@dataclass
class ParsedText:
    source: str
    sections: list[ParsedSection]
    figures: list[ParsedFigure] = field(default_factory=list)

    @property
    def characters(self) -> int:
        return sum(
            len(section.heading) + sum(len(p) for p in section.paragraphs)
            for section in self.sections
        ) + sum(len(figure.caption) for figure in self.figures)


@dataclass(frozen=True)
class Picture:
    data: bytes
    width: int
    height: int


@dataclass(frozen=True)
class FetchResult:
    arxiv_id: str
    source: str
    sections: int
    figures: int
    figures_without_picture: int

    def __str__(self) -> str:
        where = (
            "arXiv's HTML rendering" if self.source == FullText.Source.HTML else "the PDF's text"
        )
        missing = (
            f" ({self.figures_without_picture} without a picture)"
            if self.figures_without_picture
            else ""
        )
        return (
            f"{self.arxiv_id}: stored {self.sections} section(s) and {self.figures} "
            f"figure(s){missing} from {where}"
        )


def clean_text(text: str) -> str:
    """text with what the database or a page cannot hold taken out, spaces collapsed."""
    text = text.encode("utf-8", errors="replace").decode("utf-8")  # lone surrogates
    return _SPACE.sub(" ", _CONTROL.sub("", text)).strip()


# --- arXiv's HTML rendering -------------------------------------------------


def _classes(element: etree._Element) -> set[str]:
    return set((element.get("class") or "").split())


def _is_element(node: object) -> bool:
    return isinstance(node, etree._Element) and isinstance(node.tag, str)


def text_of(element: etree._Element) -> str:
    """The element's text as a reader sees it, math as its TeX between $ signs
    ($$ for displayed math); figures and footnotes inside it left out."""
    parts: list[str] = []

    def visit(node: etree._Element) -> None:
        tag = node.tag.rsplit("}", 1)[-1].lower()
        if tag == "math":
            tex = (node.get("alttext") or "").strip()
            if tex:
                fence = "$$" if node.get("display") == "block" else "$"
                parts.append(f" {fence}{tex}{fence} ")
        elif tag in SKIPPED_TAGS or tag == "figure" or _classes(node) & SKIPPED_CLASSES:
            pass
        else:
            parts.append(node.text or "")
            for child in node:
                if _is_element(child):
                    visit(child)
                else:
                    parts.append(child.tail or "")
        parts.append(node.tail or "")

    parts.append(element.text or "")
    for child in element:
        if _is_element(child):
            visit(child)
        else:
            parts.append(child.tail or "")
    return clean_text("".join(parts))


class _HtmlWalk:
    """Sections, paragraphs and figures in the order the page has them."""

    def __init__(self, *, base_url: str) -> None:
        self.base_url = base_url
        self.sections: list[ParsedSection] = []
        self.figures: list[ParsedFigure] = []

    def walk(self, element: etree._Element) -> None:
        for child in element:
            if not _is_element(child):
                continue
            classes = _classes(child)
            tag = child.tag.lower()
            if tag in SKIPPED_TAGS or classes & SKIPPED_CLASSES:
                continue
            level = next((SECTION_LEVELS[c] for c in classes if c in SECTION_LEVELS), None)
            if tag == "section" and level is not None:
                self.section(child, level=level)
            elif tag == "figure" and "ltx_figure" in classes:
                self.figure(child)
            elif "ltx_para" in classes:
                self.paragraph(child)
            elif "ltx_title" in classes or tag == "h1":
                continue  # the paper's title, or a heading section() has read
            else:
                self.walk(child)

    def section(self, element: etree._Element, *, level: int) -> None:
        title = next((c for c in element if _is_element(c) and "ltx_title" in _classes(c)), None)
        heading = text_of(title) if title is not None else ""
        self.sections.append(ParsedSection(heading=heading, level=level))
        self.walk(element)

    def current(self) -> ParsedSection:
        if not self.sections:  # text before the first section
            self.sections.append(ParsedSection(heading="", level=1))
        return self.sections[-1]

    def paragraph(self, element: etree._Element) -> None:
        text = text_of(element)
        if text:
            self.current().paragraphs.append(text)
        # A figure set inside the paragraph comes after it.
        for inner in element.iter("figure"):
            if "ltx_figure" in _classes(inner) and not _inside_figure(inner, element):
                self.figure(inner)

    def figure(self, element: etree._Element) -> None:
        section = self.current()
        # The figure's own caption, not the first of its panels'.
        caption_element = next(
            (c for c in element if _is_element(c) and c.tag == "figcaption"),
            next(element.iter("figcaption"), None),
        )
        caption = text_of(caption_element) if caption_element is not None else ""
        image = next(element.iter("img"), None)
        source = (image.get("src") or "").strip() if image is not None else ""
        url = urljoin(self.base_url, source) if source else ""
        if url and not _same_site(url, self.base_url):
            url = ""  # only arXiv's own pictures are fetched
        if caption or url:
            self.figures.append(
                ParsedFigure(
                    section_position=len(self.sections) - 1,
                    after_paragraph=len(section.paragraphs),
                    caption=caption,
                    image_url=url,
                )
            )


def _inside_figure(element: etree._Element, top: etree._Element) -> bool:
    """Whether element sits inside another figure below top (a subfigure)."""
    parent = element.getparent()
    while parent is not None and parent is not top:
        if parent.tag == "figure":
            return True
        parent = parent.getparent()
    return False


def _same_site(url: str, base_url: str) -> bool:
    target, base = urlsplit(url), urlsplit(base_url)
    return target.scheme in ("http", "https") and target.netloc == base.netloc


def read_html(content: bytes, *, base_url: str) -> ParsedText:
    """The text of arXiv's HTML rendering; Unreadable if it holds none."""
    try:
        # NUL bytes would come out as replacement characters.
        root = lxml_html.document_fromstring(content.replace(b"\x00", b""))
    except (etree.ParserError, ValueError) as exc:
        raise Unreadable(f"the HTML page could not be parsed ({exc})") from exc
    article = next(root.iter("article"), None)
    walk = _HtmlWalk(base_url=base_url)
    walk.walk(article if article is not None else root)
    sections = [s for s in walk.sections if s.paragraphs or s.heading]
    if not any(section.paragraphs for section in sections):
        raise Unreadable("arXiv's HTML rendering holds no text")
    if len(sections) != len(walk.sections):  # empty sections dropped: renumber figures
        kept = {id(s): n for n, s in enumerate(sections)}
        positions = [kept.get(id(s)) for s in walk.sections]
        walk.figures = [
            ParsedFigure(
                section_position=position,
                after_paragraph=f.after_paragraph,
                caption=f.caption,
                image_url=f.image_url,
            )
            for f in walk.figures
            if (position := positions[f.section_position]) is not None
        ]
    parsed = ParsedText(source=FullText.Source.HTML, sections=sections, figures=walk.figures)
    _check_length(parsed)
    return parsed


def _check_length(parsed: ParsedText) -> None:
    limit = settings.FULLTEXT_MAX_CHARACTERS
    if parsed.characters > limit:
        raise Unreadable(f"the text is {parsed.characters:,} characters, over the {limit:,} limit")


# --- the PDF's text ---------------------------------------------------------


def pdf_paragraphs(page_text: str) -> list[str]:
    """A page's lines joined into paragraphs: a short line that ends a sentence
    ends its paragraph, and a word hyphenated across lines is joined again."""
    lines = [clean_text(line) for line in page_text.splitlines()]
    lines = [line for line in lines if line]
    if not lines:
        return []
    lengths = sorted(len(line) for line in lines)
    full_line = lengths[(3 * len(lengths)) // 4]
    paragraphs: list[str] = []
    current = ""
    for line in lines:
        if current.endswith("-") and line[:1].islower():
            current = current[:-1] + line
        else:
            current = f"{current} {line}" if current else line
        if len(line) < 0.8 * full_line and _SENTENCE_END.search(line):
            paragraphs.append(current)
            current = ""
    if current:
        paragraphs.append(current)
    return paragraphs


def read_pdf(content: bytes) -> ParsedText:
    """The PDF's text, a section a page (headed by nothing: pages show their number)."""
    if not content.startswith(b"%PDF"):
        raise Unreadable("the download is not a PDF")
    try:
        document = pdfium.PdfDocument(content)
    except pdfium.PdfiumError as exc:
        raise Unreadable(f"not a readable PDF ({exc})") from exc
    try:
        pages = len(document)
        if pages == 0:
            raise Unreadable("the PDF has no pages")
        limit = settings.FULLTEXT_MAX_PDF_PAGES
        if pages > limit:
            raise Unreadable(f"the PDF has {pages} pages, over the {limit} limit")
        parsed = ParsedText(source=FullText.Source.PDF, sections=[])
        deadline = time.monotonic() + settings.FULLTEXT_PARSE_SECONDS
        for index in range(pages):
            if time.monotonic() > deadline:
                raise Unreadable(
                    f"reading the PDF's text took over {settings.FULLTEXT_PARSE_SECONDS:g}s"
                )
            parsed.sections.append(
                ParsedSection(
                    heading="", level=1, paragraphs=pdf_paragraphs(_page_text(document, index))
                )
            )
            _check_length(parsed)
    except pdfium.PdfiumError as exc:
        raise Unreadable(f"the PDF's text could not be read ({exc})") from exc
    finally:
        document.close()
    if not any(section.paragraphs for section in parsed.sections):
        raise Unreadable("the PDF has no text to read (a scan?)")
    return parsed


def _page_text(document: pdfium.PdfDocument, index: int) -> str:
    page = document[index]
    try:
        text_page = page.get_textpage()
        try:
            text: str = text_page.get_text_bounded()
        finally:
            text_page.close()
    finally:
        page.close()
    return text


# --- figures' pictures ------------------------------------------------------


def picture(data: bytes) -> Picture | None:
    """The figure as WebP at most FULLTEXT_FIGURE_WIDTH wide; None for what no
    browser should be sent (unreadable, a vector format, too many pixels)."""
    try:
        with Image.open(io.BytesIO(data)) as image:
            if image.width * image.height > MAX_FIGURE_PIXELS:
                return None
            image.load()
            converted = image.convert("RGBA" if _has_alpha(image) else "RGB")
    except (OSError, ValueError, Image.DecompressionBombError):
        return None
    width = settings.FULLTEXT_FIGURE_WIDTH
    if converted.width > width:
        converted.thumbnail((width, width * 8))
    buffer = io.BytesIO()
    converted.save(buffer, format="WEBP", quality=85)
    return Picture(data=buffer.getvalue(), width=converted.width, height=converted.height)


def _has_alpha(image: Image.Image) -> bool:
    return image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info


def fetch_pictures(figures: list[ParsedFigure]) -> Iterator[Picture | None]:
    """Each figure's picture in turn, the first FULLTEXT_MAX_FIGURES only;
    DownloadFailed when arXiv is busy (the whole paper is tried again later)."""
    for position, figure in enumerate(figures):
        if not figure.image_url or position >= settings.FULLTEXT_MAX_FIGURES:
            yield None
            continue
        try:
            got = downloads.download(
                url=figure.image_url,
                what="figure",
                limit=settings.FULLTEXT_MAX_BYTES,
                timeout=settings.FULLTEXT_TIMEOUT,
            )
        except Unreadable as exc:
            logger.warning("Figure %s left without its picture: %s", figure.image_url, exc)
            yield None
            continue
        yield picture(got.content)


# --- reading a paper --------------------------------------------------------


def html_url(versioned_id: str) -> str:
    return settings.ARXIV_HTML_URL.format(id=versioned_id)


def read_paper(*, versioned_id: str) -> tuple[ParsedText, list[Picture | None]]:
    """The paper's text and its figures' pictures, from the HTML rendering or
    else the PDF. Unreadable says why neither could be read."""
    limit, timeout = settings.FULLTEXT_MAX_BYTES, settings.FULLTEXT_TIMEOUT
    url = html_url(versioned_id)
    try:
        page = downloads.download(url=url, what="HTML page", limit=limit, timeout=timeout)
        base = page.url if page.url.endswith("/") else page.url + "/"
        parsed = read_html(page.content, base_url=base)
    except NotFound:
        html_problem = "arXiv has no HTML rendering"
    except Unreadable as exc:
        html_problem = str(exc)
    else:
        return parsed, list(fetch_pictures(parsed.figures))
    try:
        pdf = downloads.download(
            url=pdf_url(versioned_id), what="PDF", limit=limit, timeout=timeout
        )
        return read_pdf(pdf.content), []
    except Unreadable as exc:
        raise Unreadable(f"{html_problem}, and the PDF: {exc}") from exc


def is_current(paper: Paper) -> bool:
    """Whether the paper's stored text (or failure) is of its current version."""
    read = FullText.objects.filter(paper=paper).only("version").first()
    return read is not None and (read.version or 0) >= (paper.version or 0)


def fetch_fulltext(*, paper: Paper, force: bool = False) -> FetchResult | None:
    """Read and store the paper's full text, replacing what it had; None, without
    asking arXiv, when its current version was read already (unless force).

    Raises Unreadable (recorded on the paper: report and move on) or
    DownloadFailed (retry later; what the paper had stays).
    """
    if not paper.arxiv_id:
        raise Unreadable("the paper has no arXiv id")
    if not force and is_current(paper):
        return None
    try:
        parsed, pictures = read_paper(versioned_id=paper.versioned_id)
    except Unreadable as exc:
        record_failure(paper=paper, error=str(exc))
        raise
    return store_fulltext(paper=paper, parsed=parsed, pictures=pictures)


def record_failure(*, paper: Paper, error: str) -> None:
    """The paper's text could not be read: say why, and keep no text of an older read."""
    with transaction.atomic():
        old_names = _clear(paper)
        FullText.objects.update_or_create(
            paper=paper,
            defaults={
                "version": paper.version,
                "source": "",
                "status": FullText.Status.FAILED,
                "error": error[:2000],
                "characters": 0,
                "search_document": None,
                "fetched_at": timezone.now(),
            },
        )
        papers_changed([paper.pk])
    _delete_files_on_commit(old_names, keep=set())


def store_fulltext(
    *, paper: Paper, parsed: ParsedText, pictures: list[Picture | None]
) -> FetchResult:
    """Replace the paper's text, sections and figures with these, all or nothing."""
    sections = [
        FullTextSection(
            paper=paper,
            position=position,
            heading=section.heading,
            level=section.level,
            text="\n\n".join(section.paragraphs),
        )
        for position, section in enumerate(parsed.sections)
    ]
    figures = []
    for position, (figure, shown) in enumerate(zip(parsed.figures, pictures, strict=True)):
        row = FullTextFigure(
            paper=paper,
            position=position,
            section_position=figure.section_position,
            after_paragraph=figure.after_paragraph,
            caption=figure.caption,
        )
        if shown is not None:
            digest = hashlib.sha256(shown.data).hexdigest()[:12]
            row.width, row.height = shown.width, shown.height
            row.image.save(f"{position}-{digest}.webp", ContentFile(shown.data), save=False)
        figures.append(row)
    storage = FullTextFigure._meta.get_field("image").storage
    new_names = {name for row in figures if (name := row.image.name)}
    try:
        with transaction.atomic():
            old_names = _clear(paper)
            FullTextSection.objects.bulk_create(sections)
            FullTextFigure.objects.bulk_create(figures)
            FullText.objects.update_or_create(
                paper=paper,
                defaults={
                    "version": paper.version,
                    "source": parsed.source,
                    "status": FullText.Status.STORED,
                    "error": "",
                    "characters": parsed.characters,
                    "fetched_at": timezone.now(),
                },
            )
            index_texts(FullText.objects.filter(paper=paper))
            papers_changed([paper.pk])
    except Exception:
        for name in new_names:
            storage.delete(name)
        raise
    _delete_files_on_commit(old_names, keep=new_names)
    return FetchResult(
        arxiv_id=paper.arxiv_id or "",
        source=parsed.source,
        sections=len(sections),
        figures=len(figures),
        figures_without_picture=sum(1 for row in figures if not row.image),
    )


def _clear(paper: Paper) -> list[str]:
    """Delete the paper's sections and figures (its FullText row locked first, so
    two reads of one paper take turns); the figures' file names."""
    list(FullText.objects.select_for_update().filter(paper=paper).values_list("pk", flat=True))
    old_names = [
        name
        for name in FullTextFigure.objects.filter(paper=paper).values_list("image", flat=True)
        if name
    ]
    FullTextFigure.objects.filter(paper=paper).delete()
    FullTextSection.objects.filter(paper=paper).delete()
    return old_names


def _delete_files_on_commit(old_names: list[str], *, keep: set[str]) -> None:
    storage = FullTextFigure._meta.get_field("image").storage

    def delete_old_files() -> None:
        for name in set(old_names) - keep:
            storage.delete(name)

    transaction.on_commit(delete_old_files)
