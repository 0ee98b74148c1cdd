"""For you: recent papers ranked for each reader by their likeness to what the
reader saved and to the tags they follow, computed nightly in a worker.

"Recent" counts back from the newest paper For you can offer (or from now, if
that is newer): a catalog whose newest papers are old, like the demo or a
mirror whose ingest stopped, still offers its latest year rather than nothing.

What a reader saved and follows is the accounts app's to know: it hands
each reader's Interests in (accounts.services.refresh_recommendations).

A candidate's score is the larger of its best cosine to a saved paper and its
best tag score (its cosine to the followed tag's centroid, plus TAG_BONUS when
it carries the tag); what gave that score is the explanation shown. Likeness
to a dismissed paper is subtracted. The top of each period is kept, so every
period filter of the tab finds papers.
"""

import datetime
import itertools
import logging
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.utils import timezone

from catalog.models import NEWEST_FIRST, Paper, PaperTag
from core.progress import Progress
from discovery import neighbours, vectors
from discovery.models import DismissedPaper, PaperVector, Recommendation

logger = logging.getLogger(__name__)

TAG_BONUS = 0.3
# A dismissed paper's likeness, times this, is taken off a candidate's score.
DISMISS_WEIGHT = 0.8
# The saved papers a reader is matched against: the most recent ones.
SEEDS = 100
# The dismissed papers that push others down: the most recent ones.
DISMISSED_SEEDS = 500
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
    tags: dict[int, np.ndarray]  # tag id -> positions of its papers, ascending
    position: dict[int, int]
    centroids: dict[int, np.ndarray | None] = field(default_factory=dict)

    def centroid(self, tag_id: int) -> np.ndarray | None:
        """The unit mean of the tag's papers in the window (None without any), computed once."""
        if tag_id not in self.centroids:
            members = self.tags.get(tag_id)
            unit = None
            if members is not None and len(members):
                mean = self.matrix[members].mean(axis=0)
                norm = float(np.linalg.norm(mean))
                unit = mean / norm if norm else None
            self.centroids[tag_id] = unit
        return self.centroids[tag_id]


def window_end(*, key: str, now: datetime.datetime) -> datetime.datetime:
    """The moment the window counts back from: when the newest visible paper
    with a vector was listed (none later than now), or now if there is none.
    The newest-first index is walked until a paper has a vector: at once, but
    for papers not embedded yet."""
    embedded = PaperVector.objects.filter(paper=OuterRef("pk"), key=key)
    newest = (
        Paper.objects.visible()
        .filter(Exists(embedded), listed_at__lte=now)
        .order_by(*NEWEST_FIRST)
        .values_list("listed_at", flat=True)
        .first()
    )
    return newest or now


def load_window(*, end: datetime.datetime, key: str) -> Window:
    """The vectors of the papers listed within FOR_YOU_DAYS before end."""
    since = end - datetime.timedelta(days=settings.FOR_YOU_DAYS)
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
        tags={tag: np.sort(np.asarray(found)) for tag, found in by_tag.items()},
        position=position,
    )


@dataclass(frozen=True)
class Interests:
    """What one reader's list is ranked from, as the accounts app knows it."""

    user_id: int
    saved_ids: list[int]  # newest first
    tag_ids: list[int]


@dataclass
class Seeds:
    """What one reader's list is ranked from."""

    saved_ids: np.ndarray
    saved: np.ndarray  # one vector a row, as saved_ids
    dismissed_ids: np.ndarray
    dismissed: np.ndarray
    tag_ids: list[int]
    # Every paper the reader saved or dismissed, seeds or not: never recommended.
    excluded_ids: set[int] = field(default_factory=set)


@dataclass
class Ranked:
    paper_id: int
    score: float
    because_paper_id: int | None
    because_tag_id: int | None


# Readers are ranked together, so that their saved papers, dismissed papers
# and followed tags meet the window in one matrix product (tens of times
# faster than one thin product per reader), a block of the window's rows at a
# time so the product stays within about BLOCK_FLOATS floats.
READERS_AT_ONCE = 16
BLOCK_FLOATS = 16_000_000


