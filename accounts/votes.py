"""Which upvotes count, and the counts they give each paper.

A paper's `upvote_count` and its votes over the last 24 hours, 7 days and 30
days (Paper.votes_24h, _7d, _30d, which lists sort by) count only the votes of
readers whose account is at least a day old and who have confirmed an email
address: a new account, or a made-up address, cannot push a paper up. A vote
or its taking back recounts that paper at once (accounts.services); a periodic
refresh recounts them all, as votes leave a window and as their readers become
eligible.

The counts are written by queryset updates, which send no signal: they are
not the catalog's content and move no catalog version. Cards and the paper
page read them into a slot on every page (catalog.page_cache.upvote_counts),
and pages sorted by votes are keyed on the votes version, bumped here.
"""

import datetime

from allauth.account.models import EmailAddress
from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Count, Exists, OuterRef, Q, QuerySet
from django.http import HttpRequest
from django.utils import timezone
from django_ratelimit.core import get_usage

from accounts.models import Upvote
from catalog.cache import bump_votes_version
from catalog.filters import VOTE_COLUMNS
from catalog.models import Paper
from catalog.page_cache import forget_upvote_counts
from catalog.trending import WINDOWS

# How old an account must be before its votes count.
ELIGIBLE_AFTER = datetime.timedelta(days=1)
COLUMNS = ("upvote_count", *VOTE_COLUMNS.values())
# bulk_update writes one CASE branch a row: small batches keep it linear.
UPDATE_BATCH = 200

Counts = dict[int, tuple[int, ...]]


def eligible(*, now: datetime.datetime) -> QuerySet[Upvote]:
    """The votes that count at `now`."""
    verified = EmailAddress.objects.filter(user_id=OuterRef("user_id"), verified=True)
    return Upvote.objects.filter(
        Exists(verified), user__is_active=True, user__date_joined__lte=now - ELIGIBLE_AFTER
    )


def counts_now(*, user: User, now: datetime.datetime) -> bool:
    """Whether this reader's vote counts at `now`, by eligible()'s rule."""
    return (
        user.is_active
        and user.date_joined <= now - ELIGIBLE_AFTER
        and EmailAddress.objects.filter(user=user, verified=True).exists()
    )


def count_votes(votes: QuerySet[Upvote], *, now: datetime.datetime) -> Counts:
    """Each voted paper's counts, in COLUMNS' order, in one query."""
    windows = {
        column: Count("pk", filter=Q(created_at__gt=now - WINDOWS[window].span))
        for window, column in VOTE_COLUMNS.items()
    }
    rows = (
        votes.order_by()
        .values("paper_id")
        .annotate(upvote_count=Count("pk"), **windows)
        .values_list("paper_id", *COLUMNS)
    )
    return {paper_id: tuple(counts) for paper_id, *counts in rows}


def recount_paper(*, paper: Paper, now: datetime.datetime | None = None) -> None:
    """Write the paper's counts from its votes now (in the voter's transaction,
    which holds the paper's row: see accounts.services.upvote)."""
    now = now or timezone.now()
    counts = count_votes(eligible(now=now).filter(paper=paper), now=now)
    values = dict(zip(COLUMNS, counts.get(paper.pk, (0,) * len(COLUMNS)), strict=True))
    Paper.objects.filter(pk=paper.pk).update(**values)
    for column, value in values.items():
        setattr(paper, column, value)
    transaction.on_commit(lambda: _counts_changed([paper.pk]))


def refresh_vote_counts(*, now: datetime.datetime | None = None) -> int:
    """Recount every paper's votes, store the counts that changed; returns how many changed."""
    now = now or timezone.now()
    counts = count_votes(eligible(now=now), now=now)
    zero = (0,) * len(COLUMNS)
    with transaction.atomic():
        counted = Paper.objects.filter(
            Q(upvote_count__gt=0) | Q(votes_24h__gt=0) | Q(votes_7d__gt=0) | Q(votes_30d__gt=0)
        )
        stored = {pk: tuple(values) for pk, *values in counted.values_list("pk", *COLUMNS)}
        changed = [
            Paper(pk=paper_id, **dict(zip(COLUMNS, counts.get(paper_id, zero), strict=True)))
            for paper_id in sorted(set(stored) | set(counts))
            if counts.get(paper_id, zero) != stored.get(paper_id, zero)
        ]
        Paper.objects.bulk_update(changed, COLUMNS, batch_size=UPDATE_BATCH)
        if changed:
            ids = [paper.pk for paper in changed]
            transaction.on_commit(lambda: _counts_changed(ids))
    return len(changed)


def _counts_changed(paper_ids: list[int]) -> None:
    forget_upvote_counts(paper_ids)
    bump_votes_version()


def retry_after(request: HttpRequest, *, user: User) -> int | None:
    """Count a vote against the reader's allowance (settings.VOTE_RATE_LIMIT,
    the same on the site and in the API); the seconds until it lifts once spent."""
    rate = settings.VOTE_RATE_LIMIT
    if not rate:
        return None
    usage = get_usage(
        request,
        group="votes",
        key=lambda group, request: f"reader:{user.pk}",
        rate=rate,
        increment=True,
    )
    if usage and usage["should_limit"]:
        return max(1, int(usage["time_left"]))
    return None
