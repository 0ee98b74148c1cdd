"""New comments mailed to the readers who follow a paper's discussion, each
reader one mail a round with the comments since their last, and a one-click
unsubscribe (a signed token naming the reader; RFC 8058 headers)."""

from collections.abc import Sequence
from dataclasses import dataclass, field

from django.contrib.auth.models import User
from django.core import signing
from django.db import transaction
from django.db.models import Exists, F, OuterRef
from django.urls import reverse
from django.utils import timezone

from catalog.models import Paper
from core.mail import absolute_url, send_unsubscribable
from discussion.models import Comment, DiscussionFollow

UNSUBSCRIBE_SALT = "discussion.unsubscribe"


def unsubscribe_token(user: User) -> str:
    return signing.dumps(user.pk, salt=UNSUBSCRIBE_SALT)


def user_for_token(token: str) -> User | None:
    """The reader a token names; signing.BadSignature for a token not ours."""
    user_id = signing.loads(token, salt=UNSUBSCRIBE_SALT)
    if not isinstance(user_id, int):
        return None
    return User.objects.filter(pk=user_id, is_active=True).first()


@dataclass
class PaperNews:
    paper: Paper
    comments: Sequence[Comment] = field(default_factory=list)


def news_for(follows: list[DiscussionFollow]) -> list[PaperNews]:
    """Each followed paper's shown comments by others since the follow's last mail."""
    news = []
    for followed in follows:
        comments = list(
            Comment.objects.filter(
                paper_id=followed.paper_id,
                created_at__gt=followed.notified_at,
                deleted=False,
                hidden_by_curator=False,
            )
            .exclude(author_id=followed.user_id)
            .annotate(author_name=F("author__profile__display_name"))
            .order_by("created_at", "id")
        )
        if comments:
            news.append(PaperNews(followed.paper, comments))
    return news


def send_news(*, user: User, news: list[PaperNews], language: str) -> None:
    unsubscribe_url = absolute_url(
        reverse("discussion:unsubscribe", args=[unsubscribe_token(user)])
    )
    send_unsubscribable(
        to=user.email,
        templates="emails/discussion",
        context={"news": news},
        unsubscribe_url=unsubscribe_url,
        language=language,
    )


def send_due_mail() -> int:
    """One mail to each follower with news; returns how many were sent. A
    reader's follows are marked notified as of the round's start only once
    their mail is sent."""
    started = timezone.now()
    news_waiting = Comment.objects.filter(
        paper_id=OuterRef("paper_id"),
        created_at__gt=OuterRef("notified_at"),
        deleted=False,
        hidden_by_curator=False,
    ).exclude(author_id=OuterRef("user_id"))
    follows = (
        DiscussionFollow.objects.filter(Exists(news_waiting), user__is_active=True)
        .exclude(user__email="")
        .select_related("user", "paper")
        .annotate(language=F("user__profile__language"))
        .order_by("user_id", "paper_id")
    )
    by_reader: dict[int, list[DiscussionFollow]] = {}
    for followed in follows:
        by_reader.setdefault(followed.user_id, []).append(followed)
    sent = 0
    for user_follows in by_reader.values():
        news = news_for(user_follows)
        if not news:
            continue
        user = user_follows[0].user
        language = getattr(user_follows[0], "language", "") or ""
        send_news(user=user, news=news, language=language)
        with transaction.atomic():
            DiscussionFollow.objects.filter(pk__in=[f.pk for f in user_follows]).update(
                notified_at=started
            )
        sent += 1
    return sent
