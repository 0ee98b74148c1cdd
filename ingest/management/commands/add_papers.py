import sys
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser

from catalog.models import Tag
from ingest import links
from ingest.arxiv_api import IDS_PER_REQUEST, ArxivClient
from ingest.models import IngestRun

ACTOR = "add_papers command"


class Command(BaseCommand):
    help = (
        "Add papers by id or link (2505.15034, arXiv:2505.15034v2, hep-th/9901001, arxiv.org, "
        "Hugging Face or alphaXiv URLs, DOIs, OpenReview forums, ACL Anthology ids...) or from "
        "a file of references, with tags, and report each one."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "items", nargs="*", metavar="ID_OR_URL", help="ids or links; '-' reads them from stdin"
        )
        parser.add_argument(
            "--tag", action="append", default=[], metavar="SLUG", help="a tag to give every paper"
        )
        parser.add_argument("--note", default="", help="why: kept in each paper's history")
        parser.add_argument(
            "--user", help="the username the papers' history names (default: this command)"
        )

    def handle(
        self,
        *args: Any,
        items: list[str],
        tag: list[str],
        note: str,
        user: str | None,
        **options: Any,
    ) -> None:
        text = sys.stdin.read() if items == ["-"] else "\n".join(items)
        if not text.strip():
            raise CommandError(
                "Give at least one paper's id or link, or '-' to read them from stdin."
            )
        tags = list(Tag.objects.filter(slug__in=tag))
        unknown = sorted(set(tag) - {t.slug for t in tags})
        if unknown:
            raise CommandError(f"No tag with the slug {', '.join(unknown)}.")
        by: User | str = ACTOR
        if user is not None:
            found = get_user_model().objects.filter(username=user).first()
            if found is None:
                raise CommandError(f"No user named {user!r}.")
            by = found
        try:
            request = links.request_papers(text=text, tags=tags, note=note, by=by)
        except links.InvalidRequest as err:
            raise CommandError(str(err)) from err
        # Someone is waiting: offline, say so within seconds rather than minutes.
        client = ArxivClient.from_settings(
            page_size=IDS_PER_REQUEST, give_up_after=settings.ARXIV_COMMAND_RETRY_SECONDS
        )
        request = links.add_papers(
            request, client=client, give_up_after=settings.ARXIV_COMMAND_RETRY_SECONDS
        )
        width = max(len(line.text) for line in map(links.Line.from_json, request.lines))
        for line in map(links.Line.from_json, request.lines):
            detail = f" ({line.detail})" if line.detail else ""
            self.stdout.write(f"{line.text:<{min(width, 60)}}  {line.result.label}{detail}")
        run = request.run
        summary = ", ".join(f"{r.label} {n}" for r, n in links.counts(request).most_common())
        self.stdout.write(f"{run.get_status_display().capitalize()}: {summary}.")
        if run.status == IngestRun.Status.FAILED:
            raise CommandError(f"{run.stopped_reason or run.error} Nothing was stored.")
