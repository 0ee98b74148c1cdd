from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts import services


class Command(BaseCommand):
    help = "Send the email digests that are due now (the hourly beat task does the same)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="List who would get a digest and how many papers, without sending or claiming.",
        )

    def handle(self, *args: Any, dry_run: bool, **options: Any) -> None:
        run = services.send_due_digests(dry_run=dry_run)
        if dry_run:
            for email, count in run.would_send:
                self.stdout.write(f"{email}: {count or 'no'} new papers")
            self.stdout.write(f"{len(run.would_send)} digests due (dry run: nothing sent).")
            return
        for email in run.sent:
            self.stdout.write(f"Sent to {email}")
        self.stdout.write(f"{len(run.sent)} sent, {run.empty} with nothing new.")
        if run.failed:
            raise CommandError(f"{len(run.failed)} failed and stay due: {', '.join(run.failed)}")
