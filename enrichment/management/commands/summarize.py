from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import QuerySet

from catalog.management.arguments import paper_from_argument
from catalog.models import Paper, Tag
from core.progress import each_with_progress
from enrichment.backends import get_backend
from enrichment.base import EnrichmentUnavailable
from enrichment.selectors import papers_missing_summaries
from enrichment.services import enrich_paper, planned_keys


class Command(BaseCommand):
    help = (
        "Write machine summaries, key takeaways and translations with the backend "
        "SUMMARY_BACKEND chooses, in the foreground."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        chosen = parser.add_mutually_exclusive_group(required=True)
        chosen.add_argument("--paper", action="append", metavar="ARXIV_ID", help="repeatable")
        chosen.add_argument(
            "--missing", action="store_true", help="papers lacking any summary this backend writes"
        )
        parser.add_argument("--tag", metavar="SLUG", help="with --missing: only papers in this tag")
        parser.add_argument("--limit", type=int, help="with --missing: at most this many papers")
        parser.add_argument(
            "--regenerate", action="store_true", help="replace machine-written summaries too"
        )
        parser.add_argument(
            "--force",
            action="store_true",
            help="replace everything, curators' edits included (implies --regenerate)",
        )

    def handle(
        self,
        *args: Any,
        paper: list[str] | None,
        missing: bool,
        tag: str | None,
        limit: int | None,
        regenerate: bool,
        force: bool,
        **options: Any,
    ) -> None:
        backend = get_backend()
        papers: QuerySet[Paper] | list[Paper]
        if missing:
            papers = papers_missing_summaries(keys=planned_keys(backend), tag=self.tag(tag))
            if limit:
                papers = papers[:limit]
        else:
            if tag or limit:
                raise CommandError("--tag and --limit go with --missing.")
            papers = [paper_from_argument(raw) for raw in paper or ()]  # the group asks for one

        failed = 0
        verbose = options["verbosity"] > 0
        for each in each_with_progress(papers, what="summaries", unit="papers", enabled=verbose):
            try:
                report = enrich_paper(
                    paper=each, regenerate=regenerate, overwrite_curator=force, backend=backend
                )
            except EnrichmentUnavailable as exc:
                failed += 1
                self.stderr.write(f"{each.arxiv_id or each.pk}: FAILED: {exc}")
                continue
            if report.error:
                failed += 1
                self.stderr.write(str(report))
            else:
                self.stdout.write(str(report))
        if failed:
            raise CommandError(f"{failed} paper(s) failed; nothing invalid was stored.")

    def tag(self, slug: str | None) -> Tag | None:
        if slug is None:
            return None
        found = Tag.objects.filter(slug=slug).first()
        if found is None:
            raise CommandError(f"No tag with slug {slug!r}.")
        return found
