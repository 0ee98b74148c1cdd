"""Reading papers by DOI from Crossref's REST API (https://api.crossref.org).

GET /works/<DOI> answers {"status": "ok", "message-type": "work", "message":
{...}}: the title and subtitle as lists, authors with given and family names
(an organisation by its "name"), the abstract as JATS XML, the container (the
journal or proceedings) and the dates as "date-parts", which may give the
year alone. An unknown DOI is a 404. Requests go through ingest.http in
Crossref's own turn (CROSSREF_DELAY_SECONDS), with the User-Agent naming a
mailto that Crossref's etiquette asks for.
"""

import datetime
import json
import re
from collections.abc import Iterable, Iterator
from functools import partial
from html import unescape
from typing import Any
from urllib.parse import quote

from django.conf import settings

from ingest.http import CROSSREF, SourceHttp
from ingest.records import (
    Batch,
    Entry,
    MalformedEntry,
    NameParts,
    Skipped,
    SourceUnreadable,
    VenueRecord,
    build_venue_record,
)

_TAG = re.compile(r"<[^>]+>")
# The dates a work may carry, the first present read: the version of record's.
_DATES = ("published", "published-print", "published-online", "issued")
PRECISIONS = {1: "year", 2: "month", 3: "day"}


def read_dois(dois: Iterable[str], *, http: SourceHttp | None = None) -> Iterator[Batch]:
    """A batch for each DOI: its record, or why it was skipped; nothing for a DOI
    Crossref does not know. SourceUnreadable when Crossref cannot be read."""
    http = http or SourceHttp.from_settings(service=CROSSREF)
    for doi in dois:
        key = f"doi:{doi.lower()}"
        url = f"{settings.CROSSREF_API_URL.rstrip('/')}/works/{quote(doi, safe='/')}"
        response = http.retrying(partial(http.get, url), what=f"asking Crossref for {doi}")
        if response.status == 404:
            yield Batch(entries=[])
            continue
        if response.status != 200:
            raise SourceUnreadable(f"Crossref answered HTTP {response.status} for {doi}")
        entries: list[Entry]
        try:
            entries = [work_record(json.loads(response.content), key=key)]
        except (ValueError, MalformedEntry) as err:
            entries = [Skipped(key, f"Crossref's answer could not be read: {err}")]
        yield Batch(entries=entries)


def work_record(answer: Any, *, key: str) -> VenueRecord:
    """The record of a work as Crossref's /works/<DOI> gives it."""
    if not isinstance(answer, dict) or not isinstance(answer.get("message"), dict):
        raise MalformedEntry("no work in it")
    work = answer["message"]
    title = " ".join(_texts(work.get("title")))
    if subtitle := " ".join(_texts(work.get("subtitle"))):
        title = f"{title}: {subtitle}" if title else subtitle
    published, precision = _date(work)
    doi = str(work.get("DOI") or key.removeprefix("doi:"))
    return build_venue_record(
        source_key=key,
        title=title,
        abstract=_plain(str(work.get("abstract") or "")),
        authors=[author for each in _list(work.get("author")) if (author := _author(each))],
        source_url=f"https://doi.org/{doi}",
        venue=" ".join(_texts(work.get("container-title")))
        or str((work.get("event") or {}).get("name") or ""),
        doi=doi,
        published_at=published,
        published_precision=precision,
    )


def _author(entry: Any) -> NameParts | str:
    if not isinstance(entry, dict):
        return ""
    if entry.get("family"):
        return NameParts(family=str(entry["family"]), given=str(entry.get("given") or ""))
    return str(entry.get("name") or "")


def _date(work: dict[str, Any]) -> tuple[datetime.datetime | None, str]:
    for name in _DATES:
        parts = ((work.get(name) or {}).get("date-parts") or [[]])[0]
        numbers = [int(part) for part in parts or [] if isinstance(part, int | str) and part]
        if numbers:
            year, month, day = [*numbers, 1, 1][:3]
            moment = datetime.datetime(year, month, day, tzinfo=datetime.UTC)
            return moment, PRECISIONS[min(len(numbers), 3)]
    return None, "day"


def _plain(jats: str) -> str:
    """JATS XML as text: tags out, entities read; a leading "Abstract" heading too."""
    text = " ".join(unescape(_TAG.sub(" ", jats)).split())
    return text.removeprefix("Abstract ").strip()


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _texts(value: Any) -> list[str]:
    return [str(each) for each in _list(value) if each]
