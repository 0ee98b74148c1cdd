from django.db import models


class JobClaim(models.Model):
    """Which delivery of a long job is running it (core.claims): the Celery id
    of the task that holds it, until it is done or its time limit has passed."""

    name = models.CharField(max_length=100, primary_key=True)
    holder = models.CharField(max_length=255, blank=True)
    expires_at = models.DateTimeField(null=True)

    def __str__(self) -> str:
        return f"{self.name}: {self.holder or 'free'}"
