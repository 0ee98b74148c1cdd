"""Reads for readers' pages, feeds and digests; each owns its joins and prefetches."""

import contextlib
import datetime
import functools
import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypedDict

from allauth.account.models import EmailAddress
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core import signing
from django.db import connections, router
from django.db.models import (
    BooleanField,
    Case,
    Exists,
    Expression,
    ExpressionWrapper,
    F,
    OuterRef,
    Q,
    QuerySet,
    Value,
    When,
    prefetch_related_objects,
)
from django.db.models.expressions import Combinable
from django.db.models.functions import Coalesce
from django.shortcuts import get_object_or_404

from accounts.models import (
    ApiToken,
    Profile,
    RecommendationSent,
    SavedPaper,
    Subscription,
    Upvote,
    hash_api_token,
)
from catalog.counts import papers_of
from catalog.models import NEWEST_FIRST, Author, Category, Paper, PaperAuthor, PaperTag, Tag
from discovery import for_you
from discovery.models import Recommendation

PaperCategory = Paper.categories.through

# A new visit to the feed begins after this long away; until then the
# "new" marks stay put so the reader can page through them.
FEED_VISIT_GAP = datetime.timedelta(minutes=30)
DIGEST_PAPERS_PER_GROUP = 30
DIGEST_RECOMMENDED = 5
DIGEST_RECOMMENDED_DAYS = 30
UNSUBSCRIBE_SALT = "accounts.digest-unsubscribe"
# From this many followed papers (links to followed tags and categories) the
# feed probes the newest papers one by one; below it, it lets PostgreSQL hash
# the links. At a million papers hashing 210,000 links took 70 ms a query and
# probing the newest papers a few; hashing a few thousand is cheaper than
# walking the catalog to find them (BENCHMARKS.md).
FEED_PROBE_PAPERS = 50_000
# The last feed view is written at most once a minute: views in between would
# move it by seconds, against a 30-minute gap, at the cost of a write each.
FEED_SEEN_RESOLUTION = datetime.timedelta(minutes=1)


class ReaderIds(TypedDict):
    tag_ids: frozenset[int]
    category_ids: frozenset[int]
    author_ids: frozenset[int]
    saved_paper_ids: frozenset[int]
    upvoted_paper_ids: frozenset[int]
    # The papers of the followed tags and categories, counted once per link.
    followed_papers: int


def reader_ids(*, user: User) -> ReaderIds:
    """The reader's subscribed tag, category and author ids and saved paper ids, in one
    query: every page a reader sees asks for them all (with the number of papers they
    follow, which picks the feed's query). Read once per user object, so a
    request's view and templates share the query, and kept with the user
    between requests (accounts.reader_cache)."""
    # request.user is a lazy proxy: attributes set on it land on the user itself.
    ids: ReaderIds | None = getattr(user, "_reader_ids", None)
    if ids is None:
        ids = user._reader_ids = _read_reader_ids(user)  # type: ignore[attr-defined]
    return ids


def forget_reader_ids(*, user: User) -> None:
    """After the reader's subscriptions or saved papers change: read them again."""
    with contextlib.suppress(AttributeError):  # never read
        del user._reader_ids  # type: ignore[attr-defined]


# Stands for the reader's id in the query compiled once below (ids are positive).
ANY_READER = -1


def _read_reader_ids(user: User) -> ReaderIds:
    alias = router.db_for_read(Subscription)
    sql, params = _reader_ids_sql(alias)
    with connections[alias].cursor() as cursor:
        cursor.execute(sql, [user.pk if value == ANY_READER else value for value in params])
        rows = cursor.fetchall()
    ids: dict[str, set[int]] = {
        "tag_ids": set(),
        "category_ids": set(),
        "author_ids": set(),
        "saved_paper_ids": set(),
        "upvoted_paper_ids": set(),
    }
    followed_papers = 0
    for kind, pk, papers in rows:
        ids[kind].add(pk)
        followed_papers += papers
    return ReaderIds(
        tag_ids=frozenset(ids["tag_ids"]),
        category_ids=frozenset(ids["category_ids"]),
        author_ids=frozenset(ids["author_ids"]),
        saved_paper_ids=frozenset(ids["saved_paper_ids"]),
        upvoted_paper_ids=frozenset(ids["upvoted_paper_ids"]),
        followed_papers=followed_papers,
    )


