"""Reads for discussions: a paper's threads, a reader's comments, the mail due."""

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypedDict, cast

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import Exists, F, OuterRef, Q, QuerySet, Value
from django.utils import timezone

from catalog.models import Paper
from discussion.models import Comment, CommenterBan, DiscussionFollow, DiscussionLock

if TYPE_CHECKING:
    from core.typing import WithAnnotations

# A reader's public profile lists this many of their newest comments.
PROFILE_COMMENTS = 50


def with_authors(comments: QuerySet[Comment]) -> QuerySet[Comment]:
    """Each comment with its author's display name and whether their profile is
    public, as columns of the same query (the profile is accounts', read by name)."""
    return comments.annotate(
        author_name=F("author__profile__display_name"),
        author_public=F("author__profile__public_profile"),
    )


@dataclass
class Thread:
    comment: Comment
    replies: list[Comment] = field(default_factory=list)


# A discussion shows this many threads a page, each with all its replies: a
# long one is read a page at a time, as forums are, and each page renders in
# about the time of a page of papers.
THREADS_PER_PAGE = 20
# Past any discussion's end without asking the database, whose offset would
# overflow for the largest numbers.
MAX_PAGE_NUMBER = 10_000_000


@dataclass
class ThreadPage:
    threads: list[Thread]
    number: int
    has_next: bool

    @property
    def has_previous(self) -> bool:
        return self.number > 1

    @property
    def previous_page_number(self) -> int:
        return self.number - 1

    @property
    def next_page_number(self) -> int:
        return self.number + 1


def top_level(paper_id: int) -> QuerySet[Comment]:
    """The paper's comments that start a thread, oldest first (on comment_paper_created)."""
    return Comment.objects.filter(paper_id=paper_id, parent=None).order_by("created_at", "id")


def thread_page(*, paper: Paper, user: User | AnonymousUser, number: int = 1) -> ThreadPage:
    """The number'th page of the paper's threads, oldest first, replies under
    their comment oldest first, each knowing whether the user may still edit
    it. Two queries: the page's thread-starting comments (one more, to know
    whether a page follows), then their replies, on the replies' parent index.
    (One query asking for both met the two by hashing every comment of the
    site, as neither index can answer "a starter or the reply of one".)"""
    number = min(max(number, 1), MAX_PAGE_NUMBER)
    start = (number - 1) * THREADS_PER_PAGE
    starters = list(with_authors(top_level(paper.pk))[start : start + THREADS_PER_PAGE + 1])
    has_next = len(starters) > THREADS_PER_PAGE
    found = {comment.pk: Thread(comment) for comment in starters[:THREADS_PER_PAGE]}
    now = timezone.now()
    replies = with_authors(Comment.objects.filter(parent_id__in=list(found)))
    for reply in replies.order_by("created_at", "id") if found else ():
        assert reply.parent_id is not None  # a reply of one of found's comments
        found[reply.parent_id].replies.append(reply)
    for thread in found.values():
        for comment in (thread.comment, *thread.replies):
            comment.can_edit = comment.editable_by(user, now=now)
    return ThreadPage(threads=list(found.values()), number=number, has_next=has_next)


def page_of(comment: Comment) -> int:
    """The page of its discussion that shows the comment: its thread's."""
    starter = comment.parent if comment.parent_id is not None else comment
    assert starter is not None
    earlier = (
        top_level(comment.paper_id)
        .filter(
            Q(created_at__lt=starter.created_at)
            | Q(created_at=starter.created_at, id__lt=starter.pk)
        )
        .count()
    )
    return earlier // THREADS_PER_PAGE + 1


@dataclass
class ReaderState:
    """What the discussion's form needs to know of the reader asking."""

    locked: bool
    banned: bool
    following: bool


def with_reader_state(papers: QuerySet[Paper], *, user: User | AnonymousUser) -> QuerySet[Paper]:
    """The papers with what the discussion's form needs to know of the reader,
    as columns of their own query: the lock, and for a logged-in reader their
    ban and follow (read back by reader_state)."""
    if not user.is_authenticated:
        banned: Exists | Value = Value(False)
        following: Exists | Value = Value(False)
    else:
        banned = Exists(CommenterBan.objects.filter(user_id=user.pk))
        following = Exists(
            DiscussionFollow.objects.filter(user_id=user.pk, paper_id=OuterRef("pk"))
        )
    return papers.annotate(
        discussion_locked=Exists(DiscussionLock.objects.filter(paper_id=OuterRef("pk"))),
        reader_banned=banned,
        reader_following=following,
    )


class ReaderColumns(TypedDict):
    """What with_reader_state gives each paper."""

    discussion_locked: bool
    reader_banned: bool
    reader_following: bool


def reader_state(paper: Paper) -> ReaderState:
    """The reader's state on a paper read through with_reader_state."""
    read = cast("WithAnnotations[Paper, ReaderColumns]", paper)
    return ReaderState(
        locked=read.discussion_locked, banned=read.reader_banned, following=read.reader_following
    )


def reader_comments(*, user: User) -> QuerySet[Comment]:
    """The reader's shown comments on visible papers, newest first, with their papers."""
    return (
        Comment.objects.filter(
            author=user, deleted=False, hidden_by_curator=False, paper__in=Paper.objects.visible()
        )
        .select_related("paper")
        .order_by("-created_at", "-id")[:PROFILE_COMMENTS]
    )
