from typing import Any

from django.core.management.base import BaseCommand

from ingest.tagging import apply_tag_rules


class Command(BaseCommand):
    help = "Apply the enabled tag rules to every paper in the catalog."

    def handle(self, *args: Any, **options: Any) -> None:
        added = apply_tag_rules()
        self.stdout.write(f"Added {added} tags.")