@functools.cache
def _reader_ids_sql(alias: str) -> tuple[str, tuple[Any, ...]]:
    """The SQL of reader_ids for any reader (ANY_READER). Every page a reader
    sees runs it: the ORM took three times as long to build it as the database
    to answer it, so each process builds it once."""
    target_id = Coalesce("tag_id", "category_id", "author_id")
    subscriptions = (
        Subscription.objects.filter(user_id=ANY_READER)
        .order_by()
        .values_list(
            Case(
                When(tag_id__isnull=False, then=Value("tag_ids")),
                When(category_id__isnull=False, then=Value("category_ids")),
                default=Value("author_ids"),
            ),
            target_id,
            # An author's papers are not counted: they are few beside a tag's.
            papers_of(tag_ref="tag_id", category_ref="category_id"),
        )
    )
    saved = (
        SavedPaper.objects.filter(user_id=ANY_READER)
        .order_by()
        .values_list(Value("saved_paper_ids"), "paper_id", Value(0))
    )
    upvoted = (
        Upvote.objects.filter(user_id=ANY_READER)
        .order_by()
        .values_list(Value("upvoted_paper_ids"), "paper_id", Value(0))
    )
    query = subscriptions.union(saved, upvoted, all=True).query
    sql: tuple[str, tuple[Any, ...]] = query.get_compiler(using=alias).as_sql()
    return sql


def subscription_target(*, kind: str, key: str) -> Tag | Category | Author:
    """The tag (by slug), category (by code) or author (by slug) a subscription
    URL names, or 404; an author curators merged into another is that one."""
    if kind == "tag":
        return get_object_or_404(Tag, slug=key)
    if kind == "author":
        return get_object_or_404(Author.objects.select_related("merged_into"), slug=key).credited
    return get_object_or_404(Category, code=key)


def visible_paper(*, paper_id: int) -> Paper:
    return get_object_or_404(Paper.objects.visible(), pk=paper_id)


def user_subscriptions(*, user: User) -> list[Subscription]:
    rows = Subscription.objects.filter(user=user).select_related("tag", "category", "author")
    # Tags, then categories, then authors, each by name.
    return sorted(
        rows,
        key=lambda row: (row.tag is None, row.category is None, str(row.target).casefold()),
    )


def _subscribed_filters(
    user: User,
) -> tuple[QuerySet[PaperTag], QuerySet[Any], QuerySet[PaperAuthor]]:
    """Per-paper subqueries: the paper carries a subscribed tag / is in a subscribed
    category / credits a followed author (the categories' through model has no name).

    The ids are written out rather than read by a subquery: PostgreSQL then
    estimates from each tag's and category's own statistics how many papers
    they hold, and probes the newest papers one by one for a reader of busy
    categories (a hash of their million links took a second) while hashing
    the few papers of rare tags.
    """
    ids = reader_ids(user=user)
    in_tags = PaperTag.objects.filter(paper=OuterRef("pk"), tag_id__in=sorted(ids["tag_ids"]))
    in_categories = PaperCategory.objects.filter(
        paper=OuterRef("pk"), category_id__in=sorted(ids["category_ids"])
    )
    by_authors = PaperAuthor.objects.filter(
        paper=OuterRef("pk"), author_id__in=sorted(ids["author_ids"])
    )
    return in_tags, in_categories, by_authors


