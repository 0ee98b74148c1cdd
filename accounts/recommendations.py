"""For you: recent papers ranked for each reader by their likeness to what the
reader saved and to the tags they follow, computed nightly in a worker.

A candidate's score is the larger of its best cosine to a saved paper and its
best tag score (its cosine to the followed tag's centroid, plus TAG_BONUS when
it carries the tag); what gave that score is the explanation shown. Likeness
to a dismissed paper is subtracted. The top of each period is kept, so every
period filter of the tab finds papers.
"""

import datetime
import logging
from collections import defaultdict
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from accounts.models import DismissedPaper, Profile, Recommendation, SavedPaper, Subscription
from catalog.models import Paper, PaperTag
from catalog.progress import Progress
from enrichment import vectors
from enrichment.models import PaperVector

logger = logging.getLogger(__name__)

TAG_BONUS = 0.3
# A dismissed paper's likeness, times this, is taken off a candidate's score.
DISMISS_WEIGHT = 0.8
# The saved papers a reader is matched against: the most recent ones.
SEEDS = 100
# Kept per reader for each of these periods (days), so that the 1-day and
# 7-day filters do not come up empty under a month of better papers.
KEPT = ((1, 50), (7, 100), (30, 200))
KEPT_IN_WINDOW = 200


@dataclass
class Window:
    """The recent papers' vectors, loaded once for every reader."""

    ids: np.ndarray
    matrix: np.ndarray
    listed_at: np.ndarray  # seconds since the epoch
    tags: dict[int, np.ndarray]  # tag id -> positions of its papers
    position: dict[int, int]


def load_window(*, now: datetime.datetime, key: str) -> Window:
    since = now - datetime.timedelta(days=settings.FOR_YOU_DAYS)
    recent = Paper.objects.visible().filter(listed_at__gte=since)
    rows = (
        PaperVector.objects.filter(key=key, paper__in=recent)
        .order_by("paper_id")
        .values_list("paper_id", "vector", "paper__listed_at")
        .iterator(chunk_size=10_000)
    )
    ids, matrix, listed = [], [], []
    for pk, raw, listed_at in rows:
        ids.append(pk)
        matrix.append(vectors.from_bytes(raw))
        listed.append(listed_at.timestamp())
    position = {pk: i for i, pk in enumerate(ids)}
    by_tag: dict[int, list[int]] = defaultdict(list)
    for paper_id, tag_id in (
        PaperTag.objects.filter(paper__in=recent).values_list("paper_id", "tag_id").iterator()
    ):
        if paper_id in position:
            by_tag[tag_id].append(position[paper_id])
    return Window(
        ids=np.asarray(ids, dtype=np.int64),
        matrix=np.vstack(matrix) if matrix else np.zeros((0, 1), dtype=np.float32),
        listed_at=np.asarray(listed, dtype=np.float64),
        tags={tag: np.asarray(found) for tag, found in by_tag.items()},
        position=position,
    )


@dataclass
class Ranked:
    paper_id: int
    score: float
    because_paper_id: int | None
    because_tag_id: int | None


def rank_for_reader(
    *,
    window: Window,
    saved: tuple[np.ndarray, np.ndarray],
    dismissed: tuple[np.ndarray, np.ndarray],
    tag_ids: list[int],
    now: datetime.datetime,
) -> list[Ranked]:
    """The reader's candidates, best first, with what each is recommended for."""
    count = len(window.ids)
    if not count:
        return []
    best = np.full(count, -np.inf, dtype=np.float32)
    because_paper = np.full(count, -1, dtype=np.int64)
    because_tag = np.full(count, -1, dtype=np.int64)
    saved_ids, saved_matrix = saved
    if len(saved_ids):
        likeness = window.matrix @ saved_matrix.T
        column = likeness.argmax(axis=1)
        best = likeness[np.arange(count), column]
        because_paper = saved_ids[column]
    for tag_id in tag_ids:
        members = window.tags.get(tag_id)
        if members is None or not len(members):
            continue
        centroid = window.matrix[members].mean(axis=0)
        norm = float(np.linalg.norm(centroid))
        if norm == 0:
            continue
        tag_score = window.matrix @ (centroid / norm)
        tag_score[members] += TAG_BONUS
        better = tag_score > best
        best = np.where(better, tag_score, best)
        because_tag = np.where(better, tag_id, because_tag)
        because_paper = np.where(better, -1, because_paper)
    score = best.copy()
    dismissed_ids, dismissed_matrix = dismissed
    if len(dismissed_ids):
        score -= DISMISS_WEIGHT * np.clip((window.matrix @ dismissed_matrix.T).max(axis=1), 0, None)
    # Never what the reader saved or dismissed.
    for pk in [*saved_ids.tolist(), *dismissed_ids.tolist()]:
        if pk in window.position:
            score[window.position[pk]] = -np.inf
    keep: set[int] = set()
    usable = np.isfinite(score)
    for days, length in KEPT:
        recent = usable & (window.listed_at >= (now - datetime.timedelta(days=days)).timestamp())
        keep.update(_top(score, recent, length))
    keep.update(_top(score, usable, KEPT_IN_WINDOW))
    ranked = [
        Ranked(
            paper_id=int(window.ids[i]),
            score=float(score[i]),
            because_paper_id=int(because_paper[i]) if because_paper[i] >= 0 else None,
            because_tag_id=int(because_tag[i]) if because_tag[i] >= 0 else None,
        )
        for i in keep
    ]
    return sorted(ranked, key=lambda item: -item.score)


