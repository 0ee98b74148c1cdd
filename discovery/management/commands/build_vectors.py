from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from discovery import neighbours, vectors


class Command(BaseCommand):
    help = (
        "Compute paper vectors with the backend EMBEDDING_BACKEND chooses (fitting the "
        "tf-idf model first when there is none or it is due for a refit), then every "
        "paper's similar papers. Runs in the foreground; a worker does the same nightly."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        chosen = parser.add_mutually_exclusive_group()
        chosen.add_argument(
            "--missing",
            action="store_true",
            help="only papers without a vector of the current backend (the default)",
        )
        chosen.add_argument(
            "--all", action="store_true", help="every visible paper, refitting the tf-idf model"
        )
        parser.add_argument(
            "--no-neighbours", action="store_true", help="vectors only, no similar papers"
        )
        parser.add_argument("--batch-size", type=int, default=1000, metavar="N")

    def handle(
        self,
        *args: Any,
        missing: bool,
        all: bool,
        no_neighbours: bool,
        batch_size: int,
        **options: Any,
    ) -> None:
        if batch_size < 1:
            raise CommandError("--batch-size must be at least 1.")
        verbose = options["verbosity"] > 0
        try:
            if all and settings.EMBEDDING_BACKEND == "tfidf":
                vectors.fit_on_catalog()
                self.stdout.write("Fitted the tf-idf model")
            run = vectors.build_vectors(
                everything=all, batch_size=batch_size, show_progress=verbose
            )
        except (vectors.VectorsFailed, vectors.VectorsUnavailable) as exc:
            raise CommandError(f"No vectors: {exc}") from exc
        if run.fitted:
            self.stdout.write("Fitted the tf-idf model")
        self.stdout.write(f"Stored {run.stored} vectors")
        if no_neighbours:
            return
        built = neighbours.build_all(show_progress=verbose)
        self.stdout.write(
            f"Similar papers of {built.papers} papers: {built.rows} rows"
            f" ({built.index or 'no index'})"
        )
