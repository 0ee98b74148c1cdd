"""Reading arXiv's metadata snapshot: one JSON object per line, about 5 GB.

The file is read in batches of lines, so memory stays flat however large it
is. A batch's lines are parsed where it is stored (ingest.pipeline can do that
in worker processes, side by side); a line that cannot be read is Skipped with
its line number, never fatal.
"""

import datetime
import email.utils
import gzip
import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any

import orjson

from ingest.records import (
    ArxivRecord,
    Entry,
    MalformedEntry,
    NameParts,
    Skipped,
    build_record,
)


@dataclass(frozen=True)
class LineBatch:
    """Consecutive lines of the file, as read; parsed only when entries are asked for."""

    first_line_number: int
    lines: list[bytes]
    size: int  # bytes of the file (compressed, for a .gz file) they took up
    resume_from: str = ""

    @property
    def entries(self) -> list[Entry]:
        entries: list[Entry] = []
        for line_number, line in enumerate(self.lines, start=self.first_line_number):
            if not line.strip():
                continue
            try:
                entries.append(record_from_line(line))
            except MalformedEntry as err:
                entries.append(Skipped(f"line {line_number}", str(err)))
        return entries


def read_lines(path: Path, *, batch_size: int) -> Iterator[LineBatch]:
    """The file's lines in batches; a .gz file is decompressed as it is read."""
    with open(path, "rb") as raw:
        is_gzip = raw.read(2) == b"\x1f\x8b"
        raw.seek(0)
        lines = gzip.GzipFile(fileobj=raw) if is_gzip else raw
        first_line_number, position = 1, 0
        while batch := list(islice(lines, batch_size)):
            now = raw.tell()
            yield LineBatch(first_line_number, batch, now - position)
            first_line_number += len(batch)
            position = now


def record_from_line(line: bytes | str) -> ArxivRecord:
    try:
        entry = orjson.loads(line)
    except orjson.JSONDecodeError as err:
        raise MalformedEntry(f"not JSON: {err}") from err
    if not isinstance(entry, dict):
        raise MalformedEntry("not a JSON object")
    versions = sorted(_versions(entry.get("versions")))
    return build_record(
        arxiv_id=_text(entry, "id"),
        version=versions[-1][0] if versions else None,
        title=_text(entry, "title"),
        abstract=_text(entry, "abstract"),
        authors=_authors(entry),
        categories=_text(entry, "categories").split(),
        comment=_text(entry, "comments"),
        journal_ref=_text(entry, "journal-ref"),
        doi=_text(entry, "doi"),
        published_at=versions[0][1] if versions else None,
        updated_at=versions[-1][1] if versions else None,
    )


def _text(entry: dict[str, Any], key: str) -> str:
    value = entry.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise MalformedEntry(f"{key} is not text")
    return value


def _versions(raw: Any) -> Iterator[tuple[int, datetime.datetime]]:
    for item in raw or ():
        try:
            number = int(str(item["version"]).lstrip("v"))
            created = email.utils.parsedate_to_datetime(item["created"])
        except (KeyError, TypeError, ValueError) as err:
            raise MalformedEntry(f"unreadable version {item!r}") from err
        yield number, created.astimezone(datetime.UTC)


def _authors(entry: dict[str, Any]) -> list[str] | list[NameParts]:
    parsed = entry.get("authors_parsed")
    if isinstance(parsed, list) and parsed:
        return [_parsed_name(parts) for parts in parsed]
    return re.split(r",|\band\b", _text(entry, "authors"))


def _parsed_name(parts: object) -> NameParts:
    """The snapshot's [last, first, suffix], kept in its parts."""
    if not isinstance(parts, list) or not all(isinstance(part, str) for part in parts):
        raise MalformedEntry(f"unreadable author {parts!r}")
    last, first, suffix = (*parts, "", "", "")[:3]
    return NameParts(family=last, given=first, suffix=suffix)
