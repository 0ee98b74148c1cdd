from collections import Counter
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import QuerySet

from catalog.management.arguments import paper_from_argument
from catalog.models import Paper
from core.progress import each_with_progress
from enrichment.downloads import DownloadFailed, Unreadable
from enrichment.fulltext import fetch_fulltext
from enrichment.selectors import papers_failed_fulltext, papers_missing_fulltext


class Command(BaseCommand):
    help = (
        "Read papers' full text from arXiv's HTML rendering (else their PDF) and store "
        "their sections and figures."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        chosen = parser.add_mutually_exclusive_group(required=True)
        chosen.add_argument("--paper", action="append", metavar="ARXIV_ID", help="repeatable")
        chosen.add_argument(
            "--missing",
            action="store_true",
            help="papers FULLTEXT_PAPERS names that were never read, or whose version moved on",
        )
        chosen.add_argument("--failed", action="store_true", help="papers whose last read failed")
        parser.add_argument(
            "--limit", type=int, help="with --missing or --failed: at most this many"
        )
        parser.add_argument(
            "--force", action="store_true", help="read again papers whose version was read"
        )

    def handle(
        self,
        *args: Any,
        paper: list[str] | None,
        missing: bool,
        failed: bool,
        limit: int | None,
        force: bool,
        **options: Any,
    ) -> None:
        papers: QuerySet[Paper] | list[Paper]
        if missing or failed:
            papers = papers_missing_fulltext() if missing else papers_failed_fulltext()
            if limit:
                papers = papers[:limit]
            force = force or failed
        else:
            papers = [paper_from_argument(raw) for raw in paper or ()]  # the group asks for one

        why: Counter[str] = Counter()
        verbose = options["verbosity"] > 0
        for each in each_with_progress(papers, what="full texts", unit="papers", enabled=verbose):
            try:
                result = fetch_fulltext(paper=each, force=force)
            except Unreadable as exc:
                why["could not be read"] += 1
                self.stderr.write(f"{each.arxiv_id}: FAILED: {exc}")
                continue
            except DownloadFailed as exc:
                why["could not be downloaded just now (run again later)"] += 1
                self.stderr.write(f"{each.arxiv_id}: FAILED: {exc}")
                continue
            if result is None:
                self.stdout.write(f"{each.arxiv_id}: already read (v{each.version})")
            else:
                self.stdout.write(str(result))
        if why:
            reasons = "; ".join(f"{count} {reason}" for reason, count in why.items())
            raise CommandError(f"{why.total()} paper(s) failed: {reasons}.")