def rank_for_readers(
    *, window: Window, readers: list[Seeds], now: datetime.datetime
) -> list[list[Ranked]]:
    """Each reader's candidates, best first, with what each is recommended for."""
    count = len(window.ids)
    if not count:
        return [[] for _ in readers]
    # The columns of the product: every reader's saved and dismissed vectors, then
    # the centroids of the tags they follow (each tag once).
    dimensions = window.matrix.shape[1]
    columns: list[np.ndarray] = []
    spans = []
    width = 0
    for seeds in readers:
        saved = (width, width + len(seeds.saved_ids))
        dismissed = (saved[1], saved[1] + len(seeds.dismissed_ids))
        columns += [seeds.saved.reshape(-1, dimensions), seeds.dismissed.reshape(-1, dimensions)]
        spans.append((saved, dismissed))
        width = dismissed[1]
    tag_column: dict[int, int] = {}
    for tag_id in sorted({tag_id for seeds in readers for tag_id in seeds.tag_ids}):
        unit = window.centroid(tag_id)
        if unit is not None:
            tag_column[tag_id] = width + len(tag_column)
            columns.append(unit.reshape(1, -1))
    products = np.vstack(columns).astype(np.float32).T

    best = np.full((len(readers), count), -np.inf, dtype=np.float32)
    because_paper = np.full((len(readers), count), -1, dtype=np.int64)
    because_tag = np.full((len(readers), count), -1, dtype=np.int64)
    unlike = np.zeros((len(readers), count), dtype=np.float32)
    rows = max(1, BLOCK_FLOATS // max(1, products.shape[1]))
    for start in range(0, count if products.shape[1] else 0, rows):
        stop = min(start + rows, count)
        block = slice(start, stop)
        likeness = window.matrix[block] @ products
        tag_scores = {}
        for tag_id, column in tag_column.items():
            members = window.tags[tag_id]
            inside = members[np.searchsorted(members, start) : np.searchsorted(members, stop)]
            tag_scores[tag_id] = likeness[:, column].copy()
            tag_scores[tag_id][inside - start] += TAG_BONUS
        for r, (seeds, ((s0, s1), (d0, d1))) in enumerate(zip(readers, spans, strict=True)):
            if s1 > s0:
                part = likeness[:, s0:s1]
                column = part.argmax(axis=1)
                best[r, block] = part[np.arange(stop - start), column]
                because_paper[r, block] = seeds.saved_ids[column]
            for tag_id in seeds.tag_ids:
                if tag_id in tag_scores:
                    better = tag_scores[tag_id] > best[r, block]
                    best[r, block][better] = tag_scores[tag_id][better]
                    because_tag[r, block][better] = tag_id
                    because_paper[r, block][better] = -1
            if d1 > d0:
                unlike[r, block] = np.clip(likeness[:, d0:d1].max(axis=1), 0, None)
    return [
        _ranked(
            window=window,
            seeds=seeds,
            score=best[r] - DISMISS_WEIGHT * unlike[r],
            because_paper=because_paper[r],
            because_tag=because_tag[r],
            now=now,
        )
        for r, seeds in enumerate(readers)
    ]


def _ranked(
    *,
    window: Window,
    seeds: Seeds,
    score: np.ndarray,
    because_paper: np.ndarray,
    because_tag: np.ndarray,
    now: datetime.datetime,
) -> list[Ranked]:
    """The top of each kept period, best first."""
    for pk in seeds.excluded_ids | {*seeds.saved_ids.tolist(), *seeds.dismissed_ids.tolist()}:
        if pk in window.position:
            score[window.position[pk]] = -np.inf
    keep: set[int] = set()
    usable = np.isfinite(score)
    for days, length in KEPT:
        recent = usable & (window.listed_at >= (now - datetime.timedelta(days=days)).timestamp())
        keep.update(_top(score, recent, length))
    keep.update(_top(score, usable, KEPT_IN_WINDOW))
    # Best first, and a near copy of a paper above it left out (neighbours.NEAR_COPY).
    kept = neighbours.without_near_copies(
        sorted(((i, float(score[i])) for i in keep), key=lambda pair: -pair[1]),
        k=len(keep),
        unit={i: window.matrix[i] for i in keep},
    )
    return [
        Ranked(
            paper_id=int(window.ids[i]),
            score=value,
            because_paper_id=int(because_paper[i]) if because_paper[i] >= 0 else None,
            because_tag_id=int(because_tag[i]) if because_tag[i] >= 0 else None,
        )
        for i, value in kept
    ]


def _top(score: np.ndarray, mask: np.ndarray, length: int) -> list[int]:
    positions = np.flatnonzero(mask)
    if len(positions) > length:
        positions = positions[np.argpartition(-score[positions], length)[:length]]
    return positions.tolist()


def seeds_of(*, interests: Interests, key: str) -> Seeds:
    dismissed_ids = list(
        DismissedPaper.objects.filter(user_id=interests.user_id)
        .order_by("-created_at", "-id")
        .values_list("paper_id", flat=True)
    )
    saved = vectors.vectors_of(paper_ids=interests.saved_ids[:SEEDS], key=key)
    dismissed = vectors.vectors_of(paper_ids=dismissed_ids[:DISMISSED_SEEDS], key=key)
    return Seeds(
        excluded_ids={*interests.saved_ids, *dismissed_ids},
        saved_ids=saved[0],
        saved=saved[1],
        dismissed_ids=dismissed[0],
        dismissed=dismissed[1],
        tag_ids=list(interests.tag_ids),
    )


def refresh_readers(
    *,
    readers: list[Interests],
    window: Window,
    key: str,
    now: datetime.datetime,
    end: datetime.datetime,
) -> int:
    """Replace these readers' recommendations, the kept periods counted back
    from the window's end; how many were stored."""
    user_ids = [reader.user_id for reader in readers]
    ranked = rank_for_readers(
        window=window, readers=[seeds_of(interests=each, key=key) for each in readers], now=end
    )
    rows = [
        Recommendation(
            user_id=user_id,
            paper_id=item.paper_id,
            score=round(item.score, 5),
            because_paper_id=item.because_paper_id,
            because_tag_id=item.because_tag_id,
            computed_at=now,
        )
        for user_id, items in zip(user_ids, ranked, strict=True)
        for item in items
    ]
    with transaction.atomic():
        Recommendation.objects.filter(user_id__in=user_ids).delete()
        Recommendation.objects.bulk_create(rows, batch_size=1000)
    return len(rows)


@dataclass
class RecommendationRun:
    readers: int = 0
    rows: int = 0
    seconds: float = 0.0
    # The window's end: the newest paper the lists could offer.
    until: datetime.datetime | None = None


def refresh(
    *,
    readers: Iterable[Interests],
    total: int,
    now: datetime.datetime | None = None,
    show_progress: bool = False,
) -> RecommendationRun:
    """These readers' recommendations (total of them, for the progress bar),
    from one load of the recent vectors; nothing changes before the first
    `build_vectors`."""
    now = now or timezone.now()
    started = timezone.now()
    run = RecommendationRun()
    try:
        key = vectors.current_key()
    except vectors.NotFitted:
        logger.warning("No vectors yet: recommendations wait for `build_vectors`")
        return run
    run.until = window_end(key=key, now=now)
    window = load_window(end=run.until, key=key)
    with Progress("readers", total=total, unit="readers", enabled=show_progress) as bar:
        remaining = iter(readers)
        while batch := list(itertools.islice(remaining, READERS_AT_ONCE)):
            run.rows += refresh_readers(
                readers=batch, window=window, key=key, now=now, end=run.until
            )
            run.readers += len(batch)
            bar.advance(len(batch))
    run.seconds = (timezone.now() - started).total_seconds()
    return run


def pull_up_like(
    *,
    user_id: int,
    paper_id: int,
    saved: "QuerySet[Any, Any]",
    until: datetime.datetime | None = None,
) -> int:
    """At once, before the nightly run: the papers most like one the reader
    just saved (its similar papers listed within FOR_YOU_DAYS before until)
    come into their list, or up, recommended for it, with its likeness as
    their score, as the nightly ranking gives them; none of those the reader
    saved (saved: their ids, as a subquery) or turned down. Four queries;
    the rows added or raised."""
    from catalog.models import SimilarPaper

    since = (until or timezone.now()) - datetime.timedelta(days=settings.FOR_YOU_DAYS)
    near = dict(
        SimilarPaper.objects.filter(
            paper_id=paper_id,
            similar__is_visible=True,
            similar__merged_into__isnull=True,
            similar__listed_at__gte=since,
        )
        .exclude(similar__in=DismissedPaper.objects.filter(user_id=user_id).values("paper_id"))
        .exclude(similar__in=saved)
        .values_list("similar_id", "score")
    )
    held = {
        row.paper_id: row
        for row in Recommendation.objects.filter(user_id=user_id, paper_id__in=list(near))
    }
    raised = []
    for row in held.values():
        if near[row.paper_id] > row.score:
            row.score = near[row.paper_id]
            row.because_paper_id, row.because_tag_id = paper_id, None
            raised.append(row)
    Recommendation.objects.bulk_update(raised, ["score", "because_paper", "because_tag"])
    added = Recommendation.objects.bulk_create(
        Recommendation(user_id=user_id, paper_id=other, score=score, because_paper_id=paper_id)
        for other, score in near.items()
        if other not in held
    )
    return len(raised) + len(added)


def push_down_like(*, user: User, paper: Paper) -> None:
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
