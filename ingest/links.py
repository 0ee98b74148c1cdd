"""Adding papers by link: the arXiv ids, links and references a curator pastes or
uploads, fetched and stored.

A request reads the text's references into lines (ingest.references: ids and
links one a line, Markdown and HTML links, BibTeX, RIS and CSL-JSON), asks
arXiv for every id first (ingest.arxiv_api.read_ids: a hundred a request,
paced and retried like every read of arXiv), then the other sources for the
papers they name (ingest.crossref for DOIs, ingest.openreview,
ingest.acl_anthology, each paced in its own turn), and only then stores the
records, all in one transaction, through the pipeline
(ingest.pipeline.store_batch: tag rules, code links, enrichment, the catalog
cache), as an ingest run of its own (ingest.runs.Run). So a source failing
part way stores nothing: the request says which and why, in words, and its
text is kept for a retry. Each line then says what became of its paper.
"""

import codecs
import enum
import logging
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.dispatch import Signal

from catalog import arxiv_ids, curation
from catalog.models import CurationEvent, Paper, Tag
from ingest.acl_anthology import read_anthology_ids
from ingest.arxiv_api import IDS_PER_REQUEST, ArxivClient, read_ids
from ingest.crossref import read_dois
from ingest.http import ACL_ANTHOLOGY, CROSSREF, OPENREVIEW, Service, SourceHttp
from ingest.models import IngestRun, LinkRequest
from ingest.openreview import read_notes
from ingest.other_ids import source_name
from ingest.pipeline import BatchOutcome, store_batch
from ingest.records import ArxivRecord, Batch, Entry, SourceUnreadable, VenueRecord
from ingest.references import read_references
from ingest.runs import Run
from ingest.upsert import Outcome, StoredPaper

logger = logging.getLogger(__name__)

MAX_TEXT = 1_000_000  # characters one request may paste or upload
MAX_IDS = 1_000  # distinct papers one request may ask for
LINE_TEXT_LIMIT = 300  # characters of a pasted line kept in its result
MAX_FILE_BYTES = 1_000_000  # the size of a file of references one request may upload

# Sent when a request has finished, stored or not, with request: a LinkRequest.
link_request_finished = Signal()


class Result(enum.StrEnum):
    WAITING = "waiting"
    ADDED = "added"
    PRESENT = "present"
    UPDATED = "updated"
    NOT_FOUND = "not_found"
    NOT_FOUND_AT_SOURCE = "not_found_at_source"
    NOT_AN_ID = "not_an_id"
    # Requests stored before DOIs were read from Crossref said so of them.
    NOT_ON_ARXIV = "not_on_arxiv"
    REPEATED = "repeated"
    UNREADABLE = "unreadable"
    UNREADABLE_AT_SOURCE = "unreadable_at_source"
    NOT_STORED = "not_stored"

    @property
    def label(self) -> str:
        return RESULT_LABELS[self]


RESULT_LABELS = {
    Result.WAITING: "waiting",
    Result.ADDED: "added",
    Result.PRESENT: "already in the catalog",
    Result.UPDATED: "updated to a newer version",
    Result.NOT_FOUND: "not found on arXiv",
    Result.NOT_FOUND_AT_SOURCE: "not found at its source",
    Result.NOT_AN_ID: "not a paper id or link",
    Result.NOT_ON_ARXIV: "not on arXiv",
    Result.REPEATED: "listed above",
    Result.UNREADABLE: "arXiv's entry could not be read",
    Result.UNREADABLE_AT_SOURCE: "its source's entry could not be read",
    Result.NOT_STORED: "not stored",
}
# The results that leave the paper in the catalog.
IN_CATALOG = (Result.ADDED, Result.PRESENT, Result.UPDATED)


@dataclass
class Line:
    """One pasted item and what became of it."""

    text: str
    arxiv_id: str | None
    result: Result
    paper_id: int | None = None
    detail: str = ""
    # The paper's key in another source (ingest.other_ids) when arXiv has no id for it.
    source_key: str = ""

    @property
    def key(self) -> str:
        """What the pipeline files the line's paper under."""
        return self.arxiv_id or self.source_key

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Line":
        return cls(**{**data, "result": Result(data["result"])})


class InvalidRequest(ValueError):
    """The pasted text names nothing to add, or too much at once."""


