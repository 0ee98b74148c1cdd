from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ingest import runs
from ingest.models import IngestRun, IngestSource


def positive_int(value: str) -> int:
    number = int(value)
    if number < 1:
        raise ValueError(value)
    return number


class Command(BaseCommand):
    help = "Run an ingest source, or an ad-hoc arXiv query, now in the foreground."

    def add_arguments(self, parser: CommandParser) -> None:
        which = parser.add_mutually_exclusive_group(required=True)
        which.add_argument("--source", help="the name of a saved ingest source")
        which.add_argument(
            "--query", help='arXiv search syntax, e.g. "cat:cs.CL AND abs:reasoning"'
        )
        parser.add_argument(
            "--max", type=positive_int, default=100, help="most results for --query (default 100)"
        )

    def handle(
        self, *args: Any, source: str | None, query: str | None, max: int, **options: Any
    ) -> None:
        if source is not None:
            found = IngestSource.objects.filter(name=source).first()
            if found is None:
                known = ", ".join(IngestSource.objects.values_list("name", flat=True)) or "none"
                raise CommandError(f"No ingest source named {source!r}. Known sources: {known}.")
            try:
                run = runs.run_source(source=found)
            except runs.AlreadyRunning as err:
                raise CommandError(f"{err}; try again when that run has finished.") from err
        else:
            if query is None or not query.strip():  # the group asks for one of the two
                raise CommandError("The query is empty.")
            run = runs.run_query(query=query, max_results=max)
        self.stdout.write(
            f"{run.get_status_display()}: fetched {run.fetched}, created {run.created}, "
            f"updated {run.updated}, unchanged {run.unchanged}, skipped {run.skipped}."
        )
        if run.error:
            self.stderr.write(run.error)
        if run.status == IngestRun.Status.FAILED:
            raise CommandError("The run failed.")
