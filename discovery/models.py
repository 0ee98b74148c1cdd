"""What discovery keeps: each paper's text vector, and each reader's For-you list
with the papers they turned down. The neighbours it computes are the catalog's
(catalog.SimilarPaper), since the paper page shows them."""

from django.conf import settings
from django.db import models
from django.utils import timezone

from catalog.models import Paper, Tag


class PaperVector(models.Model):
    """A paper's text vector: float32 bytes, unit length, and the words it weighs most."""

    paper = models.OneToOneField(
        "catalog.Paper", primary_key=True, on_delete=models.CASCADE, related_name="vector"
    )
    # Which backend and fit wrote it ("tfidf:<fit>", "openai:<model>"): a vector
    # of another key is stale and is written again by `build_vectors --missing`.
    key = models.CharField(max_length=120)
    dimensions = models.PositiveSmallIntegerField()
    vector = models.BinaryField()
    terms = models.JSONField(default=list, blank=True)
    computed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["key"], name="papervector_key")]

    def __str__(self) -> str:
        return f"vector of {self.paper_id} ({self.key})"


class Recommendation(models.Model):
    """A recent paper recommended to a reader, with what it was recommended for:
    the saved paper it is most like, or the followed tag. Rebuilt nightly."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="recommendations"
    )
    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="recommendations")
    score = models.FloatField()
    because_paper = models.ForeignKey(
        Paper, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    because_tag = models.ForeignKey(
        Tag, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    computed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "paper"], name="recommendation_once"),
        ]
        indexes = [
            # The For-you tab and the digest: a reader's best first.
            models.Index(fields=["user", "-score"], name="recommendation_user_score"),
        ]

    def __str__(self) -> str:
        return f"{self.user_id}: {self.paper_id} ({self.score:.3f})"


class DismissedPaper(models.Model):
    """A paper a reader marked "not interested": never recommended to them again,
    and papers like it rank lower."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="dismissed_papers"
    )
    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "paper"], name="dismissed_paper_once"),
        ]

    def __str__(self) -> str:
        return f"{self.user_id}: not {self.paper_id}"
