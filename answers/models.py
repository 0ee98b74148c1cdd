"""Answers a language model gave to readers' questions about a paper, each
kept for the paper, the version of its text and the question, and the count
of the day's answers that the site-wide budget is held to."""

from django.db import models
from django.utils import timezone

from catalog.models import Paper


class Answer(models.Model):
    """An answer checked against the paper's stored text: every quote in `text`
    was found in its passage (answers.quotes), or the model said the passages
    do not tell. A refused answer is never stored."""

    class Status(models.TextChoices):
        ANSWERED = "answered", "answered"
        NOT_IN_TEXT = "not_in_text", "not in the text"

    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="answers")
    # The version of the stored text the passages came from (0: arXiv gave none).
    version = models.PositiveSmallIntegerField()
    # The question as answers.services.question_key has it: the key it is found by.
    question_key = models.CharField(max_length=300)
    # The question as it was first asked, to show.
    question = models.CharField(max_length=300)
    status = models.CharField(max_length=16, choices=Status.choices)
    # What the model wrote, quotes and all, as answers.quotes reads it.
    text = models.TextField(blank=True)
    # The passages it was given, in order: [section position, paragraph, heading].
    passages = models.JSONField(default=list)
    model = models.CharField(max_length=200)
    created_at = models.DateTimeField(default=timezone.now)
    # How many times it was served from storage, for the costs it saved.
    served = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["paper", "version", "question_key"], name="answer_once"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.paper_id} v{self.version}: {self.question}"


class AnswerDay(models.Model):
    """How many answers the model was asked for on one day (UTC), across
    every process: the site-wide budget (ASK_DAILY_BUDGET) is held to it."""

    day = models.DateField(unique=True)
    answers = models.PositiveIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.day}: {self.answers}"
