"""A day's edition: the papers of one day in the order curators give, with an
editor's note and a note per paper, shown once published."""

import datetime

from django.conf import settings
from django.db import models
from django.urls import reverse

from catalog.models import Paper


class Edition(models.Model):
    class State(models.TextChoices):
        DRAFT = "draft", "draft"
        PUBLISHED = "published", "published"

    date = models.DateField(unique=True)
    note = models.TextField(
        "editor's note", blank=True, help_text="Markdown, shown above the day's papers."
    )
    state = models.CharField(max_length=16, choices=State.choices, default=State.DRAFT)
    published_at = models.DateTimeField(null=True, blank=True, editable=False)
    published_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        editable=False,
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-date"]
        indexes = [
            # The latest published edition (/daily/).
            models.Index(
                fields=["-date"],
                name="edition_published_date",
                condition=models.Q(state="published"),
            ),
        ]

    def __str__(self) -> str:
        return self.date.isoformat()

    def get_absolute_url(self) -> str:
        return reverse("editions:day", args=[self.date])

    @property
    def is_published(self) -> bool:
        return self.state == self.State.PUBLISHED


class EditionEntry(models.Model):
    """One paper of an edition: pinned entries first, then by position."""

    edition = models.ForeignKey(Edition, on_delete=models.CASCADE, related_name="entries")
    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="edition_entries")
    position = models.PositiveIntegerField(default=0)
    pinned = models.BooleanField(default=False)
    note = models.TextField(blank=True, help_text="Markdown, shown with the paper's card.")

    class Meta:
        ordering = ["-pinned", "position", "id"]
        verbose_name_plural = "edition entries"
        constraints = [
            models.UniqueConstraint(fields=["edition", "paper"], name="edition_entry_once"),
        ]

    def __str__(self) -> str:
        return f"{self.edition} #{self.position}"


def day_bounds(day: datetime.date) -> tuple[datetime.datetime, datetime.datetime]:
    """The UTC moments a day's papers fall between (the later one excluded)."""
    start = datetime.datetime.combine(day, datetime.time.min, tzinfo=datetime.UTC)
    return start, start + datetime.timedelta(days=1)
