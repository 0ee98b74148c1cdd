"""Cursor pagination over a paper list, cheap at any depth.

A newest-first list continues after the last paper shown: its (listed_at, id)
is the cursor, and the next page is read from the list's index from there, so
the millionth paper costs what the first does. A list in any other order is
paged by position: a relevance-ranked search ranks at most
SEARCH_RELEVANCE_CANDIDATES matches (catalog.filters), so its cursor is simply
how many were shown.

Cursors are opaque to clients: URL-safe base64 of a small JSON object.
"""

import base64
import binascii
import datetime
import json
from typing import Any

from django.db.models import Q, QuerySet

from catalog.models import Paper
from catalog.pagination import rows_by_ids

MAX_OFFSET = 1_000_000


class CursorError(ValueError):
    """A cursor this API did not make, or made for another ordering."""


def encode(value: dict[str, object]) -> str:
    raw = json.dumps(value, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode(cursor: str) -> dict[str, Any]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        value = json.loads(raw)
    except (binascii.Error, ValueError, UnicodeDecodeError) as err:
        raise CursorError("This cursor is not one the API gave out.") from err
    if not isinstance(value, dict):
        raise CursorError("This cursor is not one the API gave out.")
    return value


def page(
    papers: QuerySet[Paper], *, cursor: str | None, limit: int, ranked: bool
) -> tuple[list[Paper], str | None]:
    """Up to `limit` papers after the cursor, and the cursor of the page after (or None)."""
    if ranked:
        offset = 0
        if cursor:
            found = decode(cursor).get("offset")
            if not isinstance(found, int) or not 0 <= found <= MAX_OFFSET:
                raise CursorError("This cursor belongs to a list sorted by date, not relevance.")
            offset = found
        rows = rows_by_ids(papers, offset, offset + limit + 1)
        more = len(rows) > limit
        return rows[:limit], encode({"offset": offset + limit}) if more else None
    if cursor:
        value = decode(cursor)
        try:
            listed_at = datetime.datetime.fromisoformat(value["listed_at"])
            last_id = value["id"]
        except (KeyError, TypeError, ValueError) as err:
            raise CursorError("This cursor belongs to a list sorted by relevance.") from err
        if not isinstance(last_id, int) or listed_at.tzinfo is None or abs(last_id) >= 2**63:
            raise CursorError("This cursor is not one the API gave out.")
        # After the last paper shown, in the list's own order (newest first, then
        # id). The bare `listed_at <=` is what the index range starts from; the OR
        # alone would be a filter on rows read from the top.
        papers = papers.filter(
            Q(listed_at__lte=listed_at),
            Q(listed_at__lt=listed_at) | Q(listed_at=listed_at, pk__lt=last_id),
        )
    rows = rows_by_ids(papers, 0, limit + 1)
    if len(rows) <= limit:
        return rows, None
    last = rows[limit - 1]
    return rows[:limit], encode({"listed_at": last.listed_at.isoformat(), "id": last.pk})
