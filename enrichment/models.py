from django.db import models
from django.utils import timezone


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
