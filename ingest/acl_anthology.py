"""Reading papers from the ACL Anthology (https://aclanthology.org) by Anthology id.

The Anthology publishes each paper's metadata as BibTeX at /<id>.bib (its
export of the XML it is built from): title, authors as "Family, Given" joined
by "and", the booktitle or journal, year and month, its page's url, its DOI
(10.18653/v1/<id> where it has one) and often the abstract. An unknown id is a
404. Requests go through ingest.http in the Anthology's own turn
(ACL_ANTHOLOGY_DELAY_SECONDS).
"""

import datetime
from collections.abc import Iterable, Iterator
from functools import partial

from bibtexparser import model as bibtex
from bibtexparser.entrypoint import parse_string
from django.conf import settings

from ingest.http import ACL_ANTHOLOGY, SourceHttp
from ingest.records import (
    Batch,
    Entry,
    MalformedEntry,
    NameParts,
    Skipped,
    SourceUnreadable,
    VenueRecord,
    build_venue_record,
    plain_name,
)

PAGE_URL = "https://aclanthology.org/{}/"
MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ],
        start=1,
    )
    for name in names
}


def read_anthology_ids(
    anthology_ids: Iterable[str], *, http: SourceHttp | None = None
) -> Iterator[Batch]:
    """A batch for each id: its record, or why it was skipped; nothing for an id
    the Anthology does not have. SourceUnreadable when it cannot be read."""
    http = http or SourceHttp.from_settings(service=ACL_ANTHOLOGY)
    base = settings.ACL_ANTHOLOGY_URL.rstrip("/")
    for anthology_id in anthology_ids:
        key = f"acl:{anthology_id}"
        url = f"{base}/{anthology_id}.bib"
        response = http.retrying(
            partial(http.get, url), what=f"asking the ACL Anthology for {anthology_id}"
        )
        if response.status == 404:
            yield Batch(entries=[])
            continue
        if response.status != 200:
            raise SourceUnreadable(
                f"the ACL Anthology answered HTTP {response.status} for {anthology_id}"
            )
        entries: list[Entry]
        try:
            entries = [bibtex_record(response.content.decode("utf-8"), key=key)]
        except (ValueError, MalformedEntry) as err:
            entries = [Skipped(key, f"the ACL Anthology's BibTeX could not be read: {err}")]
        yield Batch(entries=entries)


def bibtex_record(text: str, *, key: str) -> VenueRecord:
    """The record of the one entry of an Anthology paper's BibTeX."""
    library = parse_string(text)
    entries = [block for block in library.entries if isinstance(block, bibtex.Entry)]
    if len(entries) != 1:
        raise MalformedEntry(f"{len(entries)} entries where one was expected")
    fields = {field.key.lower(): " ".join(str(field.value).split()) for field in entries[0].fields}
    year = fields.get("year", "")
    month = MONTHS.get(fields.get("month", "").lower().strip("{}"), 0)
    published = None
    if year.isdigit():
        published = datetime.datetime(int(year), month or 1, 1, tzinfo=datetime.UTC)
    anthology_id = key.removeprefix("acl:")
    return build_venue_record(
        source_key=key,
        title=_unbraced(fields.get("title", "")),
        abstract=_unbraced(fields.get("abstract", "")),
        authors=[_name(name) for name in _names(fields.get("author", ""))],
        source_url=fields.get("url") or PAGE_URL.format(anthology_id),
        venue=_unbraced(fields.get("booktitle") or fields.get("journal") or ""),
        doi=fields.get("doi", ""),
        published_at=published,
        published_precision="month" if month else "year",
    )


def _names(authors: str) -> list[str]:
    return [name.strip() for name in authors.replace("\n", " ").split(" and ") if name.strip()]


def _name(name: str) -> NameParts | str:
    """ "Family, Given" in parts; a name written whole stays whole."""
    family, comma, given = name.partition(",")
    if not comma:
        return name
    return NameParts(family=family.strip(), given=given.strip())


def _unbraced(text: str) -> str:
    """A field as text: BibTeX's case-keeping braces out ("{BERT}" is "BERT"),
    LaTeX's accents and escapes read ("{\\\"o}" is "ö", "\\%" is "%")."""
    return plain_name(text)
