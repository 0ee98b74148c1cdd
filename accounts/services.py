"""Writes for readers: subscriptions, saved papers, upvotes, settings and digests."""

import datetime
import logging
import secrets
from dataclasses import dataclass, field
from typing import TypedDict

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.models import User
from django.core import signing
from django.db import IntegrityError, transaction
from django.db.models import Exists, F, OuterRef, Q
from django.http import HttpRequest, HttpResponse
from django.utils import timezone

from accounts import emails, selectors, votes
from accounts.models import (
    API_TOKEN_PREFIX,
    RECOMMENDATIONS_LOST_AFTER,
    ApiToken,
    Profile,
    RecommendationSent,
    SavedPaper,
    Subscription,
    Upvote,
    hash_api_token,
    new_feed_token,
)
from accounts.reader_cache import reader_changed
from catalog import trending
from catalog.models import Author, Category, Paper, ReaderSignal, Tag
from discovery import for_you
from discovery.models import DismissedPaper, Recommendation

logger = logging.getLogger(__name__)

# A reader's list is computed again after each of their first saves and followed
# tags, up to this many; after that, the nightly run takes in what they add.
FIRST_INTERESTS = 5
# What a logged-out reader asked to save or follow waits for their log-in in a
# signed cookie, never in a session: an anonymous post costs the site no row
# and no Redis key, however many come.
PENDING_COOKIE = "pending_actions"
PENDING_SALT = "accounts.pending"
PENDING_MAX_AGE = 24 * 3600  # time to sign up and confirm an address
PENDING_MOST = 20
PENDING_KINDS = ("paper", "tag", "category", "author")


class TargetField(TypedDict, total=False):
    tag: Tag
    category: Category
    author: Author


def _target_field(target: Tag | Category | Author) -> TargetField:
    if isinstance(target, Tag):
        return {"tag": target}
    if isinstance(target, Author):
        return {"author": target}
    return {"category": target}


def subscribe(*, user: User, target: Tag | Category | Author) -> None:
    Subscription.objects.get_or_create(user=user, **_target_field(target))
    selectors.forget_reader_ids(user=user)


def unsubscribe(*, user: User, target: Tag | Category | Author) -> None:
    Subscription.objects.filter(user=user, **_target_field(target)).delete()
    selectors.forget_reader_ids(user=user)


def save_paper(*, user: User, paper: Paper) -> None:
    SavedPaper.objects.get_or_create(user=user, paper=paper)
    # Saved papers are never recommended: the next computation leaves it out too.
    Recommendation.objects.filter(user=user, paper=paper).delete()
    selectors.forget_reader_ids(user=user)
    trending.record_signal(paper_id=paper.pk, reader_id=user.pk, kind=ReaderSignal.Kind.SAVE)


def unsave_paper(*, user: User, paper: Paper) -> None:
    # The save's trending signal stays: the reader did find the paper worth
    # keeping then, and unsaving and saving again must not count as fresh interest.
    SavedPaper.objects.filter(user=user, paper=paper).delete()
    selectors.forget_reader_ids(user=user)


def upvote(*, user: User, paper: Paper) -> Paper:
    """The reader upvotes the paper (again: nothing changes); the paper comes
    back with its counts as they now stand."""
    return _change_vote(user=user, paper=paper, upvoted=True)


def take_back_upvote(*, user: User, paper: Paper) -> Paper:
    """The reader takes their upvote back (none: nothing changes)."""
    return _change_vote(user=user, paper=paper, upvoted=False)


def _change_vote(*, user: User, paper: Paper, upvoted: bool) -> Paper:
    with transaction.atomic():
        # Votes on one paper take turns: each recount then sees the one before.
        locked = Paper.objects.select_for_update().get(pk=paper.pk)
        if upvoted:
            _, changed = Upvote.objects.get_or_create(user=user, paper=locked)
        else:
            changed = bool(Upvote.objects.filter(user=user, paper=locked).delete()[0])
        if changed:
            votes.recount_paper(paper=locked)
    selectors.forget_reader_ids(user=user)
    # As with saves, the first upvote's signal stands: taking it back and
    # upvoting again is no fresh interest. Only a vote that counts is one:
    # new accounts and unconfirmed addresses cannot push a paper up trending.
    if upvoted and votes.counts_now(user=user, now=timezone.now()):
        trending.record_signal(paper_id=paper.pk, reader_id=user.pk, kind=ReaderSignal.Kind.UPVOTE)
    return locked


