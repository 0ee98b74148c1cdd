import datetime
import re
from dataclasses import dataclass, fields

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import Q
from django.utils import timezone

from catalog.models import Paper, Tag

# "cs", "cs.CL", "math-ph", "astro-ph.CO": an archive, or one of its categories.
LISTING_CATEGORY = re.compile(r"[a-z][a-z-]*(?:\.[A-Za-z-]+)?")


class IngestSource(models.Model):
    """A saved arXiv query that a periodic task runs on its schedule, and the
    listing categories read right after each of arXiv's announcements."""

    name = models.CharField(max_length=100, unique=True)
    query = models.CharField(
        max_length=1000,
        help_text='arXiv search syntax, e.g. "cat:cs.CL AND abs:reasoning".',
    )
    tags = models.ManyToManyField(Tag, blank=True, help_text="Given to every paper it brings.")
    enabled = models.BooleanField(default=True)
    needs_review = models.BooleanField(
        default=False,
        help_text=(
            "The papers it brings wait in the review inbox, not public, until a curator "
            "publishes them. Off: they are published at once."
        ),
    )
    interval_minutes = models.PositiveIntegerField(
        "run every (minutes)", default=60, validators=[MinValueValidator(1)]
    )
    max_results = models.PositiveIntegerField(
        "most results per run", default=200, validators=[MinValueValidator(1)]
    )
    listing_categories = models.CharField(
        "listing feed categories",
        max_length=500,
        blank=True,
        help_text='arXiv categories separated by spaces, e.g. "cs.CL cs.LG": right after each '
        "announcement, every paper arXiv announces in them is stored (new papers, cross-lists, and "
        "new versions of papers already here). Empty: the query alone, on its interval.",
    )
    listed_through = models.DateField(
        "listing read through",
        null=True,
        blank=True,
        help_text="The date of the last announcement whose listing was read.",
    )
    # The announcement for which the query, run because the listing was not
    # out yet, brought new papers: it need not run again until the next one.
    fallback_through = models.DateField(null=True, blank=True, editable=False)
    # Papers announced but not yet given by the API ({id: {"version": n,
    # "kind": k, "announced": ISO date, "since": ISO moment}}), asked again at
    # every check until they come or LISTING_AWAIT_HOURS pass.
    awaiting = models.JSONField(default=dict, blank=True, editable=False)
    last_success_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When the last successful run started: the next run pages back to here.",
    )
    periodic_task = models.OneToOneField(
        "django_celery_beat.PeriodicTask",
        null=True,
        blank=True,
        editable=False,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    # A run claims its source so that no other worker runs it at the same
    # time. The run's heartbeat refreshes claimed_at; a claim whose heartbeat
    # stopped for INGEST_RUN_STALE_SECONDS is released (ingest.runs).
    claimed_at = models.DateTimeField(
        "claim's last heartbeat", null=True, blank=True, editable=False
    )
    claim_token = models.CharField(max_length=32, blank=True, editable=False)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    @property
    def listing_category_list(self) -> list[str]:
        return self.listing_categories.split()

    def clean(self) -> None:
        unknown = [
            code for code in self.listing_category_list if not LISTING_CATEGORY.fullmatch(code)
        ]
        if unknown:
            raise ValidationError(
                {"listing_categories": f"Not arXiv categories: {', '.join(unknown)}."}
            )


@dataclass(frozen=True)
class RunCounts:
    """What a run, or one batch of it, read and stored. Entries read past the
    run's filter, skipped ones included: fetched is created + updated +
    unchanged + skipped."""

    fetched: int = 0
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    skipped: int = 0


class IngestRun(models.Model):
    class Kind(models.TextChoices):
        API = "api", "arXiv API query"
        SNAPSHOT = "snapshot", "metadata snapshot import"
        OAI = "oai", "OAI-PMH harvest"
        LINKS = "links", "added by link"
        LISTING = "listing", "arXiv listing feed"

    class Status(models.TextChoices):
        RUNNING = "running", "running"
        SUCCEEDED = "succeeded", "succeeded"
        PARTIAL = "partial", "finished with errors"
        FAILED = "failed", "failed"
        # Its worker stopped (killed, or its machine went down) before closing it.
        INTERRUPTED = "interrupted", "interrupted"

    # Bulk runs bring up to millions of papers: enriched by command, not a task each.
    BULK_KINDS = (Kind.SNAPSHOT, Kind.OAI)
    COUNT_FIELDS = [field.name for field in fields(RunCounts)]

    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.API)
    source = models.ForeignKey(
        IngestSource, null=True, blank=True, on_delete=models.SET_NULL, related_name="runs"
    )
    query = models.CharField(max_length=1000, blank=True)
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.RUNNING)
    # Written by a running run at least every minute (ingest.runs.Heartbeat);
    # a run whose heartbeat stops is marked interrupted. Empty until a worker
    # begins the run (a link request waiting in the queue).
    heartbeat_at = models.DateTimeField("last heartbeat", null=True, blank=True)
    # What RunCounts holds, as the run has counted so far.
    fetched = models.PositiveIntegerField(default=0)
    created = models.PositiveIntegerField(default=0)
    updated = models.PositiveIntegerField(default=0)
    unchanged = models.PositiveIntegerField(default=0)
    skipped = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-started_at"]
        indexes = [
            models.Index(fields=["source", "-started_at"], name="ingestrun_source_started"),
            # The runs whose heartbeat the periodic sweep checks.
            models.Index(
                fields=["heartbeat_at"],
                name="ingestrun_running_heartbeat",
                condition=Q(status="running"),
            ),
        ]

    def __str__(self) -> str:
        label = (
            self.source.name if self.source is not None else self.query or self.get_kind_display()
        )
        return f"{label} at {self.started_at:%Y-%m-%d %H:%M}"

    @property
    def stopped_reason(self) -> str:
        """Why the run stopped before reading its source to the end, if it did."""
        stopped = [p for p in self.error.split("\n\n") if p.startswith("Stopped: ")]
        return stopped[0].removeprefix("Stopped: ") if stopped else ""

    def add(self, counts: RunCounts) -> None:
        """Add a stored batch's counts."""
        for name in self.COUNT_FIELDS:
            setattr(self, name, getattr(self, name) + getattr(counts, name))

    def seems_stopped(self, *, now: datetime.datetime) -> bool:
        """Running, with no sign of life for INGEST_RUN_STALE_SECONDS: no heartbeat,
        or before the first one (a request no worker has begun), since it started."""
        last_sign = self.heartbeat_at or self.started_at
        stale = datetime.timedelta(seconds=settings.INGEST_RUN_STALE_SECONDS)
        return self.status == self.Status.RUNNING and last_sign < now - stale