def subscribed_papers(*, user: User) -> QuerySet[Paper]:
    ids = reader_ids(user=user)
    in_tags, in_categories, by_authors = _subscribed_filters(user)
    if not ids["tag_ids"] and not ids["category_ids"] and not ids["author_ids"]:
        return Paper.objects.none()
    if ids["followed_papers"] >= FEED_PROBE_PAPERS:
        # One EXISTS over both link tables, which PostgreSQL cannot turn into a
        # hash: the newest papers are probed one by one, and a page needs few.
        followed: Q | Combinable = Exists(
            in_tags.values("paper_id").union(
                in_categories.values("paper_id"), by_authors.values("paper_id"), all=True
            )
        )
    else:
        # Few papers: PostgreSQL may hash their links, cheaper than probing
        # newest papers of which few match.
        followed = Q()
        if ids["tag_ids"]:
            followed |= Exists(in_tags)
        if ids["category_ids"]:
            followed |= Exists(in_categories)
        if ids["author_ids"]:
            followed |= Exists(by_authors)
    return Paper.objects.visible().filter(followed).newest_first()


def feed_papers(*, user: User, new_since: datetime.datetime | None) -> QuerySet[Paper]:
    """The personal feed, each paper marked is_new if it entered a subscription after new_since."""
    is_new: Expression
    if new_since is None:
        is_new = Value(False)
    else:
        in_tags, _, _ = _subscribed_filters(user)
        is_new = ExpressionWrapper(
            Q(added_at__gt=new_since) | Exists(in_tags.filter(added_at__gt=new_since)),
            output_field=BooleanField(),
        )
    return subscribed_papers(user=user).annotate(is_new=is_new)


def feed_new_since(*, profile: Profile, now: datetime.datetime) -> datetime.datetime | None:
    """Where this feed visit's "new" marks start: the previous visit's last view."""
    if profile.feed_seen_at is None or now - profile.feed_seen_at > FEED_VISIT_GAP:
        return profile.feed_seen_at
    return profile.feed_new_since


def feed_visit_changed(
    *, profile: Profile, new_since: datetime.datetime | None, now: datetime.datetime
) -> bool:
    """Whether this feed view moves the reader's visit marks enough to write them."""
    return (
        profile.feed_seen_at is None
        or profile.feed_new_since != new_since
        or now - profile.feed_seen_at >= FEED_SEEN_RESOLUTION
    )


def saved_papers(*, user: User) -> QuerySet[Paper]:
    return Paper.objects.visible().filter(saved_by__user=user)


def upvoted_papers(*, user: User) -> QuerySet[Paper]:
    """The visible papers the reader upvoted, the latest vote first."""
    return (
        Paper.objects.visible()
        .filter(upvotes__user=user)
        .annotate(upvoted_on=F("upvotes__created_at"))
        .order_by("-upvoted_on", "-pk")
    )


class Because(TypedDict):
    """Why For you recommends a paper, as for_you_papers gives it: a saved paper, or a tag."""

    because_paper_pk: int | None
    because_paper_title: str | None
    because_paper_arxiv_id: str | None
    because_tag_name: str | None
    because_tag_slug: str | None


def for_you_papers(*, user: User) -> QuerySet[Paper]:
    """The reader's recommended papers with what each is recommended for, in the
    page's one query (the join on the reader's recommendation row is reused)."""
    return (
        Paper.objects.visible()
        .filter(recommendations__user=user)
        .annotate(
            recommendation_score=F("recommendations__score"),
            because_paper_pk=F("recommendations__because_paper_id"),
            because_paper_title=F("recommendations__because_paper__title"),
            because_paper_arxiv_id=F("recommendations__because_paper__arxiv_id"),
            because_tag_name=F("recommendations__because_tag__name"),
            because_tag_slug=F("recommendations__because_tag__slug"),
        )
    )


FOR_YOU_ORDER = (F("recommendation_score").desc(), *NEWEST_FIRST)


