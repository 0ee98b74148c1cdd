"""A paper's stored full text as its pages show it: the Read view's sections
with their figures in place, and the figure strip of the paper page."""

from dataclasses import dataclass, field

from django.core.files.storage import Storage
from django.db.models import Exists, OuterRef, Prefetch, QuerySet, Subquery

from catalog.models import FullText, FullTextFigure, FullTextSection, Paper
from core.sql import joined_rows, split_rows

# Figures the paper page's strip shows at most, in reading order.
STRIP_FIGURES = 8


@dataclass(frozen=True)
class StripFigure:
    position: int
    url: str
    width: int
    height: int
    caption: str


def passage_anchor(*, section: int, paragraph: int) -> str:
    """The Read view's anchor of a paragraph, by its section's position and its
    place in the section (from 0): where an answer's quote links to."""
    return f"passage-{section + 1}-{paragraph + 1}"


@dataclass(frozen=True)
class ReadingParagraph:
    anchor: str
    text: str


@dataclass
class ReadingSection:
    """A section with its paragraphs and figures in the order the paper has them."""

    section: FullTextSection
    # ("paragraph", the paragraph) and ("figure", the figure), in order.
    blocks: list[tuple[str, ReadingParagraph | FullTextFigure]] = field(default_factory=list)

    @property
    def anchor(self) -> str:
        return f"section-{self.section.position + 1}"


def _figures_storage() -> Storage:
    return FullTextFigure._meta.get_field("image").storage


def with_figure_strip(papers: QuerySet[Paper]) -> QuerySet[Paper]:
    """Whether each paper has a stored text, and its first figures with a
    picture, as two columns of the paper's own row (no query of their own)."""
    stored = FullText.objects.filter(paper=OuterRef("pk"), status=FullText.Status.STORED)
    pictured = FullTextFigure.objects.filter(
        paper=OuterRef("pk"), position__lt=STRIP_FIGURES
    ).exclude(image="")
    rows: Subquery = joined_rows(
        pictured, by="paper", fields=["position", "image", "width", "height", "caption"]
    )
    return papers.annotate(has_fulltext=Exists(stored), figure_rows=rows)


def strip_figures(figure_rows: str | None) -> list[StripFigure]:
    """The figures with_figure_strip gave a paper, in reading order."""
    storage = _figures_storage()
    figures = [
        StripFigure(
            position=int(position),
            url=storage.url(name),
            width=int(width),
            height=int(height),
            caption=caption,
        )
        for position, name, width, height, caption in split_rows(figure_rows)
    ]
    return sorted(figures, key=lambda figure: figure.position)


def paper_for_reading(papers: QuerySet[Paper]) -> QuerySet[Paper]:
    """Papers with their stored text (one join), its sections and figures
    (a query each)."""
    return (
        papers.filter(fulltext__status=FullText.Status.STORED)
        .select_related("fulltext", "primary_category")
        .prefetch_related(
            Prefetch("sections", queryset=FullTextSection.objects.order_by("position")),
            Prefetch("figures", queryset=FullTextFigure.objects.order_by("position")),
        )
    )


def reading_sections(paper: Paper) -> list[ReadingSection]:
    """The paper's sections, each figure after the paragraph it follows."""
    shown = [ReadingSection(section=section) for section in paper.sections.all()]
    figures: dict[int, list[FullTextFigure]] = {}
    for figure in paper.figures.all():
        figures.setdefault(figure.section_position, []).append(figure)
    for reading in shown:
        placed = figures.get(reading.section.position, [])
        for count, paragraph in enumerate(reading.section.paragraphs):
            reading.blocks += [("figure", f) for f in placed if f.after_paragraph == count]
            anchor = passage_anchor(section=reading.section.position, paragraph=count)
            reading.blocks.append(("paragraph", ReadingParagraph(anchor=anchor, text=paragraph)))
        paragraphs = len(reading.section.paragraphs)
        reading.blocks += [("figure", f) for f in placed if f.after_paragraph >= paragraphs]
    return shown