def parse_lines(text: str) -> list[Line]:
    """A line for each item of the pasted text; InvalidRequest if there is nothing to
    add or more than one request may hold."""
    if len(text) > MAX_TEXT:
        raise InvalidRequest(
            f"The text is {len(text):,} characters long, more than {MAX_TEXT:,}: "
            "add the papers in parts."
        )
    lines, seen = [], set()
    for reference in read_references(text):
        shown = (
            reference.text
            if len(reference.text) <= LINE_TEXT_LIMIT
            else reference.text[:LINE_TEXT_LIMIT] + "…"
        )
        key = reference.arxiv_id or reference.source_key
        if key and key in seen:
            lines.append(Line(shown, reference.arxiv_id, Result.REPEATED))
        elif key:
            seen.add(key)
            lines.append(
                Line(
                    shown,
                    reference.arxiv_id,
                    Result.WAITING,
                    source_key="" if reference.arxiv_id else reference.source_key,
                )
            )
        else:
            lines.append(Line(shown, None, Result.NOT_AN_ID, detail=reference.problem))
    if not seen:
        raise InvalidRequest(
            "No paper was found. Paste arXiv ids such as 2505.15034 or hep-th/9901001, "
            "links to arXiv, Hugging Face papers, alphaXiv and the like, DOIs, OpenReview "
            "forums, ACL Anthology ids or links, Markdown or HTML links, or BibTeX, RIS or "
            "CSL-JSON references."
        )
    if len(seen) > MAX_IDS:
        raise InvalidRequest(
            f"That is {len(seen):,} different papers, more than {MAX_IDS:,} at once: "
            "add them in parts."
        )
    return lines


def read_upload(*, name: str, content: bytes) -> str:
    """An uploaded file of references as text; InvalidRequest, saying why, for a
    file too large or not text."""
    if len(content) > MAX_FILE_BYTES:
        raise InvalidRequest(
            f"{name} is {len(content):,} bytes, more than {MAX_FILE_BYTES:,}: "
            "export the references in parts."
        )
    if content.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        encoding = "utf-16"
    elif b"\0" in content:
        raise InvalidRequest(
            f"{name} is not a text file. Export the references as BibTeX, RIS or CSL-JSON "
            "(as Zotero's Export Library does), or as a list of links."
        )
    else:
        encoding = "utf-8-sig"
    try:
        return content.decode(encoding)
    except UnicodeDecodeError as err:
        raise InvalidRequest(
            f"{name} could not be read: byte {err.start + 1:,} is not UTF-8 text. "
            "Export the references again as UTF-8."
        ) from err


def request_papers(
    *, text: str, tags: Sequence[Tag] = (), note: str = "", by: curation.Actor
) -> LinkRequest:
    """Open a request for the papers the text names; run it with add_papers().

    Raises InvalidRequest (nothing stored) for text that names no paper or too many.
    """
    lines = parse_lines(text)
    wanted = _waiting_ids(lines) + _waiting_keys(lines)
    with transaction.atomic():
        # Begun by the worker that takes the request up (ingest.runs.Run.begin).
        run = IngestRun.objects.create(kind=IngestRun.Kind.LINKS, query=_describe(wanted))
        request = LinkRequest.objects.create(
            run=run,
            text=text,
            note=note.strip(),
            ids_total=len(wanted),
            lines=[asdict(line) for line in lines],
            **({"actor": by} if isinstance(by, str) else {"requested_by": by}),
        )
        request.tags.set(tags)
    return request


def _waiting_ids(lines: list[Line]) -> list[str]:
    # A line waits only for an id it names.
    return [
        line.arxiv_id
        for line in lines
        if line.result == Result.WAITING and line.arxiv_id is not None
    ]


def _waiting_keys(lines: list[Line]) -> list[str]:
    """The other sources' papers the lines wait for, by their keys."""
    return [line.source_key for line in lines if line.result == Result.WAITING and line.source_key]


def _describe(ids: list[str]) -> str:
    shown = " ".join(ids[:5])
    return f"{len(ids)} added by link: {shown}" + (" …" if len(ids) > 5 else "")


def add_papers(
    request: LinkRequest,
    *,
    client: ArxivClient | None = None,
    give_up_after: float | None = None,
) -> LinkRequest:
    """Fetch the request's papers from arXiv and the other sources, then store them
    all, and record each line's result. A request that has already run is left as
    it is. give_up_after bounds the other sources' retries as client's are bounded
    (ingest.http.SourceHttp)."""
    if request.run.status != IngestRun.Status.RUNNING:
        return request
    lines = [Line.from_json(data) for data in request.lines]
    with Run.begin(request.run) as run:
        try:
            entries = _fetch(request, lines, client=client, give_up_after=give_up_after)
            with transaction.atomic():
                outcome = _store(request, lines, entries)
        except Unreadable as err:
            _not_stored(request, lines, f"{err.source} could not be read: nothing was stored.")
            run.stop(f"{err.source} could not be read: {err.reason}.")
            _record_failure(
                request, f"{err.source} could not be read: {err.reason}; nothing was stored"
            )
        except BaseException:
            # The run closes as crashed.
            _not_stored(request, lines, "Something went wrong: nothing was stored.")
            _record_failure(request, "something went wrong; nothing was stored")
            raise
        else:
            run.add(outcome)
    link_request_finished.send(sender=LinkRequest, request=request)
    return request


