"""Writes to discussions: posting, editing, deleting and reporting comments,
following, and the curators' holds, each of theirs in the curation log."""

import datetime
import re

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import Count, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone
from django.utils.translation import gettext as _

from catalog.changes import papers_changed
from catalog.models import CurationEvent, Paper
from catalog.page_cache import forget_comment_counts
from catalog.rendering import render_markdown
from discussion.models import (
    Comment,
    CommenterBan,
    CommentReport,
    DiscussionFollow,
    DiscussionLock,
)

# What counts as a link in a comment's text: an address, written bare or in Markdown,
# and whatever its rendering makes a link (`[x](//host)`, an address written in entities).
LINK = re.compile(r"https?://|www\.", re.IGNORECASE)
RENDERED_LINK = re.compile(r"<a\s[^>]*\bhref=", re.IGNORECASE)


class CommentRefused(Exception):
    """A write the rules do not allow; status is the HTTP status that says so."""

    def __init__(self, message: str, *, status: int = 400, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.retry_after = retry_after


def is_banned(user: User) -> bool:
    return CommenterBan.objects.filter(user=user).exists()


def is_locked(paper: Paper) -> bool:
    return DiscussionLock.objects.filter(paper=paper).exists()


def clean_body(*, user: User, body: str) -> str:
    """The body as stored, or CommentRefused saying what is wrong with it."""
    body = body.replace("\x00", "").strip()
    if not body:
        raise CommentRefused(_("Write something before posting."))
    if len(body) > settings.COMMENT_MAX_LENGTH:
        raise CommentRefused(
            _("A comment is at most %(limit)d characters long.")
            % {"limit": settings.COMMENT_MAX_LENGTH}
        )
    new_account = timezone.now() - user.date_joined < datetime.timedelta(
        days=settings.DISCUSSION_NEW_ACCOUNT_DAYS
    )
    if new_account and links_in(body) > settings.DISCUSSION_NEW_ACCOUNT_LINKS:
        raise CommentRefused(
            _("New accounts may not post links yet; please write the address without it.")
        )
    return body


def links_in(body: str) -> int:
    return max(len(LINK.findall(body)), len(RENDERED_LINK.findall(render_markdown(body))))


def recount(paper_id: int) -> None:
    """Store the paper's count of shown comments (one UPDATE). Stored pages
    read it on the way out (catalog.page_cache.comment_counts), so it moves no
    version, which would make every cached page stale; they read it again
    once this commits."""
    shown = (
        Comment.objects.filter(paper=OuterRef("pk"), deleted=False, hidden_by_curator=False)
        .order_by()
        .values("paper")
        .annotate(n=Count("*"))
        .values("n")
    )
    Paper.objects.filter(pk=paper_id).update(comment_count=Coalesce(Subquery(shown), 0))
    transaction.on_commit(lambda: forget_comment_counts([paper_id]))


def follow(*, user: User, paper: Paper) -> None:
    DiscussionFollow.objects.get_or_create(user=user, paper=paper)


def unfollow(*, user: User, paper: Paper) -> None:
    DiscussionFollow.objects.filter(user=user, paper=paper).delete()


def stop_all_mail(*, user: User) -> int:
    """One-click unsubscribe: the reader follows no discussion any more."""
    deleted, _rows = DiscussionFollow.objects.filter(user=user).delete()
    return deleted


@transaction.atomic
def post_comment(*, user: User, paper: Paper, body: str, parent_id: int | None) -> Comment:
    """A new comment or reply by the reader, who then follows the discussion."""
    if not user.is_active:
        raise CommentRefused(_("Log in to comment."), status=403)
    if is_banned(user):
        raise CommentRefused(_("You may not comment on this site."), status=403)
    if is_locked(paper):
        raise CommentRefused(_("This discussion is locked."), status=403)
    parent = None
    if parent_id is not None:
        in_range = 0 < parent_id < 2**63
        parent = Comment.objects.filter(pk=parent_id, paper=paper).first() if in_range else None
        if parent is None:
            raise CommentRefused(_("The comment you replied to is not in this discussion."))
        # A reply to a reply joins the thread of the comment that started it.
        if parent.parent_id is not None:
            parent = Comment.objects.get(pk=parent.parent_id)
    text = clean_body(user=user, body=body)
    comment = Comment.objects.create(
        paper=paper, author=user, parent=parent, body=text, body_html=render_markdown(text)
    )
    follow(user=user, paper=paper)
    recount(paper.pk)
    return comment


def edit_comment(*, user: User, comment: Comment, body: str) -> Comment:
    if not comment.editable_by(user):
        raise CommentRefused(_("This comment can no longer be edited."), status=403)
    text = clean_body(user=user, body=body)
    comment.body = text
    comment.body_html = render_markdown(text)
    comment.edited_at = timezone.now()
    comment.save(update_fields=["body", "body_html", "edited_at"])
    papers_changed([comment.paper_id])
    return comment


@transaction.atomic
def delete_comment(*, user: User, comment: Comment) -> None:
    """Its author takes the text away; replies stay under "deleted"."""
    if not comment.deletable_by(user):
        raise CommentRefused(_("Only its author may delete a comment."), status=403)
    Comment.objects.filter(pk=comment.pk).update(deleted=True, body="", body_html="")
    recount(comment.paper_id)


def report_comment(*, user: User, comment: Comment, reason: str) -> bool:
    """True when this is the reader's first report of the comment."""
    if comment.author_id == user.pk:
        raise CommentRefused(_("You cannot report your own comment."))
    try:
        with transaction.atomic():
            CommentReport.objects.create(
                comment=comment, reporter=user, reason=reason.replace("\x00", "").strip()[:500]
            )
    except IntegrityError:
        return False
    return True


def log(*, paper_id: int, action: str, curator: User, detail: str) -> None:
    CurationEvent.objects.create(paper_id=paper_id, action=action, user=curator, detail=detail)


@transaction.atomic
def set_hidden(*, curator: User, comment: Comment, hidden: bool) -> bool:
    """Hide or show a comment; False when it already was."""
    if not Comment.objects.filter(pk=comment.pk, hidden_by_curator=not hidden).update(
        hidden_by_curator=hidden
    ):
        return False
    action = CurationEvent.Action.COMMENT_HIDDEN if hidden else CurationEvent.Action.COMMENT_SHOWN
    log(paper_id=comment.paper_id, action=action, curator=curator, detail=f"comment {comment.pk}")
    recount(comment.paper_id)
    return True


@transaction.atomic
def dismiss_reports(*, curator: User, comment: Comment) -> bool:
    """The curator read the comment's reports and leaves it up; False when none was open."""
    dismissed = (
        CommentReport.objects.open()
        .filter(comment=comment)
        .update(dismissed_at=timezone.now(), dismissed_by=curator)
    )
    if not dismissed:
        return False
    log(
        paper_id=comment.paper_id,
        action=CurationEvent.Action.REPORTS_DISMISSED,
        curator=curator,
        detail=f"comment {comment.pk}, {dismissed} report{'s' if dismissed > 1 else ''}",
    )
    return True


@transaction.atomic
def set_locked(*, curator: User, paper: Paper, locked: bool) -> bool:
    """Lock or unlock a paper's discussion; False when it already was."""
    if locked:
        _lock, changed = DiscussionLock.objects.get_or_create(
            paper=paper, defaults={"locked_by": curator}
        )
    else:
        changed = DiscussionLock.objects.filter(paper=paper).delete()[0] > 0
    if changed:
        action = (
            CurationEvent.Action.THREAD_LOCKED if locked else CurationEvent.Action.THREAD_UNLOCKED
        )
        log(paper_id=paper.pk, action=action, curator=curator, detail="")
        papers_changed([paper.pk])
    return changed


@transaction.atomic
def set_banned(*, curator: User, comment: Comment, banned: bool, reason: str = "") -> bool:
    """Stop or allow the comment's author; logged on the comment's paper
    (the curation log is kept per paper). False when nothing changed."""
    author = comment.author
    if banned:
        _ban, changed = CommenterBan.objects.get_or_create(
            user=author, defaults={"banned_by": curator, "reason": reason[:500]}
        )
    else:
        changed = CommenterBan.objects.filter(user=author).delete()[0] > 0
    if changed:
        action = (
            CurationEvent.Action.COMMENTER_STOPPED
            if banned
            else CurationEvent.Action.COMMENTER_ALLOWED
        )
        detail = f"reader {author.pk} (comment {comment.pk})"
        log(paper_id=comment.paper_id, action=action, curator=curator, detail=detail)
    return changed
