import datetime
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.progress import Progress
from ingest.management.arguments import iso_date
from ingest.runs import Harvest, row_of


class Command(BaseCommand):
    help = (
        "Harvest the arXiv records added or changed in a period over OAI-PMH. Run again "
        "with the same arguments, an interrupted harvest resumes where it stopped."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--from",
            dest="from_date",
            type=iso_date,
            required=True,
            metavar="YYYY-MM-DD",
            help="First day of record changes (arXiv's datestamp) to harvest.",
        )
        parser.add_argument(
            "--until", dest="until_date", type=iso_date, metavar="YYYY-MM-DD", help="Last day."
        )
        parser.add_argument(
            "--set",
            dest="set_spec",
            default="",
            metavar="SPEC",
            help="An OAI set such as cs, math or physics:hep-th; all of arXiv by default.",
        )

    def handle(
        self,
        *args: Any,
        from_date: datetime.date,
        until_date: datetime.date | None,
        set_spec: str,
        **options: Any,
    ) -> None:
        if until_date and from_date > until_date:
            raise CommandError("--from is after --until")
        harvest = Harvest(from_date=from_date, until_date=until_date, set_spec=set_spec)
        with Progress(
            "OAI-PMH records", unit="records", enabled=options["verbosity"] > 0
        ) as progress:
            for stored in harvest:
                progress.advance(stored.size)
                for skipped in stored.skipped:
                    self.stderr.write(f"skipped {skipped}")
        run = row_of(harvest)
        self.stdout.write(
            f"{run.fetched} records harvested: {run.created} created, {run.updated} updated, "
            f"{run.unchanged} unchanged; {run.skipped} skipped."
        )
        if run.stopped_reason:
            raise CommandError(
                f"Harvest stopped: {run.stopped_reason} Run the same command again to resume."
            )
