from typing import Any

from django.core.management.base import BaseCommand

from catalog import counts


class Command(BaseCommand):
    help = (
        "Set the triggers that keep the tag and category counts as catalog/sql has them, and"
        " count every tag's and category's visible papers again from their links: for a catalog"
        " loaded with the triggers disabled or without them. Run it while nothing else writes"
        " to the catalog."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        counts.recount()
        self.stdout.write("Count triggers set; tag and category counts recounted.")
