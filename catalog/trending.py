"""Trending: papers ranked by what readers recently did with them.

Readers' saves, suggestions and clicks from their personal feed are recorded
as ReaderSignal rows (one per paper, reader and kind). Every five minutes a
task scores each paper over the last 24 hours, 7 days and 30 days and writes
the scores onto the papers (Paper.trending_24h, _7d, _30d), where lists sort
by them through an index; pages read no signal. Within a window each reader
counts once for a paper, with their strongest signal, and a signal's weight
halves every half-life of that window, so fresh interest outranks old.

A paper's score at a moment `now` is the sum over its readers of
weight * 2 ** -((now - signalled) / half_life). Every score shares the factor
2 ** -((now - EPOCH) / half_life), so the order of papers is that of the sum
of weight * 2 ** ((signalled - EPOCH) / half_life), which does not change as
time passes. Its base-2 logarithm (which keeps the order and never overflows)
is what is stored: a refresh rewrites only the papers that gained a signal or
lost one out of a window, a handful, rather than every scored paper.
"""

import datetime
import math
from collections.abc import Iterable
from dataclasses import dataclass

from django.db import transaction
from django.db.models import F, OrderBy
from django.utils import timezone

from catalog.cache import bump_trending_version
from catalog.models import NEWEST_FIRST, Paper, ReaderSignal


@dataclass(frozen=True)
class Window:
    span: datetime.timedelta
    half_life: datetime.timedelta
    column: str


WINDOWS = {
    "24h": Window(datetime.timedelta(hours=24), datetime.timedelta(hours=6), "trending_24h"),
    "7d": Window(datetime.timedelta(days=7), datetime.timedelta(days=2), "trending_7d"),
    "30d": Window(datetime.timedelta(days=30), datetime.timedelta(days=7), "trending_30d"),
}
DEFAULT_WINDOW = "7d"
# Stored scores are relative to this moment (see above).
EPOCH = datetime.datetime(2020, 1, 1, tzinfo=datetime.UTC)
# Keeping a paper outweighs upvoting it or suggesting it to the curators, which
# outweigh opening it from the feed.
# By kind; the rows' kinds come as plain strings, which look up a choice's key.
WEIGHTS: dict[str, float] = {
    ReaderSignal.Kind.SAVE: 3.0,
    ReaderSignal.Kind.UPVOTE: 2.0,
    ReaderSignal.Kind.SUGGEST: 2.0,
    ReaderSignal.Kind.CLICK: 1.0,
}
# bulk_update writes one CASE branch a row: small batches keep it linear.
UPDATE_BATCH = 200
# Stored scores closer than this are the same score computed twice.
TOLERANCE = 1e-9


def ordering(window: str) -> list[OrderBy]:
    """The trending sort over a window: scored papers first, highest first, then newest first."""
    column = WINDOWS[window].column
    return [F(column).desc(nulls_last=True), *NEWEST_FIRST]


def record_signal(
    *, paper_id: int, reader_id: int, kind: str, at: datetime.datetime | None = None
) -> None:
    """Note that a reader showed interest in a paper; a repeat of the same kind changes nothing."""
    record_signals(pairs=[(paper_id, reader_id)], kind=kind, at=at)


def record_signals(
    *, pairs: Iterable[tuple[int, int]], kind: str, at: datetime.datetime | None = None
) -> None:
    """record_signal for many (paper id, reader id) pairs in one query."""
    at = at or timezone.now()
    rows = [
        ReaderSignal(paper_id=paper_id, reader_id=reader_id, kind=kind, created_at=at)
        for paper_id, reader_id in set(pairs)
    ]
    if rows:
        # The first signal of a kind stands: toggling a save cannot freshen it.
        ReaderSignal.objects.bulk_create(rows, ignore_conflicts=True)


def compute_scores(*, now: datetime.datetime) -> dict[str, dict[int, float]]:
    """Each window's stored score (see above) of every paper signalled within it."""
    longest = max(window.span for window in WINDOWS.values())
    signals = ReaderSignal.objects.filter(
        created_at__gt=now - longest, created_at__lte=now
    ).values_list("paper_id", "reader_id", "kind", "created_at")
    # window -> paper -> reader -> log2 of that reader's strongest signal
    strongest: dict[str, dict[int, dict[int, float]]] = {name: {} for name in WINDOWS}
    for paper_id, reader_id, kind, created_at in signals.iterator(chunk_size=5000):
        for name, window in WINDOWS.items():
            if now - created_at >= window.span:
                continue
            exponent = math.log2(WEIGHTS[kind]) + (created_at - EPOCH) / window.half_life
            readers = strongest[name].setdefault(paper_id, {})
            readers[reader_id] = max(readers.get(reader_id, -math.inf), exponent)
    return {
        name: {paper_id: log2_sum(readers.values()) for paper_id, readers in papers.items()}
        for name, papers in strongest.items()
    }


def log2_sum(exponents: Iterable[float]) -> float:
    """log2(sum(2 ** e)), without overflow."""
    exponents = list(exponents)
    top = max(exponents)
    return top + math.log2(sum(2 ** (e - top) for e in exponents))


def score_at(stored: float, *, window: str, now: datetime.datetime) -> float:
    """A stored score as the decayed sum of weights it stands for at `now`."""
    return 2 ** (stored - (now - EPOCH) / WINDOWS[window].half_life)


def refresh_trending(*, now: datetime.datetime | None = None) -> int:
    """Score every paper afresh, store the scores that changed; returns how many
    papers have a score.

    Writes by queryset update, which sends no signal: instead of making the
    whole catalog cache stale, the trending version is bumped once this
    commits, which only pages sorted by trending are keyed on.
    """
    now = now or timezone.now()
    scores = compute_scores(now=now)
    # Every paper scored in a shorter window is scored in the 30-day one.
    scored = set(scores["30d"])
    columns = [window.column for window in WINDOWS.values()]
    with transaction.atomic():
        stored = {
            pk: values
            for pk, *values in Paper.objects.filter(trending_30d__isnull=False).values_list(
                "pk", *columns
            )
        }
        stale_ids = sorted(set(stored) - scored)
        for start in range(0, len(stale_ids), UPDATE_BATCH):
            Paper.objects.filter(pk__in=stale_ids[start : start + UPDATE_BATCH]).update(
                **dict.fromkeys(columns)
            )
        changed = []
        for paper_id in sorted(scored):
            values = [scores[name].get(paper_id) for name in WINDOWS]
            if not _same(values, stored.get(paper_id)):
                changed.append(Paper(pk=paper_id, **dict(zip(columns, values, strict=True))))
        Paper.objects.bulk_update(changed, columns, batch_size=UPDATE_BATCH)
        if stale_ids or changed:
            transaction.on_commit(bump_trending_version)
    return len(scored)


def _same(new: list[float | None], old: list[float | None] | None) -> bool:
    if old is None:
        return False
    return all(
        (a is None and b is None) or (a is not None and b is not None and abs(a - b) <= TOLERANCE)
        for a, b in zip(new, old, strict=True)
    )