def record_feed_click(*, user: User, paper: Paper) -> None:
    trending.record_signal(paper_id=paper.pk, reader_id=user.pk, kind=ReaderSignal.Kind.CLICK)


def dismiss_paper(*, user: User, paper: Paper) -> None:
    """ "Not interested": the paper leaves the reader's For-you list for good, and
    the papers most like it move down at once (the nightly run does the rest)."""
    with transaction.atomic():
        DismissedPaper.objects.get_or_create(user=user, paper=paper)
        Recommendation.objects.filter(user=user, paper=paper).delete()
        for_you.push_down_like(user=user, paper=paper)
        # Queryset writes send no signal: the reader's stored For you goes here.
        reader_changed(user_id=user.pk)


def recommend_like_saved(*, user_id: int, paper_id: int) -> None:
    """A save moves the reader's For you at once: the saved paper leaves it,
    and the papers most like it come in or up (for_you.pull_up_like); the
    nightly run ranks the whole list again."""
    until = Profile.objects.filter(user_id=user_id).values_list("recommended_until", flat=True)
    with transaction.atomic():
        Recommendation.objects.filter(user_id=user_id, paper_id=paper_id).delete()
        for_you.pull_up_like(
            user_id=user_id,
            paper_id=paper_id,
            saved=SavedPaper.objects.filter(user_id=user_id).values("paper_id"),
            until=until.first(),
        )
        # Queryset writes send no signal: the reader's stored For you goes here.
        reader_changed(user_id=user_id)


def refresh_recommendations(
    *, user_ids: list[int] | None = None, show_progress: bool = False
) -> for_you.RecommendationRun:
    """Every reader's For-you list (or these readers'), from what they saved and follow."""
    now = timezone.now()
    chosen = selectors.readers_with_interests(user_ids=user_ids)
    if user_ids is None:
        # Readers whose seeds vanished keep no stale list (nor a stored For you of it).
        gone = Recommendation.objects.exclude(user__in=chosen.values("pk"))
        for user_id in set(gone.values_list("user_id", flat=True)):
            reader_changed(user_id=user_id)
        gone.delete()
    reader_ids = list(chosen.values_list("pk", flat=True))
    run = for_you.refresh(
        readers=selectors.interests(user_ids=reader_ids),
        total=len(reader_ids),
        now=now,
        show_progress=show_progress,
    )
    if run.readers:
        Profile.objects.filter(user_id__in=reader_ids).update(
            recommended_at=now, recommended_until=run.until
        )
    if user_ids is not None:
        # Asked for on a first visit: a reader with nothing to go on yet is
        # done too, and gets a list from the nightly run once they have.
        Profile.objects.filter(user_id__in=user_ids, recommended_at__isnull=True).update(
            recommended_at=now
        )
    return run


def ask_for_first_recommendations(*, user_id: int) -> bool:
    """On a first visit to For you: mark the list of a reader it was never
    computed for as under way; whether it was (the caller queues the work)."""
    return _ask_for_recommendations(user_id=user_id, unless=Q(recommended_at__isnull=False))


def ask_for_recommendations_from_new_tag(*, user_id: int) -> bool:
    """After a followed tag: mark the reader's list as under way (unless it
    already is), to be ranked again with the tag; whether it was (the caller
    queues the work). A follow is rare beside saves, and its tag's papers
    are known only by ranking the window again."""
    return _ask_for_recommendations(user_id=user_id)


