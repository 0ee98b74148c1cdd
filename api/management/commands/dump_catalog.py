from typing import Any

from django.core.management.base import BaseCommand

from api import dump


class Command(BaseCommand):
    help = (
        "Write a dump of every visible paper (JSON Lines, gzip) and its manifest into DUMP_DIR,"
        " as the nightly task does: what /api/v1/dump serves."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        written = dump.write_dump()
        self.stdout.write(
            f"{written['papers']} papers in {written['file']} ({written['bytes']} bytes),"
            f" token {written['token']}, sha256 {written['sha256']}."
        )
