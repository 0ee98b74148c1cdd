"""Reading arXiv over OAI-PMH (ListRecords in the arXiv metadata format).

Each page is a batch that says where to resume once it is stored (its
resumption token), so a harvest that stops part way resumes from there.
Requests go through ingest.http: paced, bounded in time and retried.
"""

import datetime
from collections.abc import Iterator
from functools import partial

from django.conf import settings
from lxml import etree

from ingest.http import Retryable, SourceHttp
from ingest.records import (
    ArxivRecord,
    Batch,
    Entry,
    MalformedEntry,
    NameParts,
    Skipped,
    SourceUnreadable,
    build_record,
)

OAI = "{http://www.openarchives.org/OAI/2.0/}"
ARXIV = "{http://arxiv.org/OAI/arXiv/}"
_parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True)


class ExpiredToken(SourceUnreadable):
    """The server no longer knows the resumption token."""


def read_records(
    *,
    from_date: datetime.date,
    until_date: datetime.date | None = None,
    set_spec: str = "",
    resume_from: str = "",
    http: SourceHttp | None = None,
) -> Iterator[Batch]:
    """The records changed in the period, a page a batch, from resume_from if given."""
    http = http or SourceHttp.from_settings()
    token = resume_from
    while True:
        if token:
            params = {"verb": "ListRecords", "resumptionToken": token}
        else:
            params = {"verb": "ListRecords", "metadataPrefix": "arXiv", "from": str(from_date)}
            if until_date:
                params["until"] = str(until_date)
            if set_spec:
                params["set"] = set_spec
        batch = http.retrying(partial(_list_records, http, params), what=str(params))
        yield batch
        token = batch.resume_from
        if not token:
            return


def _list_records(http: SourceHttp, params: dict[str, str]) -> Batch:
    response = http.get(settings.ARXIV_OAI_URL, params=params)
    if response.status != 200:
        raise SourceUnreadable(f"HTTP {response.status} from {response.url}")
    return parse_page(response.content)


def parse_page(content: bytes) -> Batch:
    try:
        root = etree.fromstring(content, parser=_parser)
    except etree.XMLSyntaxError as err:
        raise Retryable(f"malformed XML: {err}") from err
    error = root.find(f"{OAI}error")
    if error is not None:
        code = error.get("code", "")
        text = " ".join((error.text or "").split())
        if code == "noRecordsMatch":
            return Batch([])
        if code == "badResumptionToken":
            raise ExpiredToken(f"resumption token refused: {text}")
        raise SourceUnreadable(f"OAI-PMH error {code}: {text}")
    listing = root.find(f"{OAI}ListRecords")
    if listing is None:
        raise Retryable("response holds neither records nor an error")
    entries: list[Entry] = []
    for record in listing.iterfind(f"{OAI}record"):
        header = record.find(f"{OAI}header")
        if header is not None and header.get("status") == "deleted":
            continue
        metadata = record.find(f"{OAI}metadata/{ARXIV}arXiv")
        identifier = header.findtext(f"{OAI}identifier") if header is not None else None
        try:
            if metadata is None:
                raise MalformedEntry("no arXiv metadata")
            entries.append(record_from_oai(metadata))
        except MalformedEntry as err:
            entries.append(Skipped(identifier or "record without identifier", str(err)))
    token = (listing.findtext(f"{OAI}resumptionToken") or "").strip()
    return Batch(entries, resume_from=token)


def record_from_oai(metadata: etree._Element) -> ArxivRecord:
    def text(name: str) -> str:
        return metadata.findtext(f"{ARXIV}{name}") or ""

    created = _day(text("created"))
    updated = _day(text("updated"))
    authors = [
        NameParts(
            family=author.findtext(f"{ARXIV}keyname") or "",
            given=author.findtext(f"{ARXIV}forenames") or "",
            suffix=author.findtext(f"{ARXIV}suffix") or "",
        )
        for author in metadata.iterfind(f"{ARXIV}authors/{ARXIV}author")
    ]
    return build_record(
        arxiv_id=text("id"),
        # The format names no versions; only a paper never revised has no <updated>.
        version=None if updated else 1,
        title=text("title"),
        abstract=text("abstract"),
        authors=authors,
        categories=text("categories").split(),
        comment=text("comments"),
        journal_ref=text("journal-ref"),
        doi=text("doi"),
        published_at=created,
        updated_at=updated or created,
    )


def _day(value: str) -> datetime.datetime | None:
    if not value.strip():
        return None
    try:
        day = datetime.date.fromisoformat(value.strip())
    except ValueError as err:
        raise MalformedEntry(f"unreadable date {value!r}") from err
    return datetime.datetime.combine(day, datetime.time(0), tzinfo=datetime.UTC)
