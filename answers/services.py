"""Asking a paper: the answer kept for the question, or the passages that bear
on it and, when a model is configured and the day's budget allows, the
model's answer from them, checked before it is shown or kept."""

import datetime
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.http import HttpRequest
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _
from django_ratelimit.core import get_usage

from answers import model
from answers.models import Answer, AnswerDay
from answers.passages import Passage, best_passages, highlighted, terms
from answers.quotes import Checked, Refused, check
from catalog.models import FullText, Paper

logger = logging.getLogger(__name__)

QUESTION_CHARACTERS = 300
# Why a reader is shown passages rather than an answer.
Reason = Literal["", "no_words", "no_model", "budget", "refused", "failed"]


class AskRefused(Exception):
    """The question cannot be taken (too fast, no text): message and status say why."""

    def __init__(self, message: str, *, status: int) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


@dataclass
class Outcome:
    """What the reader is shown for a question."""

    question: str
    passages: list[Passage] = field(default_factory=list)
    # An accepted answer (from the model now, or kept); None shows the passages.
    checked: Checked | None = None
    reason: Reason = ""
    answer: Answer | None = None

    @property
    def shown_passages(self) -> list[tuple[Passage, SafeString]]:
        """The passages with the question's words marked, for a reader shown no answer."""
        return [(passage, highlighted(passage.text, self.question)) for passage in self.passages]


@dataclass
class Asking:
    """A question the model is to answer: its passages, and where the answer is kept."""

    paper: Paper
    version: int
    key: str
    question: str
    passages: list[Passage]
    # Set once the model has written its answer (answers.services.stream).
    outcome: Outcome | None = None


def question_key(question: str) -> str:
    """The question as answers are kept by: case and spacing, and the
    punctuation that ends it (full-width and ideographic marks too), make no
    other question."""
    spaced = " ".join(question.casefold().split())
    return spaced.rstrip("?.! \uff1f\u3002\uff01")[:QUESTION_CHARACTERS]


def text_version(paper: Paper) -> int | None:
    """The version of the paper's stored text (0 when arXiv gave none); None
    when the paper has no stored text to ask."""
    fulltext = getattr(paper, "fulltext", None)
    if fulltext is None or fulltext.status != FullText.Status.STORED:
        return None
    return fulltext.version or 0


def count_question(request: HttpRequest, *, reader_id: int) -> None:
    """Count a question against the reader's allowance (ASK_READER_RATE_LIMIT);
    AskRefused with status 429 once it is spent."""
    rate = settings.ASK_READER_RATE_LIMIT
    if not rate:
        return
    usage = get_usage(
        request,
        group="ask-reader",
        key=lambda group, request: f"user:{reader_id}",
        rate=rate,
        increment=True,
    )
    if usage and usage["should_limit"]:
        raise AskRefused(
            _("You have asked many questions; try again in %(minutes)d minutes.")
            % {"minutes": max(1, round(usage["time_left"] / 60))},
            status=429,
        )


def take_from_budget(*, today: datetime.date) -> bool:
    """Count one model answer against today's ASK_DAILY_BUDGET, in the database
    so that every process holds to it: False, counting nothing, once it is spent.
    One statement, the same on PostgreSQL and SQLite (3.35 and later)."""
    budget = settings.ASK_DAILY_BUDGET
    if budget < 1:
        return False
    table = AnswerDay._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (day, answers) VALUES (%s, 1)"  # noqa: S608 - our own table
            f" ON CONFLICT (day) DO UPDATE SET answers = {table}.answers + 1"
            f" WHERE {table}.answers < %s RETURNING answers",
            [today, budget],
        )
        return cursor.fetchone() is not None


def start(*, paper: Paper, version: int, question: str) -> Outcome | Asking:
    """The outcome when it is known without the model, else what to ask it."""
    key = question_key(question)
    kept = Answer.objects.filter(paper=paper, version=version, question_key=key).first()
    if kept is not None:
        Answer.objects.filter(pk=kept.pk).update(served=F("served") + 1)
        return kept_outcome(kept, paper=paper)
    if not terms(question):
        # Nothing to look up: stop words alone, or a question in another script.
        return Outcome(question=question, reason="no_words")
    passages = best_passages(paper=paper, question=question)
    if not passages:
        return Outcome(question=question, checked=Checked(not_in_text=True))
    if not model.configured():
        return Outcome(question=question, passages=passages, reason="no_model")
    if not take_from_budget(today=datetime.datetime.now(datetime.UTC).date()):
        return Outcome(question=question, passages=passages, reason="budget")
    return Asking(paper=paper, version=version, key=key, question=question, passages=passages)


def kept_outcome(kept: Answer, *, paper: Paper) -> Outcome:
    passages = [
        Passage(number=number, section=section, paragraph=paragraph, heading=heading, text="")
        for number, (section, paragraph, heading) in enumerate(kept.passages, start=1)
    ]
    if kept.status == Answer.Status.NOT_IN_TEXT:
        checked = Checked(not_in_text=True)
    else:
        # Checked when it was kept, against the text of this version.
        checked = check(kept.text, passages=passages, verify=False)
    return Outcome(question=kept.question, passages=passages, checked=checked, answer=kept)


def stream(asking: Asking) -> Iterator[str]:
    """The model's answer a piece at a time; its Outcome is then `asking.outcome`."""
    written: list[str] = []
    try:
        for piece in model.stream_answer(question=asking.question, passages=asking.passages):
            written.append(piece)
            yield piece
    except model.ModelFailed as failure:
        logger.warning("No answer for paper %s: %s", asking.paper.pk, failure)
        asking.outcome = Outcome(
            question=asking.question, passages=asking.passages, reason="failed"
        )
        return
    asking.outcome = finish(asking, text="".join(written))


def finish(asking: Asking, *, text: str) -> Outcome:
    """The model's whole answer checked: kept and shown, or refused for the passages."""
    try:
        checked = check(text, passages=asking.passages)
    except Refused as refusal:
        logger.warning("Answer for paper %s refused: %s", asking.paper.pk, refusal)
        return Outcome(question=asking.question, passages=asking.passages, reason="refused")
    kept = Answer(
        paper=asking.paper,
        version=asking.version,
        question_key=asking.key,
        question=asking.question,
        status=Answer.Status.NOT_IN_TEXT if checked.not_in_text else Answer.Status.ANSWERED,
        text="" if checked.not_in_text else text,
        passages=[passage.as_stored() for passage in asking.passages],
        model=model.model_name(),
    )
    try:
        with transaction.atomic():
            kept.save()
    except IntegrityError:
        # The same question answered meanwhile in another request: that one is kept.
        pass
    return Outcome(question=asking.question, passages=asking.passages, checked=checked, answer=kept)