def ask_for_recommendations_from_new_interest(*, user_id: int) -> bool:
    """After a save or a followed tag: mark the list of a reader among their
    first FIRST_INTERESTS saves and followed tags (or without recommendations)
    as under way, so it grows with them now rather than after the nightly run;
    whether it was (the caller queues the work)."""
    interests = (
        SavedPaper.objects.filter(user_id=user_id).count()
        + Subscription.objects.filter(user_id=user_id, tag__isnull=False).count()
    )
    if interests <= FIRST_INTERESTS:
        return _ask_for_recommendations(user_id=user_id)
    recommended = Exists(Recommendation.objects.filter(user_id=OuterRef("user_id")))
    return _ask_for_recommendations(user_id=user_id, unless=recommended)


def _ask_for_recommendations(*, user_id: int, unless: Q | Exists | None = None) -> bool:
    # One conditional UPDATE: of two requests at once, one asks.
    now = timezone.now()
    idle = (
        Q(recommendations_asked_at__isnull=True)
        | Q(recommendations_asked_at__lt=now - RECOMMENDATIONS_LOST_AFTER)
        | Q(recommended_at__gte=F("recommendations_asked_at"))
    )
    asked = Profile.objects.filter(idle, user_id=user_id)
    if unless is not None:
        asked = asked.exclude(unless)
    return bool(asked.update(recommendations_asked_at=now))


def defer_until_login(
    *, request: HttpRequest, response: HttpResponse, kind: str, object_id: int
) -> None:
    """Remember, on the response, a subscribe or save a logged-out reader asked
    for (the most recent PENDING_MOST); done when they log in."""
    asked: list[str | int] = [kind, object_id]
    pending = [action for action in pending_actions(request) if action != asked]
    pending = [*pending, asked][-PENDING_MOST:]
    response.set_cookie(
        PENDING_COOKIE,
        signing.dumps(pending, salt=PENDING_SALT),
        max_age=PENDING_MAX_AGE,
        secure=settings.SESSION_COOKIE_SECURE,
        httponly=True,
        samesite="Lax",
    )


def pending_actions(request: HttpRequest) -> list[list[str | int]]:
    """The [kind, id] pairs of the request's pending cookie; none if it is
    missing, expired, tampered with or not what defer_until_login writes."""
    try:
        pending = signing.loads(
            request.COOKIES.get(PENDING_COOKIE, ""), salt=PENDING_SALT, max_age=PENDING_MAX_AGE
        )
    except signing.BadSignature:  # missing, expired or tampered with
        return []
    if not isinstance(pending, list):
        return []
    return [
        action
        for action in pending
        if isinstance(action, list)
        and len(action) == 2
        and action[0] in PENDING_KINDS
        and isinstance(action[1], int)
    ]


def complete_pending_actions(*, request: HttpRequest, response: HttpResponse, user: User) -> None:
    """Do what the reader asked for before logging in, and forget it."""
    pending = pending_actions(request)
    if PENDING_COOKIE in request.COOKIES:
        response.delete_cookie(PENDING_COOKIE, samesite="Lax")
    for kind, object_id in pending:
        if kind == "paper":
            paper = Paper.objects.visible().filter(pk=object_id).first()
            if paper:
                save_paper(user=user, paper=paper)
                messages.success(request, f"Saved “{paper.title}”.")
            continue
        target: Tag | Category | Author | None
        if kind == "tag":
            target = Tag.objects.filter(pk=object_id).first()
        elif kind == "author":
            target = Author.objects.filter(pk=object_id).first()
        else:
            target = Category.objects.filter(pk=object_id).first()
        if target:
            subscribe(user=user, target=target)
            messages.success(request, f"You are now subscribed to the {kind} {target}.")


def set_language(*, user: User, language: str) -> None:
    Profile.objects.filter(user=user).update(language=language)


def set_digest_frequency(*, profile: Profile, frequency: str) -> None:
    update: dict[str, object] = {"digest_frequency": frequency}
    if profile.digest_frequency == Profile.DigestFrequency.OFF != frequency:
        # Resuming starts from now rather than mailing everything since the pause.
        update["last_digest_at"] = timezone.now()
    Profile.objects.filter(pk=profile.pk).update(**update)
    for name, value in update.items():
        setattr(profile, name, value)


class DisplayNameTaken(Exception):
    """Another reader took the name between the form's check and the write."""


