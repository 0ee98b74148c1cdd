import datetime
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.progress import Progress
from ingest.management.arguments import iso_date
from ingest.pipeline import WORKERS
from ingest.records import RecordFilter
from ingest.runs import SNAPSHOT_BATCH_SIZE, SnapshotImport, row_of


class Command(BaseCommand):
    help = (
        "Import arXiv's metadata snapshot (the JSON-lines file, plain or .gz) into the "
        "catalog. Known papers are refreshed, curators' tags, links and summaries kept."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path)
        parser.add_argument(
            "--category",
            action="append",
            default=[],
            metavar="CODE",
            help="Keep papers in this category (cs.CL) or archive (cs); repeat for more.",
        )
        parser.add_argument(
            "--from",
            dest="since",
            type=iso_date,
            metavar="YYYY-MM-DD",
            help="Keep papers whose first version was submitted on or after this day.",
        )
        parser.add_argument(
            "--until",
            type=iso_date,
            metavar="YYYY-MM-DD",
            help="Keep papers whose first version was submitted on or before this day.",
        )
        parser.add_argument(
            "--limit", type=int, metavar="N", help="Stop after N papers that pass the filters."
        )
        parser.add_argument(
            "--batch-size",
            type=int,
            default=SNAPSHOT_BATCH_SIZE,
            help="Lines of the file per write.",
        )
        parser.add_argument(
            "--workers",
            type=int,
            default=WORKERS,
            help="Processes parsing and storing batches side by side (one with --limit).",
        )

    def handle(
        self,
        *args: Any,
        file: Path,
        category: list[str],
        since: datetime.date | None,
        until: datetime.date | None,
        limit: int | None,
        batch_size: int,
        workers: int,
        **options: Any,
    ) -> None:
        if not file.is_file():
            raise CommandError(f"No such file: {file}")
        if since and until and since > until:
            raise CommandError("--from is after --until")
        if (limit is not None and limit < 1) or batch_size < 1 or workers < 1:
            raise CommandError("--limit, --batch-size and --workers must be at least 1")

        importing = SnapshotImport(
            path=file,
            record_filter=RecordFilter(categories=tuple(category), since=since, until=until),
            limit=limit,
            batch_size=batch_size,
            workers=workers,
        )
        with Progress(
            file.name, total=file.stat().st_size, unit="B", enabled=options["verbosity"] > 0
        ) as progress:
            for stored in importing:
                progress.advance(stored.size)
                for skipped in stored.skipped:
                    self.stderr.write(f"{skipped.where}: skipped, {skipped.reason}")
        run = row_of(importing)
        self.stdout.write(
            f"{run.fetched - run.skipped} papers read: {run.created} created, "
            f"{run.updated} updated, {run.unchanged} unchanged; {run.skipped} lines skipped."
        )
