"""Which papers still need enrichment."""

from collections.abc import Iterable
from functools import reduce
from operator import or_

from django.db.models import Exists, OuterRef, Q, QuerySet

from catalog.models import Paper, Summary, Tag


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
