"""Reads for discussions: a paper's threads, a reader's comments, the mail due."""

from dataclasses import dataclass, field

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import Exists, F, OuterRef, QuerySet, Value
from django.utils import timezone

from catalog.models import Paper
from discussion.models import Comment, CommenterBan, DiscussionFollow, DiscussionLock

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


def threads(*, paper: Paper, user: User | AnonymousUser) -> list[Thread]:
    """The paper's comments as threads, oldest first, replies under their
    comment oldest first, each knowing whether the user may still edit it:
    one query, on comment_paper_created."""
    found: dict[int, Thread] = {}
    now = timezone.now()
    for comment in with_authors(Comment.objects.filter(paper=paper).order_by("created_at", "id")):
        comment.can_edit = comment.editable_by(user, now=now)
        if comment.parent_id is None:
            found[comment.pk] = Thread(comment)
        elif comment.parent_id in found:
            found[comment.parent_id].replies.append(comment)
    return list(found.values())


@dataclass
class ReaderState:
    """What the discussion's form needs to know of the reader asking."""

    locked: bool
    banned: bool
    following: bool


def reader_state(*, paper: Paper, user: User | AnonymousUser) -> ReaderState:
    """One query: the lock, and for a logged-in reader their ban and follow."""
    locked = Exists(DiscussionLock.objects.filter(paper_id=OuterRef("pk")))
    if not user.is_authenticated:
        banned: Exists | Value = Value(False)
        following: Exists | Value = Value(False)
    else:
        banned = Exists(CommenterBan.objects.filter(user_id=user.pk))
        following = Exists(
            DiscussionFollow.objects.filter(user_id=user.pk, paper_id=OuterRef("pk"))
        )
    row = Paper.objects.filter(pk=paper.pk).values_list(locked, banned, following).first()
    found = row or (False, False, False)
    return ReaderState(locked=bool(found[0]), banned=bool(found[1]), following=bool(found[2]))


def reader_comments(*, user: User) -> QuerySet[Comment]:
    """The reader's shown comments on visible papers, newest first, with their papers."""
    return (
        Comment.objects.filter(
            author=user, deleted=False, hidden_by_curator=False, paper__in=Paper.objects.visible()
        )
        .select_related("paper")
        .order_by("-created_at", "-id")[:PROFILE_COMMENTS]
    )