def set_public_profile(
    *, profile: Profile, display_name: str, public_profile: bool, show_upvotes: bool
) -> None:
    """The reader's public name and opt-ins; a change to the name or the opt-in
    freshens the pages that credit them (accounts.signals.freshen_credits)."""
    profile.display_name = display_name
    profile.public_profile = public_profile and bool(display_name)
    profile.show_upvotes = show_upvotes
    try:
        with transaction.atomic():
            profile.save(update_fields=["display_name", "public_profile", "show_upvotes"])
    except IntegrityError as error:  # display_name_key is unique
        profile.refresh_from_db()
        raise DisplayNameTaken from error


def stop_digests(*, profile: Profile) -> None:
    set_digest_frequency(profile=profile, frequency=Profile.DigestFrequency.OFF)


def regenerate_feed_token(*, profile: Profile) -> None:
    profile.feed_token = new_feed_token()
    profile.save(update_fields=["feed_token"])


def create_api_token(*, user: User, name: str) -> tuple[ApiToken, str]:
    """A new API token and its secret, which is shown to the reader this once."""
    secret = API_TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        user=user,
        name=name,
        digest=hash_api_token(secret),
        hint=secret[: len(API_TOKEN_PREFIX) + 4],
    )
    return token, secret


def revoke_api_token(*, user: User, token_id: int) -> bool:
    """Delete one of the reader's tokens; False if they have none by that id."""
    deleted, _ = ApiToken.objects.filter(user=user, pk=token_id).delete()
    return bool(deleted)


def record_feed_visit(
    *, profile: Profile, new_since: datetime.datetime | None, now: datetime.datetime
) -> None:
    Profile.objects.filter(pk=profile.pk).update(feed_seen_at=now, feed_new_since=new_since)


def unsubscribe_token(*, profile: Profile) -> str:
    return signing.dumps(profile.user_id, salt=selectors.UNSUBSCRIBE_SALT)


@dataclass
class DigestRun:
    sent: list[str] = field(default_factory=list)
    empty: int = 0
    failed: list[str] = field(default_factory=list)
    would_send: list[tuple[str, int]] = field(default_factory=list)


def send_due_digests(*, now: datetime.datetime | None = None, dry_run: bool = False) -> DigestRun:
    """Send every due digest. A failed one is logged and left due, so the next run retries it."""
    now = now or timezone.now()
    run = DigestRun()
    for profile in selectors.profiles_due_for_digest(now=now):
        if dry_run:
            digest = selectors.digest(user=profile.user, since=profile.last_digest_at, until=now)
            run.would_send.append((profile.user.email, digest.paper_count))
            continue
        try:
            sent = send_digest(profile=profile, now=now)
        except Exception:
            logger.exception("Digest for user %s failed; the next run retries it", profile.user_id)
            run.failed.append(profile.user.email)
            continue
        if sent:
            run.sent.append(profile.user.email)
        else:
            run.empty += 1
    return run


def send_digest(*, profile: Profile, now: datetime.datetime) -> bool:
    """Claim the window [last digest, now) and mail what entered it; False if claimed
    elsewhere or empty.

    The claim is a conditional UPDATE: of two senders holding the same old
    value only one matches. It commits with the send, so a failed send leaves
    the window unclaimed for a retry.
    """
    since = profile.last_digest_at
    with transaction.atomic():
        claimed = Profile.objects.filter(pk=profile.pk, last_digest_at=since).update(
            last_digest_at=now
        )
        if not claimed:
            return False
        digest = selectors.digest(user=profile.user, since=since, until=now)
        if not digest.groups and not digest.recommended:
            return False
        emails.send_digest(
            user=profile.user,
            digest=digest,
            unsubscribe_token=unsubscribe_token(profile=profile),
            language=profile.language or settings.LANGUAGE_CODE,
            day=now.astimezone(datetime.UTC).date(),
        )
        # Remembered with the claim: a failed send records nothing, and a sent
        # recommendation is never mailed again.
        RecommendationSent.objects.bulk_create(
            [
                RecommendationSent(user=profile.user, paper=row.paper, sent_at=now)
                for row in digest.recommended
            ],
            ignore_conflicts=True,
        )
    profile.last_digest_at = now
    return True
