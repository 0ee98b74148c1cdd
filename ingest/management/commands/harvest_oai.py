from django.core.management.base import BaseCommand, CommandError

from ingest.management.commands.import_arxiv_snapshot import iso_date
from ingest.oai import HarvestError, harvest


class Command(BaseCommand):
    help = (
        "Harvest the arXiv records added or changed in a period over OAI-PMH. Run again "
        "with the same arguments, an interrupted harvest resumes where it stopped."
    )

    def add_arguments(self, parser):
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

    def handle(self, *args, from_date, until_date, set_spec, **options):
        if until_date and from_date > until_date:
            raise CommandError("--from is after --until")
        try:
            run = harvest(
                from_date=from_date,
                until_date=until_date,
                set_spec=set_spec,
                on_skip=lambda reason: self.stderr.write(f"skipped {reason}"),
            )
        except HarvestError as err:
            raise CommandError(
                f"Harvest stopped: {err}. Run the same command again to resume."
            ) from err
        self.stdout.write(
            f"{run.fetched} records harvested: {run.created} created, {run.updated} updated, "
            f"{run.unchanged} unchanged; {run.skipped} skipped."
        )
