from typing import Any

from django.core.management.base import BaseCommand, CommandError

from catalog.demo.services import DEMO_CATALOG, load_demo_catalog, read_demo_catalog


class Command(BaseCommand):
    help = (
        "Load the demo papers (catalog/demo/papers.json). Papers already in the catalog "
        "are left as they are, so it is safe to run on every start."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            catalog = read_demo_catalog()
        except (OSError, ValueError) as error:
            raise CommandError(f"Cannot read {DEMO_CATALOG}: {error}") from error
        loaded = load_demo_catalog(catalog=catalog)
        if not loaded.papers:
            self.stdout.write("Demo data already loaded: nothing to do")
            return
        self.stdout.write(
            f"Loaded {loaded.papers} papers, {loaded.tags} tags, "
            f"{loaded.code_links} code links, {loaded.summaries} summaries"
        )
