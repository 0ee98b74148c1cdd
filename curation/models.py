"""Readers' suggestions of papers for the catalog, as curators review them."""

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from catalog import arxiv_ids
from catalog.models import Paper, Tag


class SuggestedPaper(models.Model):
    """A paper readers suggested for the catalog: one however many readers suggest it.

    Curators approve it (it is then added from arXiv by link) or decline it
    with a reason; readers see its state on their suggestions page.
    """

    class State(models.TextChoices):
        PENDING = "pending", _("waiting for a curator")
        APPROVED = "approved", _("approved, being added")
        ADDED = "added", _("added")
        DECLINED = "declined", _("declined")
        NOT_FOUND = "not_found", _("not found on arXiv")

    arxiv_id = models.CharField("arXiv id", max_length=64, unique=True)
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING)
    # The catalog's paper, once it is there.
    paper = models.OneToOneField(
        Paper, null=True, blank=True, on_delete=models.SET_NULL, related_name="suggested"
    )
    decline_reason = models.TextField(blank=True)
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)
    # The adding of an approved suggestion, with its progress and result.
    link_request = models.ForeignKey(
        "ingest.LinkRequest", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField("first suggested", default=timezone.now)
    last_suggested_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-last_suggested_at", "-id"]
        indexes = [
            models.Index(fields=["state", "-last_suggested_at"], name="suggested_state_last"),
        ]

    def __str__(self) -> str:
        return f"arXiv:{self.arxiv_id}"

    @property
    def abs_url(self) -> str:
        return arxiv_ids.abs_url(self.arxiv_id)


class Suggestion(models.Model):
    """One reader suggesting one paper, with their tag and note.

    A row per reader, so a paper's suggestions can be counted (for curators,
    and as a signal for ranking) and each reader limited per day.
    """

    suggested_paper = models.ForeignKey(
        SuggestedPaper, on_delete=models.CASCADE, related_name="suggestions"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="suggestions"
    )
    link = models.CharField(max_length=500, help_text="What the reader pasted.")
    tag = models.ForeignKey(Tag, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    note = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["user", "suggested_paper"], name="suggestion_once"),
        ]
        indexes = [
            models.Index(fields=["user", "created_at"], name="suggestion_user_created"),
            models.Index(fields=["suggested_paper", "created_at"], name="suggestion_paper_created"),
        ]

    def __str__(self) -> str:
        return f"{self.user}: {self.suggested_paper}"
