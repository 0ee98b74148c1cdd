"""Readers' comments on papers, their reports, and the curators' hold on them."""

import datetime

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from catalog.models import Paper


class Comment(models.Model):
    """A reader's comment on a paper, or a reply to one: replies attach to a
    top-level comment, so a thread is two levels deep at most.

    A deleted comment keeps its row (its replies still hang from it) but loses
    its text; a comment a curator hid keeps its text for the curators.
    """

    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="comments")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="comments"
    )
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.CASCADE, related_name="replies"
    )
    body = models.TextField(blank=True)
    body_html = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    edited_at = models.DateTimeField(null=True, blank=True)
    deleted = models.BooleanField(default=False)
    hidden_by_curator = models.BooleanField(default=False)

    # Whether the reader looking may still edit it (discussion.selectors.threads).
    can_edit = False

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [
            models.Index(fields=["paper", "created_at", "id"], name="comment_paper_created"),
            models.Index(fields=["author", "-created_at"], name="comment_author_created"),
        ]

    def __str__(self) -> str:
        return f"Comment {self.pk} on {self.paper_id} by {self.author_id}"

    @property
    def is_shown(self) -> bool:
        """Whether its text is shown to readers."""
        return not self.deleted and not self.hidden_by_curator

    def editable_by(self, user: object, *, now: datetime.datetime | None = None) -> bool:
        """Its author may edit it for COMMENT_EDIT_MINUTES after posting."""
        if getattr(user, "pk", None) != self.author_id:
            return False
        window = datetime.timedelta(minutes=settings.COMMENT_EDIT_MINUTES)
        return self.is_shown and (now or timezone.now()) - self.created_at <= window

    def deletable_by(self, user: object) -> bool:
        return not self.deleted and getattr(user, "pk", None) == self.author_id


class CommentReportQuerySet(models.QuerySet["CommentReport"]):
    def open(self) -> "CommentReportQuerySet":
        """The reports no curator has dismissed yet."""
        return self.filter(dismissed_at=None)


class CommentReport(models.Model):
    """A reader's report of another's comment, for the curators: one per reader and comment."""

    comment = models.ForeignKey(Comment, on_delete=models.CASCADE, related_name="reports")
    reporter = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="comment_reports"
    )
    reason = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    # Set when a curator read the report and left the comment up: it no longer
    # waits on the desk, and is kept for the record.
    dismissed_at = models.DateTimeField(null=True, blank=True)
    dismissed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="dismissed_comment_reports",
    )

    objects = CommentReportQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["comment", "reporter"], name="one_report_per_reader")
        ]
        indexes = [
            # The desk's count of comments with reports still open.
            models.Index(fields=["comment"], condition=Q(dismissed_at=None), name="report_open")
        ]

    def __str__(self) -> str:
        return f"Report of comment {self.comment_id}"


class DiscussionLock(models.Model):
    """A paper's discussion locked by a curator: read-only while the row exists."""

    paper = models.OneToOneField(Paper, on_delete=models.CASCADE, related_name="discussion_lock")
    locked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"Discussion of {self.paper_id} locked"


class CommenterBan(models.Model):
    """A reader a curator stopped from commenting, while the row exists."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="commenter_ban"
    )
    banned_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    reason = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"Reader {self.user_id} stopped from commenting"


class DiscussionFollow(models.Model):
    """A reader following a paper's discussion: mailed its new comments, in batches."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="discussion_follows"
    )
    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="discussion_follows")
    # Comments after this were not yet mailed to the reader.
    notified_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "paper"], name="one_follow_per_paper")
        ]
        indexes = [models.Index(fields=["paper"], name="discussion_follow_paper")]

    def __str__(self) -> str:
        return f"Reader {self.user_id} follows {self.paper_id}"
