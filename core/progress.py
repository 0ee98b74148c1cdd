"""Progress of long commands: a bar on a terminal, a plain line now and then in logs."""

import logging
import sys
import time
from collections.abc import Iterator, Sequence
from typing import TextIO, TypeVar

from django.db.models import Model, QuerySet
from tqdm import tqdm

logger = logging.getLogger("papershelf.progress")
T = TypeVar("T")

# How often a log line reports progress when there is no terminal to draw on.
LOG_EVERY_SECONDS = 30


class Progress:
    """Counts of work done (items or bytes) against an optional total.

    On a terminal it draws tqdm's bar with the count and rate; otherwise (cron,
    a container's log, a pipe) it logs "what: done/total (n%), rate/s" every
    LOG_EVERY_SECONDS and once at the end.
    """

    def __init__(
        self,
        what: str,
        *,
        total: int | None = None,
        unit: str = "it",
        stream: TextIO | None = None,
        enabled: bool = True,
    ) -> None:
        self.what, self.total, self.unit = what, total, unit
        self.done = 0
        self.started = self.last_logged = time.monotonic()
        stream = stream or sys.stderr
        self.bar = None
        self.enabled = enabled
        if enabled and stream.isatty():
            self.bar = tqdm(
                total=total,
                desc=what,
                unit=unit,
                unit_scale=unit == "B",
                file=stream,
                mininterval=0.5,
            )

    def advance(self, amount: int = 1) -> None:
        self.done += amount
        if self.bar is not None:
            self.bar.update(amount)
        elif self.enabled and time.monotonic() - self.last_logged >= LOG_EVERY_SECONDS:
            self.log()

    def log(self) -> None:
        self.last_logged = time.monotonic()
        elapsed = max(self.last_logged - self.started, 1e-9)
        share = f" ({100 * self.done / self.total:.1f}%)" if self.total else ""
        total = f"/{self.total:,}" if self.total else ""
        logger.info(
            "%s: %s%s %s%s, %.1f %s/s",
            self.what,
            f"{self.done:,}",
            total,
            self.unit,
            share,
            self.done / elapsed,
            self.unit,
        )

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        elif self.enabled:
            self.log()

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def each_with_progress(
    items: QuerySet[Model, T] | Sequence[T], *, what: str, unit: str, enabled: bool = True
) -> Iterator[T]:
    """items one by one (a queryset streamed), with the progress shown as they go."""
    total = items.count() if isinstance(items, QuerySet) else len(items)
    with Progress(what, total=total, unit=unit, enabled=enabled) as progress:
        for item in items.iterator() if isinstance(items, QuerySet) else items:
            yield item
            progress.advance()