class Unreadable(Exception):
    """A source could not be read: which, and why, in words."""

    def __init__(self, source: str, reason: str):
        super().__init__(f"{source} could not be read: {reason}")
        self.source, self.reason = source, reason


# The reader of each other source and how it is asked, by its keys' prefix; each
# reader is given the ids after the prefix.
OtherReader = Callable[..., Iterable[Batch]]
OTHER_READERS: dict[str, tuple[Service, OtherReader]] = {
    "doi": (CROSSREF, read_dois),
    "openreview": (OPENREVIEW, read_notes),
    "acl": (ACL_ANTHOLOGY, read_anthology_ids),
}


def _fetch(
    request: LinkRequest,
    lines: list[Line],
    *,
    client: ArxivClient | None,
    give_up_after: float | None,
) -> list[Entry]:
    """Every entry the lines wait for, arXiv's first; Unreadable for a source that
    could not be read."""
    wanted = _waiting_ids(lines)
    entries: list[Entry] = []
    asked = 0
    try:
        for batch in read_ids(wanted, client=client):
            entries += batch.entries
            asked = min(len(wanted), asked + IDS_PER_REQUEST)
            # Saved as it goes, for the request's page to show.
            LinkRequest.objects.filter(pk=request.pk).update(ids_fetched=asked)
    except SourceUnreadable as err:
        raise Unreadable("arXiv", str(err)) from err
    by_source: dict[str, list[str]] = {}
    for key in _waiting_keys(lines):
        prefix, _, value = key.partition(":")
        by_source.setdefault(prefix, []).append(value)
    for prefix, values in by_source.items():
        service, reader = OTHER_READERS[prefix]
        http = SourceHttp.from_settings(service=service, give_up_after=give_up_after)
        try:
            for batch in reader(values, http=http):
                entries += batch.entries
                asked += 1
                LinkRequest.objects.filter(pk=request.pk).update(ids_fetched=asked)
        except SourceUnreadable as err:
            raise Unreadable(source_name(f"{prefix}:"), str(err)) from err
    request.ids_fetched = asked
    return entries


def _store(request: LinkRequest, lines: list[Line], entries: list[Entry]) -> BatchOutcome:
    by = request.requested_by or request.actor or "unknown"
    tags = list(request.tags.all())
    records: dict[str, ArxivRecord | VenueRecord] = {
        e.arxiv_id: e for e in entries if isinstance(e, ArxivRecord)
    }
    records |= {e.source_key: e for e in entries if isinstance(e, VenueRecord)}
    # A curator naming a paper wants it public, whatever review said before.
    waiting = Paper.objects.exclude(review=Paper.Review.PUBLISHED)
    in_review = dict(
        waiting.filter(arxiv_id__in=[key for key in records if ":" not in key]).values_list(
            "arxiv_id", "review"
        )
    ) | dict(
        waiting.filter(source_key__in=[key for key in records if ":" in key]).values_list(
            "source_key", "review"
        )
    )
    curation.publish(
        Paper.objects.filter(Q(arxiv_id__in=list(in_review)) | Q(source_key__in=list(in_review))),
        by=by,
        detail="by link",
    )
    outcome = store_batch(entries, tags=tags)
    hidden = set(
        Paper.objects.filter(
            pk__in=[stored.paper_id for stored in outcome.stored.values()], is_visible=False
        ).values_list("pk", flat=True)
    )
    unreadable = {
        arxiv_ids.find_id(skipped.where) or skipped.where: skipped for skipped in outcome.skipped
    }
    tag_names = {tag.pk: tag.name for tag in tags}
    for line in lines:
        key = line.arxiv_id or line.source_key
        if line.result != Result.WAITING or not key:
            continue
        stored = outcome.stored.get(key)
        if stored is not None:
            line.result, details = _settle(line, stored, records[key])
            if stored.tags_added:
                names = ", ".join(tag_names[pk] for pk in stored.tags_added)
                details.append(f"tags added: {names}")
            elif tag_names and line.result != Result.ADDED:
                details.append("already had the tags")
            if key in in_review:
                details.append(_REVIEW_DETAIL[in_review[key]])
            if stored.paper_id in hidden:
                details.append("hidden: show it from the paper list to make it public")
            line.detail = "; ".join(details)
        elif key in unreadable and line.arxiv_id:
            line.result, line.detail = Result.UNREADABLE, unreadable[key].reason
        elif key in unreadable:
            line.result, line.detail = Result.UNREADABLE_AT_SOURCE, unreadable[key].reason
        elif line.arxiv_id:
            line.result = Result.NOT_FOUND
        else:
            line.result = Result.NOT_FOUND_AT_SOURCE
            line.detail = f"{source_name(key)} has no such paper"
    _record(request, lines, outcome.stored, by=by, tag_names=tag_names)
    request.lines = [asdict(line) for line in lines]
    request.save(update_fields=["lines", "ids_fetched"])
    return outcome


