"""Cursor pagination over a paper list, cheap at any depth, both ways.

A newest-first list continues after the last paper shown: its (listed_at, id)
is the cursor, and the next page is read from the list's index from there, so
the millionth paper costs what the first does; the page before is read the
same way backwards from the first paper shown. A list in any other order is
paged by position: a relevance-ranked search ranks at most
SEARCH_RELEVANCE_CANDIDATES matches (catalog.filters), so its cursor is simply
how many were shown. Such a cursor also carries the moment its first page was
read (`pinned`): later pages rank only papers added by then, so papers that
arrive while a client pages neither push others onto a page already read
(repeats) nor past the page it reads next (misses).

Cursors are opaque to clients: URL-safe base64 of a small JSON object.
"""

import base64
import binascii
import datetime
import json
from dataclasses import dataclass
from typing import Any

from django.db.models import Q, QuerySet
from django.utils import timezone

from catalog.models import Paper
from catalog.pagination import rows_by_ids

MAX_OFFSET = 1_000_000
NOT_OURS = "This cursor is not one the API gave out."


class CursorError(ValueError):
    """A cursor this API did not make, or made for another ordering."""


@dataclass(frozen=True)
class Page:
    rows: list[Paper]
    next_cursor: str | None
    previous_cursor: str | None


def encode(value: dict[str, object]) -> str:
    raw = json.dumps(value, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode(cursor: str) -> dict[str, Any]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        value = json.loads(raw)
    except (binascii.Error, ValueError, UnicodeDecodeError) as err:
        raise CursorError(NOT_OURS) from err
    if not isinstance(value, dict):
        raise CursorError(NOT_OURS)
    return value


def _moment(value: object) -> datetime.datetime:
    if not isinstance(value, str):
        raise CursorError(NOT_OURS)
    try:
        moment = datetime.datetime.fromisoformat(value)
    except ValueError as err:
        raise CursorError(NOT_OURS) from err
    if moment.tzinfo is None:
        raise CursorError(NOT_OURS)
    return moment


def ranked_position(cursor: str | None) -> tuple[int, datetime.datetime]:
    """Where a position-paged list's cursor points, and the moment its first page
    was read (now, for the first page)."""
    if not cursor:
        return 0, timezone.now()
    value = decode(cursor)
    offset = value.get("offset")
    if not isinstance(offset, int) or isinstance(offset, bool) or not 0 <= offset <= MAX_OFFSET:
        raise CursorError("This cursor belongs to a list sorted by date, not relevance.")
    return offset, _moment(value.get("pinned"))


def ranked_page(
    papers: QuerySet[Paper], *, offset: int, pinned: datetime.datetime, limit: int
) -> Page:
    """Up to `limit` papers from `offset` of a list paged by position; papers is
    the list as pinned (only papers added by `pinned`)."""
    rows = rows_by_ids(papers, offset, offset + limit + 1)
    moment = pinned.isoformat()
    more = len(rows) > limit
    return Page(
        rows=rows[:limit],
        next_cursor=encode({"offset": offset + limit, "pinned": moment}) if more else None,
        previous_cursor=(
            encode({"offset": max(0, offset - limit), "pinned": moment}) if offset else None
        ),
    )


def dated_page(papers: QuerySet[Paper], *, cursor: str | None, limit: int) -> Page:
    """Up to `limit` papers after (or, for a previous_cursor, before) the cursor
    of a newest-first list."""
    if not cursor:
        rows = rows_by_ids(papers, 0, limit + 1)
        return Page(rows=rows[:limit], next_cursor=_after(rows, limit), previous_cursor=None)
    value = decode(cursor)
    try:
        listed_at = _moment(value["listed_at"])
        last_id = value["id"]
    except KeyError as err:
        raise CursorError("This cursor belongs to a list sorted by relevance.") from err
    if not isinstance(last_id, int) or isinstance(last_id, bool) or abs(last_id) >= 2**63:
        raise CursorError(NOT_OURS)
    if value.get("before") is True:
        # Read backwards from the first paper shown, then put back in order.
        earlier = papers.filter(
            Q(listed_at__gte=listed_at),
            Q(listed_at__gt=listed_at) | Q(listed_at=listed_at, pk__gt=last_id),
        ).reverse()
        found = rows_by_ids(earlier, 0, limit + 1)
        rows = sorted(found[:limit], key=lambda paper: (paper.listed_at, paper.pk), reverse=True)
        # The page after it is the one the cursor was given on.
        return Page(
            rows=rows,
            next_cursor=_cursor(rows[-1]) if rows else None,
            previous_cursor=_cursor(rows[0], before=True) if len(found) > limit else None,
        )
    # After the last paper shown, in the list's own order (newest first, then
    # id). The bare `listed_at <=` is what the index range starts from; the OR
    # alone would be a filter on rows read from the top.
    later = papers.filter(
        Q(listed_at__lte=listed_at),
        Q(listed_at__lt=listed_at) | Q(listed_at=listed_at, pk__lt=last_id),
    )
    rows = rows_by_ids(later, 0, limit + 1)
    return Page(
        rows=rows[:limit],
        next_cursor=_after(rows, limit),
        previous_cursor=_cursor(rows[0], before=True) if rows else None,
    )


def _after(rows: list[Paper], limit: int) -> str | None:
    return _cursor(rows[limit - 1]) if len(rows) > limit else None


def _cursor(paper: Paper, *, before: bool = False) -> str:
    value: dict[str, object] = {"listed_at": paper.listed_at.isoformat(), "id": paper.pk}
    if before:
        value["before"] = True
    return encode(value)
