"""The curator's desk, atop the admin's home: what waits for a curator, each a click
from where it is dealt with.

Five queries whatever the catalog's size: the review inbox, the open
suggestions, the reported comments still shown, the runs that failed or seem
stalled, and today's edition.
"""

import datetime
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.db.models import Count, Exists, OuterRef, Q
from django.urls import reverse
from django.utils import formats, timezone
from django.utils.translation import gettext, ngettext

from catalog.models import Paper
from curation.models import SuggestedPaper
from discussion.models import Comment, CommentReport
from editions.models import Edition
from ingest.models import InboxEntry, IngestRun

# How far back the desk looks for runs that failed.
FAILED_RUNS_DAYS = 7


@dataclass(frozen=True)
class Waiting:
    """One line of the desk: what waits, how many, and where to deal with it."""

    label: str
    text: str
    url: str
    # Something to do, rather than a line saying all is well.
    urgent: bool


def waiting(*, user: User | AnonymousUser, now: datetime.datetime) -> list[Waiting]:
    """The desk's lines the user may act on, from what they may view."""
    lines: list[Waiting] = []
    if user.has_perm("ingest.view_inboxentry"):
        inbox = InboxEntry.objects.filter(paper__review=Paper.Review.PENDING).count()
        lines.append(
            Waiting(
                gettext("Review inbox"),
                ngettext(
                    "%(count)d paper waiting for review",
                    "%(count)d papers waiting for review",
                    inbox,
                )
                % {"count": inbox},
                reverse("admin:ingest_inboxentry_changelist"),
                inbox > 0,
            )
        )
    if user.has_perm("curation.view_suggestedpaper"):
        suggested = SuggestedPaper.objects.filter(state=SuggestedPaper.State.PENDING).count()
        lines.append(
            Waiting(
                gettext("Suggested papers"),
                ngettext(
                    "%(count)d suggestion waiting for a curator",
                    "%(count)d suggestions waiting for a curator",
                    suggested,
                )
                % {"count": suggested},
                reverse("admin:curation_suggestedpaper_changelist")
                + f"?state__exact={SuggestedPaper.State.PENDING}",
                suggested > 0,
            )
        )
    if user.has_perm("discussion.view_comment"):
        reported = (
            Comment.objects.filter(hidden_by_curator=False, deleted=False)
            .filter(Exists(CommentReport.objects.open().filter(comment=OuterRef("pk"))))
            .count()
        )
        lines.append(
            Waiting(
                gettext("Reported comments"),
                ngettext(
                    "%(count)d reported comment still shown",
                    "%(count)d reported comments still shown",
                    reported,
                )
                % {"count": reported},
                # The reported comments come first there.
                reverse("admin:discussion_comment_changelist"),
                reported > 0,
            )
        )
    if user.has_perm("ingest.view_ingestrun"):
        lines += _runs(now=now)
    if user.has_perm("editions.view_edition"):
        lines.append(_edition(today=timezone.localdate(now)))
    return lines


def _runs(*, now: datetime.datetime) -> list[Waiting]:
    since = now - datetime.timedelta(days=FAILED_RUNS_DAYS)
    quiet_since = now - datetime.timedelta(seconds=settings.INGEST_RUN_STALE_SECONDS)
    broken = [IngestRun.Status.FAILED, IngestRun.Status.INTERRUPTED]
    # A running run with no sign of life for as long as the sweep allows
    # (IngestRun.seems_stopped), however long ago it started.
    stalled = Q(status=IngestRun.Status.RUNNING) & (
        Q(heartbeat_at__lt=quiet_since) | Q(heartbeat_at__isnull=True, started_at__lt=quiet_since)
    )
    counts = IngestRun.objects.filter(
        Q(started_at__gte=since) | Q(status=IngestRun.Status.RUNNING)
    ).aggregate(
        failed=Count("pk", filter=Q(status__in=broken, started_at__gte=since)),
        stalled=Count("pk", filter=stalled),
    )
    runs = reverse("admin:ingest_ingestrun_changelist")
    return [
        Waiting(
            gettext("Failed runs"),
            ngettext(
                "%(count)d ingest run failed or was interrupted in the last %(days)d days",
                "%(count)d ingest runs failed or were interrupted in the last %(days)d days",
                counts["failed"],
            )
            % {"count": counts["failed"], "days": FAILED_RUNS_DAYS},
            f"{runs}?status__in={','.join(broken)}",
            counts["failed"] > 0,
        ),
        Waiting(
            gettext("Stalled runs"),
            ngettext(
                "%(count)d running ingest run with no sign of life",
                "%(count)d running ingest runs with no sign of life",
                counts["stalled"],
            )
            % {"count": counts["stalled"]},
            f"{runs}?status__exact={IngestRun.Status.RUNNING}",
            counts["stalled"] > 0,
        ),
    ]


def _edition(*, today: datetime.date) -> Waiting:
    edition = Edition.objects.filter(date=today).first()
    day = formats.date_format(today, "DATE_FORMAT")
    label = gettext("Today's edition")
    if edition is None:
        add = reverse("admin:editions_edition_add") + f"?date={today.isoformat()}"
        return Waiting(label, gettext("%(day)s: none yet; start it") % {"day": day}, add, True)
    change = reverse("admin:editions_edition_change", args=[edition.pk])
    if not edition.is_published:
        text = gettext("%(day)s: a draft, not published yet") % {"day": day}
        return Waiting(label, text, change, True)
    published = timezone.localtime(edition.published_at) if edition.published_at else None
    at = formats.time_format(published, "TIME_FORMAT") if published else ""
    text = gettext("%(day)s: published at %(time)s") % {"day": day, "time": at}
    return Waiting(label, text, change, False)
