"""A paper's discussion: its comments for anyone, and posting one with a reader's token.

Posts go through discussion.services and its limits, as the site's form does.
"""

import datetime
from typing import Any

from django.db.models import Q
from django.http import HttpRequest
from ninja import Field, Query, Router, Schema, Status

from api import auth, cursors, schemas
from api.http import Refused
from api.public import ERRORS
from api.queries import paper_by_ref
from catalog.models import Paper
from discussion import limits, services
from discussion.models import Comment
from discussion.selectors import with_authors
from discussion.services import CommentRefused

router = Router(tags=["discussion"])

COMMENT_ERRORS = {**ERRORS, 403: schemas.Error, 404: schemas.Error}


class CommentPaging(Schema):
    cursor: str | None = Field(None, description="A page's next_cursor, for the page after it.")
    limit: int = Field(50, ge=1, le=100, description="Comments per page.")


def comment_out(comment: Comment) -> dict[str, Any]:
    state = "deleted" if comment.deleted else "hidden" if comment.hidden_by_curator else "shown"
    shown = state == "shown"
    return {
        "id": comment.pk,
        "parent": comment.parent_id,
        "author": None if comment.deleted else getattr(comment, "author_name", "") or None,
        "body": comment.body if shown else None,
        "body_html": comment.body_html if shown else None,
        "state": state,
        "created_at": comment.created_at,
        "edited_at": comment.edited_at,
    }


def after_cursor(cursor: str) -> Q:
    """The comments after a cursor's (created_at, id)."""
    value = cursors.decode(cursor)
    try:
        moment = datetime.datetime.fromisoformat(value["at"])
        last_id = int(value["id"])
    except (KeyError, TypeError, ValueError) as err:
        raise cursors.CursorError("This cursor is not one the API gave out.") from err
    if moment.tzinfo is None or not 0 < last_id < 2**63:
        raise cursors.CursorError("This cursor is not one the API gave out.")
    return Q(created_at__gt=moment) | Q(created_at=moment, id__gt=last_id)


@router.get(
    "/papers/{path:ref}/comments",
    response={200: schemas.CommentPage, **COMMENT_ERRORS},
    auth=auth.public,
)
def comments(request: HttpRequest, ref: str, paging: Query[CommentPaging]) -> dict[str, Any]:
    """A paper's comments, oldest first, replies with their `parent`; deleted and
    hidden ones keep their place with their text left out."""
    paper = paper_by_ref(ref, papers=Paper.objects.visible())
    rows = with_authors(Comment.objects.filter(paper=paper)).order_by("created_at", "id")
    if paging.cursor:
        rows = rows.filter(after_cursor(paging.cursor))
    found = list(rows[: paging.limit + 1])
    more = len(found) > paging.limit
    found = found[: paging.limit]
    next_cursor = (
        cursors.encode({"at": found[-1].created_at.isoformat(), "id": found[-1].pk})
        if more
        else None
    )
    return {"items": [comment_out(comment) for comment in found], "next_cursor": next_cursor}


@router.post(
    "/papers/{path:ref}/comments",
    response={201: schemas.CommentOut, **COMMENT_ERRORS},
    auth=auth.ReaderToken(),
)
def post_comment(
    request: HttpRequest, ref: str, payload: schemas.CommentIn
) -> Status[dict[str, Any]]:
    """Post a comment, or with `parent` a reply, as the token's reader (who then
    follows the discussion). Refused with 400 for an empty, too long or (from a
    new account) linking body or a parent of another paper, 403 for a locked
    discussion or a reader stopped from commenting, 429 when posting too fast."""
    paper = paper_by_ref(ref, papers=Paper.objects.visible())
    user = auth.reader_of(request)
    try:
        try:
            limits.count_post(request, user=user)
        finally:
            auth.note_allowances(request, *limits.allowances(request, user=user))
        comment = services.post_comment(
            user=user, paper=paper, body=payload.body, parent_id=payload.parent
        )
    except CommentRefused as refused:
        if refused.status == 429:
            raise auth.RateLimited(retry_after=refused.retry_after or 1) from refused
        raise Refused(refused.status, refused.message) from refused
    return Status(201, comment_out(with_authors(Comment.objects.filter(pk=comment.pk)).get()))