def readers_with_interests(*, user_ids: list[int] | None = None) -> QuerySet[User]:
    """Active readers with something For you can go on: a saved paper or a followed tag."""
    readers = (
        get_user_model()
        .objects.filter(is_active=True)
        .filter(
            Exists(SavedPaper.objects.filter(user=OuterRef("pk")))
            | Exists(Subscription.objects.filter(user=OuterRef("pk"), tag__isnull=False))
        )
        .order_by("pk")
    )
    return readers if user_ids is None else readers.filter(pk__in=user_ids)


def interests(*, user_ids: Iterable[int]) -> Iterator[for_you.Interests]:
    """Each reader's saved papers (newest first) and followed tags, as For you ranks from."""
    for user_id in user_ids:
        yield for_you.Interests(
            user_id=user_id,
            saved_ids=list(
                SavedPaper.objects.filter(user_id=user_id)
                .order_by("-created_at", "-id")
                .values_list("paper_id", flat=True)
            ),
            tag_ids=list(
                Subscription.objects.filter(user_id=user_id, tag__isnull=False).values_list(
                    "tag_id", flat=True
                )
            ),
        )


def user_api_tokens(*, user: User) -> list[ApiToken]:
    return list(ApiToken.objects.filter(user=user))


def api_token_for_secret(*, secret: str) -> ApiToken | None:
    """The token a request presents, with its reader, or None if it is not (or no longer) one."""
    return (
        ApiToken.objects.select_related("user")
        .filter(digest=hash_api_token(secret), user__is_active=True)
        .first()
    )


def profile_for_feed_token(*, token: str) -> Profile:
    return get_object_or_404(Profile.objects.select_related("user"), feed_token=token)


def profile_for_unsubscribe_token(*, token: str) -> Profile | None:
    """The profile a digest's unsubscribe link names, or None if the link is
    not one of ours; signing.SignatureExpired once it is older than
    DIGEST_UNSUBSCRIBE_LINK_DAYS, so that a leaked link does not work forever."""
    max_age = datetime.timedelta(days=settings.DIGEST_UNSUBSCRIBE_LINK_DAYS)
    try:
        user_id = signing.loads(token, salt=UNSUBSCRIBE_SALT, max_age=max_age)
    except signing.SignatureExpired:
        raise
    except signing.BadSignature:
        return None
    return Profile.objects.filter(user_id=user_id).first()


def digest_boundaries(*, now: datetime.datetime) -> dict[str, datetime.datetime]:
    """The latest scheduled send time per frequency: a digest is due if its
    window started before it. Calendar times, so hourly checks never drift."""
    today = now.astimezone(datetime.UTC).replace(
        hour=settings.DIGEST_HOUR, minute=0, second=0, microsecond=0
    )
    daily = today if today <= now else today - datetime.timedelta(days=1)
    weekly = daily - datetime.timedelta(days=daily.weekday())
    return {Profile.DigestFrequency.DAILY: daily, Profile.DigestFrequency.WEEKLY: weekly}


def profiles_due_for_digest(*, now: datetime.datetime) -> QuerySet[Profile]:
    due = Q()
    for frequency, boundary in digest_boundaries(now=now).items():
        due |= Q(digest_frequency=frequency, last_digest_at__lt=boundary)
    return (
        Profile.objects.filter(due, user__is_active=True)
        .filter(Exists(Subscription.objects.filter(user=OuterRef("user_id"))))
        .filter(
            Exists(
                EmailAddress.objects.filter(user=OuterRef("user_id"), primary=True, verified=True)
            )
        )
        .select_related("user")
        .order_by("pk")
    )


@dataclass
class DigestGroup:
    target: Tag | Category | Author
    papers: list[Paper] = field(default_factory=list)
    # How many more entered it than the email lists.
    more: int = 0

    @property
    def kind(self) -> str:
        """What the group is of, for the email to name it: "tag", "category" or "author"."""
        return type(self.target).__name__.lower()


