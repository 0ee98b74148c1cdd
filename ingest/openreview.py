"""Reading papers from OpenReview's API, version 2 (https://api2.openreview.net).

GET /notes?id=<note id> answers {"notes": [...], "count": n}: a submission's
note has its forum id, its dates in milliseconds since 1970 (pdate when it was
published, odate when made public, cdate when created) and its content, each
field as {"value": ...}: title, authors, abstract, venue ("ICLR 2024 poster")
and pdf ("/pdf/<hash>.pdf"). A note a reader may not see is a 403, an unknown
one a 404 or no notes. Requests go through ingest.http in OpenReview's own turn
(OPENREVIEW_DELAY_SECONDS).
"""

import datetime
import json
from collections.abc import Iterable, Iterator
from functools import partial
from typing import Any

from django.conf import settings

from ingest.http import OPENREVIEW, SourceHttp
from ingest.records import (
    Batch,
    Entry,
    MalformedEntry,
    Skipped,
    SourceUnreadable,
    VenueRecord,
    build_venue_record,
)

FORUM_URL = "https://openreview.net/forum?id={}"
# The dates of a note, the first present read.
_DATES = ("pdate", "odate", "cdate", "tcdate")


def read_notes(note_ids: Iterable[str], *, http: SourceHttp | None = None) -> Iterator[Batch]:
    """A batch for each note: its record, or why it was skipped; nothing for a
    note OpenReview does not have. SourceUnreadable when it cannot be read."""
    http = http or SourceHttp.from_settings(service=OPENREVIEW)
    url = f"{settings.OPENREVIEW_API_URL.rstrip('/')}/notes"
    for note_id in note_ids:
        key = f"openreview:{note_id}"
        response = http.retrying(
            partial(http.get, url, params={"id": note_id}),
            what=f"asking OpenReview for the note {note_id}",
        )
        if response.status == 404:
            yield Batch(entries=[])
            continue
        if response.status == 403:
            yield Batch(entries=[Skipped(key, "OpenReview does not show this paper publicly")])
            continue
        if response.status != 200:
            raise SourceUnreadable(f"OpenReview answered HTTP {response.status} for {note_id}")
        entries: list[Entry]
        try:
            notes = json.loads(response.content).get("notes")
            if not isinstance(notes, list):
                raise MalformedEntry("no notes in it")
            found = [note for note in notes if isinstance(note, dict) and note.get("id") == note_id]
            entries = [note_record(found[0], key=key)] if found else []
        except (ValueError, AttributeError, MalformedEntry) as err:
            entries = [Skipped(key, f"OpenReview's answer could not be read: {err}")]
        yield Batch(entries=entries)


def note_record(note: dict[str, Any], *, key: str) -> VenueRecord:
    """The record of a submission's note as API version 2 gives it."""
    content = note.get("content")
    if not isinstance(content, dict):
        raise MalformedEntry("the note has no content")
    authors = _value(content, "authors")
    published = next(
        (moment for name in _DATES if (moment := _moment(note.get(name))) is not None), None
    )
    forum = str(note.get("forum") or note.get("id") or key.removeprefix("openreview:"))
    return build_venue_record(
        source_key=key,
        title=str(_value(content, "title") or ""),
        abstract=str(_value(content, "abstract") or ""),
        authors=[str(name) for name in authors] if isinstance(authors, list) else [],
        source_url=FORUM_URL.format(forum),
        venue=str(_value(content, "venue") or ""),
        published_at=published,
    )


def _value(content: dict[str, Any], name: str) -> Any:
    """A content field's value: {"value": ...} in version 2 (a bare value in
    notes that version 1 made)."""
    field = content.get(name)
    return field.get("value") if isinstance(field, dict) else field


def _moment(milliseconds: Any) -> datetime.datetime | None:
    if not isinstance(milliseconds, int) or isinstance(milliseconds, bool) or milliseconds <= 0:
        return None
    return datetime.datetime.fromtimestamp(milliseconds / 1000, tz=datetime.UTC)
