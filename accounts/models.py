import datetime
import hashlib
import secrets
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from accounts.display_names import MAX_LENGTH as DISPLAY_NAME_MAX_LENGTH
from accounts.display_names import name_key, validate_display_name
from catalog.models import Author, Category, Paper, Tag


def new_feed_token() -> str:
    return secrets.token_urlsafe(24)


# A For-you computation queued this long ago and not done is taken as lost (a
# worker restarted meanwhile): the next visit, save or follow asks again.
RECOMMENDATIONS_LOST_AFTER = datetime.timedelta(minutes=15)
NAME_TAKEN = _("Another reader has this name; choose another.")


class Profile(models.Model):
    """A reader's settings and the bookkeeping of what they have been sent and shown."""

    class DigestFrequency(models.TextChoices):
        OFF = "off", _("never")
        DAILY = "daily", _("daily")
        WEEKLY = "weekly", _("weekly")

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="profile"
    )
    digest_frequency = models.CharField(
        max_length=8, choices=DigestFrequency.choices, default=DigestFrequency.DAILY
    )
    # The start of the next digest's window and the token that claims it: a
    # sender moves it forward only if it still holds the value it read.
    last_digest_at = models.DateTimeField(default=timezone.now)
    # The feed marks what arrived after new_since; it moves to the previous
    # visit only when a new visit begins, so paging through a visit keeps the marks.
    feed_seen_at = models.DateTimeField(null=True, blank=True)
    feed_new_since = models.DateTimeField(null=True, blank=True)
    feed_token = models.CharField(max_length=64, unique=True, default=new_feed_token)
    # The site language the reader chose; pages and digests use it once they log in.
    language = models.CharField(max_length=16, blank=True, choices=settings.LANGUAGES)
    # When the reader's For-you list was last computed (nightly, or on first need),
    # and the newest paper it could offer then, which its window counted back from.
    recommended_at = models.DateTimeField(null=True, blank=True)
    recommended_until = models.DateTimeField(null=True, blank=True)
    # When a computation was queued outside the nightly run (a first visit, a
    # first save or followed tag): under way until recommended_at passes it.
    recommendations_asked_at = models.DateTimeField(null=True, blank=True)
    # The name the reader is credited and found by, if they choose one
    # (accounts/display_names.py), and the one form names are compared in.
    display_name = models.CharField(
        max_length=DISPLAY_NAME_MAX_LENGTH, blank=True, validators=[validate_display_name]
    )
    display_name_key = models.CharField(
        max_length=DISPLAY_NAME_MAX_LENGTH * 3, blank=True, editable=False
    )
    # Opt-ins: a public page at /readers/<name>/ and credit on the papers they
    # found; their upvoted papers listed there.
    public_profile = models.BooleanField(default=False)
    show_upvotes = models.BooleanField(default=False)

    class Meta:
        constraints = [
            # One reader a name, whatever its case; readers without one are many.
            models.UniqueConstraint(
                fields=["display_name_key"],
                condition=~Q(display_name_key=""),
                name="profile_display_name_once",
            ),
        ]

    def __str__(self) -> str:
        return str(self.user)

    def save(self, *args: Any, **kwargs: Any) -> None:
        self.display_name_key = name_key(self.display_name) if self.display_name else ""
        update_fields = kwargs.get("update_fields")
        if update_fields is not None and "display_name" in update_fields:
            kwargs["update_fields"] = {*update_fields, "display_name_key"}
        super().save(*args, **kwargs)

    def name_taken(self, name: str) -> bool:
        """Whether another reader has this display name, in any case."""
        others = Profile.objects.exclude(pk=self.pk)
        return others.filter(display_name_key=name_key(name)).exists()

    def clean(self) -> None:
        # The admin's form does not check the constraint on the key it cannot edit.
        if self.display_name and self.name_taken(self.display_name):
            raise ValidationError({"display_name": NAME_TAKEN}, code="taken")

    @property
    def is_public(self) -> bool:
        """Credited on papers and shown at /readers/<name>/."""
        return self.public_profile and bool(self.display_name)

    @property
    def recommendations_pending(self) -> bool:
        asked = self.recommendations_asked_at
        return (
            asked is not None
            and asked > timezone.now() - RECOMMENDATIONS_LOST_AFTER
            and (self.recommended_at is None or self.recommended_at < asked)
        )


class Subscription(models.Model):
    """A reader follows one tag, one category or one author."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="subscriptions"
    )
    tag = models.ForeignKey(
        Tag, null=True, blank=True, on_delete=models.CASCADE, related_name="subscriptions"
    )
    category = models.ForeignKey(
        Category, null=True, blank=True, on_delete=models.CASCADE, related_name="subscriptions"
    )
    author = models.ForeignKey(
        Author, null=True, blank=True, on_delete=models.CASCADE, related_name="subscriptions"
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(tag__isnull=False, category__isnull=True, author__isnull=True)
                | Q(tag__isnull=True, category__isnull=False, author__isnull=True)
                | Q(tag__isnull=True, category__isnull=True, author__isnull=False),
                name="subscription_one_target",
            ),
            models.UniqueConstraint(fields=["user", "tag"], name="subscription_tag_once"),
            models.UniqueConstraint(fields=["user", "category"], name="subscription_category_once"),
            models.UniqueConstraint(fields=["user", "author"], name="subscription_author_once"),
        ]

    def __str__(self) -> str:
        return f"{self.user}: {self.tag or self.category or self.author}"

    @property
    def target(self) -> Tag | Category | Author:
        target = self.tag or self.category or self.author
        if target is None:  # the check constraint allows no such row
            raise ValueError(f"Subscription {self.pk} is to no tag, category or author.")
        return target


class SavedPaper(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="saved_papers"
    )
    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="saved_by")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["user", "paper"], name="saved_paper_once"),
        ]

    def __str__(self) -> str:
        return f"{self.user}: {self.paper_id}"


class Upvote(models.Model):
    """A reader upvoted a paper: one row per reader and paper, deleted when
    they take it back. Only some count towards the paper's counts (accounts.votes)."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="upvotes"
    )
    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="upvotes")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["user", "paper"], name="upvote_once"),
        ]
        indexes = [
            # A paper's votes are counted per window (accounts.votes).
            models.Index(fields=["paper", "created_at"], name="upvote_paper_created"),
        ]

    def __str__(self) -> str:
        return f"{self.user}: {self.paper_id}"


def reader_name(user: User) -> str:
    """How the site names a reader to them: the address they signed up with."""
    return user.email or user.get_username()


class RecommendationSent(models.Model):
    """A paper mailed to a reader as a recommendation: no digest sends it again."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="recommendations_sent"
    )
    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="+")
    sent_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "paper"], name="recommendation_sent_once"),
        ]

    def __str__(self) -> str:
        return f"{self.user_id}: sent {self.paper_id}"


# Secrets start with this, so a leaked one is recognisable (and scanners can match it).
API_TOKEN_PREFIX = "psk_"  # noqa: S105 - a marker, not a secret


def hash_api_token(secret: str) -> str:
    """What is stored of a secret: its SHA-256. The secret is 32 random bytes, so
    a fast hash is enough; a slow one would cost every API request."""
    return hashlib.sha256(secret.encode()).hexdigest()


class ApiToken(models.Model):
    """A reader's key to the API's personal endpoints (their feed, saved papers and
    subscriptions). Only a hash of the secret is kept: it is shown once, when made."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    digest = models.CharField(max_length=64, unique=True, editable=False)
    # The secret's first characters, so that the reader can tell their tokens apart.
    hint = models.CharField(max_length=16, editable=False)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.user}: {self.name}"