_REVIEW_DETAIL: dict[str, str] = {
    Paper.Review.PENDING: "was waiting for review: published",
    Paper.Review.REJECTED: "was rejected in review: published",
}


def _settle(
    line: Line, stored: StoredPaper, record: ArxivRecord | VenueRecord
) -> tuple[Result, list[str]]:
    """The line's result from what the pipeline did (its paper noted), and what to say
    about it."""
    line.paper_id = stored.paper_id
    if stored.outcome == Outcome.CREATED:
        return Result.ADDED, []
    if stored.matched_arxiv:
        noted = ["the same paper from arXiv"]
        if stored.outcome == Outcome.UPDATED:
            noted.append(f"{source_name(line.source_key)}'s facts noted on it")
        return Result.PRESENT, noted
    if stored.matched_listing and isinstance(record, ArxivRecord):
        return Result.ADDED, ["matched the listing without an arXiv id"]
    if stored.matched_listing:
        return Result.ADDED, ["matched the listing of the same title"]
    if isinstance(record, VenueRecord):
        refreshed = stored.outcome == Outcome.UPDATED
        return Result.PRESENT, [f"refreshed from {source_name(line.key)}"] if refreshed else []
    previous, current = stored.previous_version, record.version
    if stored.outcome == Outcome.UPDATED and previous and current and current > previous:
        return Result.UPDATED, [f"v{previous} → v{current}"]
    return Result.PRESENT, []


def _record(
    request: LinkRequest,
    lines: list[Line],
    stored: dict[str, StoredPaper],
    *,
    by: curation.Actor,
    tag_names: dict[int, str],
) -> None:
    """The history of each paper: added, or tagged when it was there already."""
    note = f": {request.note}" if request.note else ""
    with_tags = f" with {', '.join(tag_names.values())}" if tag_names else ""
    # Every added or present line names its paper and its id (_settle).
    added = [
        line.paper_id for line in lines if line.result == Result.ADDED and line.paper_id is not None
    ]
    curation.record(added, CurationEvent.Action.ADDED, by=by, detail=f"by link{with_tags}{note}")
    tagged = {
        line.paper_id: ", ".join(tag_names[pk] for pk in stored[line.key].tags_added)
        + f" (by link{note})"
        for line in lines
        if line.result in (Result.PRESENT, Result.UPDATED)
        and line.paper_id is not None
        and line.key
        and stored[line.key].tags_added
    }
    curation.record_each(tagged, CurationEvent.Action.TAGGED, by=by)
    # Another source's record of a paper from arXiv joins it rather than adding one.
    merged = {
        line.paper_id: f"{source_name(line.source_key)}'s record of it (by link{note})"
        for line in lines
        if line.paper_id is not None and line.source_key and stored[line.source_key].matched_arxiv
    }
    curation.record_each(merged, CurationEvent.Action.MERGED, by=by)


def _record_failure(request: LinkRequest, detail: str) -> None:
    """The curation log keeps a request that stored nothing, by its number."""
    curation.record_about(
        {f"papers by link #{request.pk}": f"{_ids(request.ids_total)}: {detail}"},
        CurationEvent.Action.ADD_FAILED,
        by=request.requested_by or request.actor or "unknown",
    )


def _ids(count: int) -> str:
    return f"{count} id" + ("s" if count != 1 else "")


def _not_stored(request: LinkRequest, lines: list[Line], detail: str) -> None:
    # Every paper's line, whatever a rolled-back store had set it to.
    for line in lines:
        if line.key and line.result != Result.REPEATED:
            line.result, line.paper_id, line.detail = Result.NOT_STORED, None, detail
    request.lines = [asdict(line) for line in lines]
    request.save(update_fields=["lines"])


def counts(request: LinkRequest) -> Counter[Result]:
    """How many lines ended each way."""
    return Counter(Result(data["result"]) for data in request.lines)
