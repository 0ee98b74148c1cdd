"""Which papers still need enrichment."""

from collections.abc import Iterable
from functools import reduce
from operator import or_

from django.conf import settings
from django.db.models import Exists, F, OuterRef, Q, QuerySet

from catalog.models import NEWEST_FIRST, FullText, Paper, PaperTag, Summary, Tag


def papers_missing_summaries(
    *, keys: Iterable[tuple[str, str]], tag: Tag | None = None
) -> QuerySet[Paper]:
    """Visible papers with an abstract that lack any of these (language, kind) summaries,
    newest first."""
    lacking = [
        ~Exists(Summary.objects.filter(paper=OuterRef("pk"), language=language, kind=kind))
        for language, kind in keys
    ]
    papers = Paper.objects.visible().exclude(abstract="").filter(reduce(or_, lacking, Q()))
    if tag is not None:
        papers = papers.filter(tags=tag)
    return papers.newest_first()


def papers_for_fulltext() -> QuerySet[Paper]:
    """The visible arXiv papers whose full text is read (FULLTEXT_PAPERS):
    curated ones, those in a tag, first, each newest first."""
    curated = Exists(PaperTag.objects.filter(paper=OuterRef("pk")))
    papers = Paper.objects.visible().exclude(arxiv_id=None)
    if settings.FULLTEXT_PAPERS == "curated":
        return papers.filter(curated).newest_first()
    return papers.annotate(curated=curated).order_by(F("curated").desc(), *NEWEST_FIRST)


def papers_missing_fulltext() -> QuerySet[Paper]:
    """Those never read, or read for a version older than the paper's."""
    read = FullText.objects.filter(paper=OuterRef("pk"))
    stale = read.filter(Q(version__lt=OuterRef("version")) | Q(version=None, paper__version__gt=0))
    return papers_for_fulltext().filter(~Exists(read) | Exists(stale))


def papers_failed_fulltext() -> QuerySet[Paper]:
    """Those whose last read failed."""
    failed = FullText.objects.filter(paper=OuterRef("pk"), status=FullText.Status.FAILED)
    return papers_for_fulltext().filter(Exists(failed))