@dataclass
class Digest:
    groups: list[DigestGroup]
    paper_count: int
    # "Recommended for you": Recommendation rows, their papers never sent before.
    recommended: list[Recommendation] = field(default_factory=list)


def digest(*, user: User, since: datetime.datetime, until: datetime.datetime) -> Digest:
    """What entered the user's subscriptions in [since, until), by tag, category, then author.

    A paper enters a tag when it is tagged (PaperTag.added_at), and a category
    or a followed author's papers when it enters the catalog (Paper.added_at).
    """
    visible = Paper.objects.visible()
    tag_rows = (
        PaperTag.objects.filter(
            tag__subscriptions__user=user,
            added_at__gte=since,
            added_at__lt=until,
            paper__in=visible,
        )
        .select_related("tag", "paper")
        .order_by("tag__name", "-added_at", "-paper_id")
    )
    category_rows = (
        PaperCategory.objects.filter(
            category__subscriptions__user=user,
            paper__added_at__gte=since,
            paper__added_at__lt=until,
            paper__in=visible,
        )
        .select_related("category", "paper")
        .order_by("category__code", "-paper__added_at", "-paper_id")
    )
    # Only a reader following authors asks for their papers (the ids are read
    # for the recommendations below anyway).
    follows_authors = bool(reader_ids(user=user)["author_ids"])
    author_rows = (
        PaperAuthor.objects.filter(
            author__subscriptions__user=user,
            paper__added_at__gte=since,
            paper__added_at__lt=until,
            paper__in=visible,
        )
        .select_related("author", "paper")
        .order_by("author__name", "author_id", "-paper__added_at", "-paper_id")
    )
    groups: list[DigestGroup] = []
    paper_ids: set[int] = set()
    # Each tag's papers, then each category's, then each author's.
    by_target: Iterator[tuple[Tag | Category | Author, list[Paper]]] = itertools.chain(
        (
            (tag, [row.paper for row in rows])
            for tag, rows in itertools.groupby(tag_rows, key=lambda row: row.tag)
        ),
        (
            (category, [row.paper for row in rows])
            for category, rows in itertools.groupby(category_rows, key=lambda row: row.category)
        ),
        (
            (author, [row.paper for row in rows])
            for author, rows in itertools.groupby(
                author_rows if follows_authors else [], key=lambda row: row.author
            )
        ),
    )
    for target, papers in by_target:
        paper_ids.update(paper.pk for paper in papers)
        groups.append(
            DigestGroup(
                target=target,
                papers=papers[:DIGEST_PAPERS_PER_GROUP],
                more=max(0, len(papers) - DIGEST_PAPERS_PER_GROUP),
            )
        )
    recommended = digest_recommendations(user=user, until=until)
    prefetch_related_objects(
        [p for group in groups for p in group.papers] + [row.paper for row in recommended],
        "code_links",
    )
    return Digest(groups=groups, paper_count=len(paper_ids), recommended=recommended)


def digest_recommendations(*, user: User, until: datetime.datetime) -> list[Recommendation]:
    """The reader's best recommendations of the last RECOMMENDED_DAYS for a digest:
    never a paper sent to them as a recommendation before, nor one their
    subscriptions bring (those are in the digest's groups, now or before)."""
    in_tags, in_categories, by_authors = _subscribed_filters(user)
    papers = (
        Paper.objects.visible()
        .filter(listed_at__gte=until - datetime.timedelta(days=DIGEST_RECOMMENDED_DAYS))
        .exclude(Exists(in_tags) | Exists(in_categories) | Exists(by_authors))
    )
    sent = RecommendationSent.objects.filter(user=user, paper=OuterRef("paper"))
    return list(
        Recommendation.objects.filter(user=user, paper__in=papers)
        .filter(~Exists(sent))
        .select_related("paper", "because_paper", "because_tag")
        .order_by("-score", "paper_id")[:DIGEST_RECOMMENDED]
    )