def _top(score: np.ndarray, mask: np.ndarray, length: int) -> list[int]:
    positions = np.flatnonzero(mask)
    if len(positions) > length:
        positions = positions[np.argpartition(-score[positions], length)[:length]]
    return positions.tolist()


def readers():
    """Readers with something to go on: a saved paper or a followed tag."""
    User = get_user_model()
    return (
        User.objects.filter(is_active=True)
        .filter(
            Exists(SavedPaper.objects.filter(user=OuterRef("pk")))
            | Exists(Subscription.objects.filter(user=OuterRef("pk"), tag__isnull=False))
        )
        .order_by("pk")
    )


def refresh_reader(
    *, user: AbstractBaseUser, window: Window, key: str, now: datetime.datetime
) -> int:
    """Replace one reader's recommendations; how many were stored."""
    saved_ids = list(
        SavedPaper.objects.filter(user=user)
        .order_by("-created_at")
        .values_list("paper_id", flat=True)[:SEEDS]
    )
    dismissed = DismissedPaper.objects.filter(user=user)
    dismissed_ids = list(dismissed.values_list("paper_id", flat=True))
    tag_ids = list(
        Subscription.objects.filter(user=user, tag__isnull=False).values_list("tag_id", flat=True)
    )
    ranked = rank_for_reader(
        window=window,
        saved=vectors.vectors_of(paper_ids=saved_ids, key=key),
        dismissed=vectors.vectors_of(paper_ids=dismissed_ids, key=key),
        tag_ids=tag_ids,
        now=now,
    )
    rows = [
        Recommendation(
            user=user,
            paper_id=item.paper_id,
            score=round(item.score, 5),
            because_paper_id=item.because_paper_id,
            because_tag_id=item.because_tag_id,
            computed_at=now,
        )
        for item in ranked
    ]
    with transaction.atomic():
        Recommendation.objects.filter(user=user).delete()
        Recommendation.objects.bulk_create(rows, batch_size=1000)
        Profile.objects.filter(user=user).update(recommended_at=now)
    return len(rows)


@dataclass
class RecommendationRun:
    readers: int = 0
    rows: int = 0
    seconds: float = 0.0


def refresh_all(
    *, now: datetime.datetime | None = None, user_ids: list[int] | None = None, show_progress=False
) -> RecommendationRun:
    """Every reader's recommendations (or these readers'), from one load of the recent vectors."""
    now = now or timezone.now()
    started = timezone.now()
    run = RecommendationRun()
    try:
        key = vectors.current_key()
    except vectors.NotFitted:
        # Nothing is embedded yet: the lists stay as they are until build_vectors.
        logger.warning("No vectors yet: recommendations wait for `build_vectors`")
        key = None
    if key is not None:
        chosen = readers() if user_ids is None else readers().filter(pk__in=user_ids)
        window = load_window(now=now, key=key)
        # Readers whose seeds vanished keep no stale list.
        if user_ids is None:
            Recommendation.objects.exclude(user__in=chosen.values("pk")).delete()
        total = chosen.count()
        with Progress("readers", total=total, unit="readers", enabled=show_progress) as bar:
            for user in chosen.iterator(chunk_size=500):
                run.rows += refresh_reader(user=user, window=window, key=key, now=now)
                run.readers += 1
                bar.advance()
    if user_ids is not None:
        # Asked for on a first visit: a reader with nothing to go on yet is
        # done too, and gets a list from the nightly run once they have.
        Profile.objects.filter(user_id__in=user_ids, recommended_at__isnull=True).update(
            recommended_at=now
        )
    run.seconds = (timezone.now() - started).total_seconds()
    return run


def push_down_like(*, user: AbstractBaseUser, paper: Paper) -> None:
    """At once, before the nightly run: papers near a dismissed one rank lower,
    by their likeness to it, as the nightly ranking will do."""
    from catalog.models import SimilarPaper

    likeness: dict[int, float] = {}
    near = SimilarPaper.objects.filter(Q(paper=paper) | Q(similar=paper))
    for first, second, score in near.values_list("paper_id", "similar_id", "score"):
        other = second if first == paper.pk else first
        likeness[other] = max(likeness.get(other, 0.0), max(0.0, score))
    rows = list(Recommendation.objects.filter(user=user, paper_id__in=likeness))
    for row in rows:
        row.score -= DISMISS_WEIGHT * likeness[row.paper_id]
    Recommendation.objects.bulk_update(rows, ["score"])
