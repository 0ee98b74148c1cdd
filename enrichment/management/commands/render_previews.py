from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import QuerySet

from catalog.management.arguments import paper_from_argument
from catalog.models import Paper, PaperImage
from core.progress import each_with_progress
from enrichment.previews import (
    PreviewDownloadError,
    PreviewUnavailable,
    papers_missing_previews,
    render_previews,
)


class Command(BaseCommand):
    help = "Download papers' PDFs and store their first page and main figures as images."

    def add_arguments(self, parser: CommandParser) -> None:
        chosen = parser.add_mutually_exclusive_group(required=True)
        chosen.add_argument("--paper", action="append", metavar="ARXIV_ID", help="repeatable")
        chosen.add_argument("--missing", action="store_true", help="papers with no images yet")
        parser.add_argument("--limit", type=int, help="with --missing: at most this many papers")

    def handle(
        self, *args: Any, paper: list[str] | None, missing: bool, limit: int | None, **options: Any
    ) -> None:
        papers: QuerySet[Paper] | list[Paper]
        if missing:
            papers = papers_missing_previews()
            if limit:
                papers = papers[:limit]
        else:
            papers = [paper_from_argument(raw) for raw in paper or ()]  # the group asks for one

        failed = 0
        verbose = options["verbosity"] > 0
        for each in each_with_progress(papers, what="previews", unit="papers", enabled=verbose):
            try:
                images = render_previews(paper=each)
            except (PreviewUnavailable, PreviewDownloadError) as exc:
                failed += 1
                self.stderr.write(f"{each.arxiv_id}: FAILED: {exc}")
                continue
            figures = sum(1 for image in images if image.kind == PaperImage.Kind.FIGURE)
            self.stdout.write(f"{each.arxiv_id}: stored the first page and {figures} figure(s)")
        if failed:
            raise CommandError(f"{failed} paper(s) failed; their previews were left as they were.")
