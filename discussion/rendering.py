"""A discussion's comments rendered once per process and shared by every reader.

Rendering a page of threads was nearly all of the discussion page's time
(about 1.3 ms a comment, 4 SQL queries for the whole page). A comment's HTML
depends only on what it shows (its text, author, dates and state), the
language and time zone, and its template, so each process keeps it in an LRU
(COMMENT_CACHE_SIZE, core/fragments.py) keyed on exactly those: an edit, a
deletion, a curator hiding it or its author renaming themselves gives another
key, and nothing needs invalidating. What differs per reader is left as a
slot: the comment's actions (edit and delete for its author, report for
others, nothing for a visitor). Those, and the reply form under each thread,
come in a few variants a page, each rendered once with a stand-in for the
comment's id (ReaderActions).
"""

from collections.abc import Callable
from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.http import HttpRequest
from django.template.loader import get_template
from django.utils import timezone, translation
from django.utils.safestring import SafeString, mark_safe

from core.fragments import Fragments, address_parts, digest, template_digest
from core.http import page_csrf_token
from discussion.models import Comment

COMMENT_TEMPLATE = "discussion/_comment.html"
ACTIONS_TEMPLATE = "discussion/_comment_actions.html"
FORM_TEMPLATE = "discussion/_form.html"
# Where a shown comment's actions go, after its body: the body is sanitised
# (nh3 drops HTML comments) and the rest is escaped, so only the template
# writes this, and the last one is the template's.
ACTIONS_SLOT = "<!--slot:comment-actions-->"

_comments = Fragments("COMMENT_CACHE_SIZE")


def comment_key(comment: Comment) -> bytes:
    """Everything the shared comment shows, the language, the time zone and the template."""
    return digest(
        comment.pk,
        comment.created_at,
        comment.edited_at,
        comment.deleted,
        comment.hidden_by_curator,
        comment.body_html,
        # Annotated by discussion.selectors.with_authors.
        getattr(comment, "author_name", None),
        getattr(comment, "author_public", None),
        translation.get_language(),
        timezone.get_current_timezone_name(),
        template_digest(COMMENT_TEMPLATE),
    )


def shared_comment(comment: Comment) -> str:
    """The comment as every reader sees it, its actions' slot still open."""
    return _comments.get_or_render(
        comment_key(comment), lambda: get_template(COMMENT_TEMPLATE).render({"comment": comment})
    )


class ReaderActions:
    """What the reader may do on a page of a discussion: each comment's
    actions and each thread's reply form. A variant differs between comments
    only by the comment's id, so it is rendered once a page with a stand-in for it."""

    # Neither an address, an id nor escaped text can hold a NUL.
    STAND_IN = "\x00comment\x00"

    def __init__(self, *, request: HttpRequest, context: dict[str, Any]) -> None:
        self.request = request
        self.user: User | AnonymousUser = request.user
        # The page's paper, page of threads and new comment's form, for the reply form.
        self.context = context
        self.rendered: dict[str, str] = {}

    def _variant(self, name: str, template: str, values: Callable[[], dict[str, Any]]) -> str:
        if name not in self.rendered:
            context = {**values(), "csrf_token": page_csrf_token(self.request)}
            self.rendered[name] = get_template(template).render(context)
        return self.rendered[name]

    def for_comment(self, comment: Comment) -> str:
        """The comment's actions for this reader: a visitor has none."""
        if not self.user.is_authenticated:
            return ""
        own = comment.author_id == self.user.pk
        can_edit = own and comment.can_edit
        name = "edit" if can_edit else "own" if own else "other"
        html = self._variant(
            name,
            ACTIONS_TEMPLATE,
            lambda: {
                "comment_id": self.STAND_IN,
                "own": own,
                "can_edit": can_edit,
                "edit_url": self.STAND_IN.join(address_parts("discussion:edit")),
                "delete_url": self.STAND_IN.join(address_parts("discussion:delete")),
                "report_url": self.STAND_IN.join(address_parts("discussion:report")),
            },
        )
        return html.replace(self.STAND_IN, str(comment.pk))

    def reply_form(self, comment: Comment) -> SafeString:
        """The form of a reply to the thread the comment starts."""
        html = self._variant(
            "reply",
            FORM_TEMPLATE,
            lambda: {**self.context, "parent": self.STAND_IN, "form_id": self.STAND_IN},
        )
        return mark_safe(html.replace(self.STAND_IN, str(comment.pk)))  # noqa: S308 - rendered

    def comment(self, comment: Comment) -> SafeString:
        """The comment with this reader's actions in its slot."""
        before, slot, after = shared_comment(comment).rpartition(ACTIONS_SLOT)
        if not slot:
            return mark_safe(after)  # noqa: S308 - rendered by the template, its text escaped there
        return mark_safe(before + self.for_comment(comment) + after)  # noqa: S308 - as above
