"""What a client follows to keep a copy of the catalog: the change feed
(catalog.sync), from a token to the next."""

from pathlib import Path
from typing import Any, Literal

from django.conf import settings
from django.db.models import Prefetch
from django.http import FileResponse, Http404, HttpRequest
from ninja import Field, Query, Router, Schema

from api import auth, dump, schemas, serializers
from api.http import Refused
from catalog import sync
from catalog.models import Category, Paper
from catalog.selectors import with_list_related

router = Router(auth=auth.public)

ERRORS = {400: schemas.FieldErrors, 401: schemas.Error, 429: schemas.RateLimitError}
BAD_SINCE = "since must be a token this API gave out (next_since, or an entry's token)."


class ChangesQuery(Schema):
    since: str | None = Field(
        None,
        description="A token this API gave out: the answer's next_since, or an entry's"
        " token. Not given: from the start.",
    )
    limit: int = Field(100, ge=1, le=1000, description="Entries per answer.")


class ChangeEntry(Schema):
    token: str = Field(description="Pass as `since` to continue after this entry.")
    id: int
    arxiv_id: str | None
    change: Literal["changed", "removed"] = Field(
        description="changed: `paper` is its state now (new papers included); removed:"
        " deleted, hidden or merged into another paper, so no longer listed."
    )
    paper: schemas.PaperItem | None


class ChangePage(Schema):
    items: list[ChangeEntry] = Field(
        description="Each paper changed since the token once, at its latest change, in"
        " the order the changes were committed."
    )
    next_since: str = Field(description="Pass as `since` for what changes next.")
    more: bool = Field(description="true when more changes wait: ask again at once.")


def parse_token(since: str | None, *, top: int) -> int:
    if since is None:
        return 0
    if not (since.isascii() and since.isdigit()) or int(since) > top:
        raise Refused(400, BAD_SINCE)
    return int(since)


@router.get("/changes", response={200: ChangePage, **ERRORS}, tags=["sync"], exclude_unset=True)
def changes(request: HttpRequest, query: Query[ChangesQuery]) -> dict[str, Any]:
    """Every paper added, changed, hidden, merged or removed since the token."""
    top = sync.seal()
    since = parse_token(query.since, top=top)
    found, more = sync.changes_since(since, limit=query.limit)
    papers = with_list_related(
        Paper.objects.visible().filter(pk__in=[change.paper_id for change in found])
    ).prefetch_related(Prefetch("categories", queryset=Category.objects.order_by("code")))
    by_pk = {paper.pk: paper for paper in papers.order_by()}
    arxiv_ids = dict(
        Paper.objects.filter(pk__in=[c.paper_id for c in found if c.paper_id not in by_pk])
        .order_by()
        .values_list("pk", "arxiv_id")
    )
    items = []
    for change in found:
        paper = by_pk.get(change.paper_id)
        items.append(
            {
                "token": str(change.sequence),
                "id": change.paper_id,
                "arxiv_id": paper.arxiv_id if paper else arxiv_ids.get(change.paper_id),
                "change": "changed" if paper else "removed",
                "paper": serializers.paper_item(request, paper) if paper else None,
            }
        )
    # Nothing found: every row up to the seal is answered for.
    last = found[-1].sequence if found else max(since, top)
    return {"items": items, "next_since": str(last), "more": more}


class DumpManifest(Schema):
    url: str = Field(description="The dump: JSON Lines of PaperItem, gzip.")
    sha256: str = Field(description="The SHA-256 of the file as downloaded, hex.")
    bytes: int
    papers: int
    token: str = Field(
        description="The change token it is consistent with: follow /changes from it."
    )
    created_at: str


NO_DUMP = "There is no dump yet; the first is written tonight."


@router.get("/dump", response={200: DumpManifest, 404: schemas.Error, **ERRORS}, tags=["sync"])
def dump_manifest(request: HttpRequest) -> dict[str, Any]:
    """The latest nightly dump of every visible paper, and where to download it."""
    found = dump.manifest()
    if found is None:
        raise Http404(NO_DUMP)
    url = request.build_absolute_uri("/api/v1/dump/papers.jsonl.gz")
    return {**{key: value for key, value in found.items() if key != "file"}, "url": url}


DUMP_FILE = {
    "description": "The dump: one PaperItem a line (JSON Lines), gzip; its SHA-256 and"
    " length are the manifest's.",
    "content": {"application/gzip": {"schema": {"type": "string", "format": "binary"}}},
}


@router.get(
    "/dump/papers.jsonl.gz",
    response={404: schemas.Error, **ERRORS},
    tags=["sync"],
    openapi_extra={"responses": {200: DUMP_FILE}},
)
def dump_file(request: HttpRequest) -> FileResponse:
    """The latest dump's file, streamed."""
    found = dump.manifest()
    if found is None:
        raise Http404(NO_DUMP)
    path = Path(settings.DUMP_DIR) / found["file"]
    # The manifest names the file until it is replaced; the file before stays KEPT.
    return FileResponse(path.open("rb"), content_type="application/gzip", as_attachment=True)