class TagRule(models.Model):
    """Tags papers automatically at ingest.

    A paper matches when any keyword occurs in its title or abstract and, if
    categories are given, it is in any of them; with no keywords the
    categories alone decide.
    """

    tag = models.ForeignKey(Tag, on_delete=models.CASCADE, related_name="rules")
    keywords = models.TextField(blank=True, help_text="One keyword or phrase per line.")
    categories = models.CharField(
        max_length=500, blank=True, help_text="arXiv category codes separated by spaces."
    )
    enabled = models.BooleanField(default=True)

    class Meta:
        ordering = ["tag__name", "id"]

    def __str__(self) -> str:
        return f"rule for {self.tag}"

    def clean(self) -> None:
        if not self.keywords.strip() and not self.categories.strip():
            raise ValidationError("Give keywords, categories or both: an empty rule tags nothing.")


class OaiHarvest(models.Model):
    """One OAI-PMH harvest, with the resumption token that lets it resume."""

    set_spec = models.CharField(max_length=64, blank=True)
    from_date = models.DateField()
    until_date = models.DateField(null=True, blank=True)
    resumption_token = models.CharField(max_length=500, blank=True)
    records = models.PositiveIntegerField(default=0)
    completed = models.BooleanField(default=False)
    started_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-started_at"]
        verbose_name = "OAI-PMH harvest"

    def __str__(self) -> str:
        return f"OAI {self.set_spec or 'all'} from {self.from_date}"


class InboxEntry(models.Model):
    """A paper a source that needs review brought: where it came from, for the inbox.

    Whether it still waits is the paper's review state.
    """

    paper = models.OneToOneField(Paper, on_delete=models.CASCADE, related_name="inbox_entry")
    source = models.ForeignKey(
        IngestSource, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    run = models.ForeignKey(
        IngestRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    arrived_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-arrived_at", "-id"]
        verbose_name = "paper waiting for review"
        verbose_name_plural = "review inbox"

    def __str__(self) -> str:
        return str(self.paper)


class LinkRequest(models.Model):
    """Papers a curator asked for by pasting arXiv ids or links, and what became of each.

    lines holds one result per pasted item (see ingest.links.Line), filled in
    as the run goes; the run holds the counts and the status.
    """

    run = models.OneToOneField(IngestRun, on_delete=models.CASCADE, related_name="link_request")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    # Who asked when no user did (the add_papers command).
    actor = models.CharField(max_length=100, blank=True)
    text = models.TextField("links or ids")
    tags = models.ManyToManyField(Tag, blank=True, related_name="+")
    note = models.TextField(blank=True)
    ids_total = models.PositiveIntegerField(default=0)
    ids_fetched = models.PositiveIntegerField("ids asked of arXiv", default=0)
    lines = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "papers by link"
        verbose_name_plural = "papers by link"

    def __str__(self) -> str:
        return f"{self.ids_total} ids at {self.created_at:%Y-%m-%d %H:%M}"
