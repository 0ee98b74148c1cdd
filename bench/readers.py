"""Readers of the benchmark catalog: 2,000 users with 1 to 30 subscriptions each.

Run by bench.corpus through Django (DATABASE_URL on the benchmark database),
so users and profiles get whatever defaults their models give. Reader 1 has
30 subscriptions, two thirds tags and one third categories, and 200 saved
papers, some of them on the first pages. Each reader also
leaves 0 to 20 synthetic trending signals (saves, suggestions, feed clicks)
over the last 30 days on recent papers, the newest most often, and the
trending scores are computed once from them; then come what the nightly
discovery jobs leave (recommendations, similar papers), and a vacuum as
autovacuum would run one. Prints the row counts as JSON.
"""

import datetime
import json
import os

import django
import numpy as np

READERS = 2_000
SAVED = 200
# Signals fall on the newest papers, Zipf-distributed over this many of them.
SIGNALLED_PAPERS = 20_000
SIGNALS_PER_READER = 20
RECENT = 50_000
RECOMMENDED = 470
SIMILAR_PAPERS = 20_000
SIMILAR = 10
SEED = 20260102


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction

    from accounts.models import Profile, Subscription
    from bench.corpus import zipf
    from catalog import trending
    from catalog.models import Category, Tag

    rng = np.random.default_rng(SEED)
    tag_ids = list(Tag.objects.order_by("pk").values_list("pk", flat=True))
    category_ids = list(Category.objects.order_by("pk").values_list("pk", flat=True))
    User = get_user_model()
    with transaction.atomic():
        users = User.objects.bulk_create(
            User(username=f"reader{n}", email=f"reader{n}@example.org", password="!")  # noqa: S106 - "!" is an unusable password
            for n in range(1, READERS + 1)
        )
        Profile.objects.bulk_create(Profile(user=user) for user in users)
        subscriptions = []
        for n, user in enumerate(users):
            wanted = 30 if n == 0 else int(rng.integers(1, 31))
            in_categories = wanted // 3
            # The busiest tags and categories (the first ids) are followed most.
            for i in zipf(rng, wanted - in_categories, len(tag_ids), 0.8, replace=False):
                subscriptions.append(Subscription(user=user, tag_id=tag_ids[i]))
            for i in zipf(rng, in_categories, len(category_ids), 1.0, replace=False):
                subscriptions.append(Subscription(user=user, category_id=category_ids[i]))
        Subscription.objects.bulk_create(subscriptions, batch_size=5_000)
        saved = save_papers(users[0], rng=rng)
        signals = reader_signals(rng, users)
    trending.refresh_trending()
    recommended, similar = discovery_rows(rng, users)
    # What autovacuum does soon after, with the catalog's settings (catalog
    # migration 0013): statistics of the new rows, and the rewritten pages
    # of the newest papers marked all-visible again.
    with connection.cursor() as cursor:
        cursor.execute("VACUUM (ANALYZE)")
    print(
        json.dumps(
            {
                "auth_user": len(users),
                "accounts_profile": len(users),
                "accounts_subscription": len(subscriptions),
                "accounts_savedpaper": saved,
                "catalog_readersignal": signals,
                "accounts_recommendation": recommended,
                "catalog_similarpaper": similar,
            }
        )
    )


def save_papers(user, *, rng) -> int:
    """Reader 1 saves 200 papers among the newest 10,000, so lists show saved ones."""
    from accounts.models import SavedPaper
    from catalog.models import Paper

    newest = list(Paper.objects.order_by("-id").values_list("pk", flat=True)[:10_000])
    chosen = rng.choice(len(newest), size=min(SAVED, len(newest)), replace=False)
    SavedPaper.objects.bulk_create(SavedPaper(user=user, paper_id=newest[i]) for i in chosen)
    return len(chosen)


def reader_signals(rng: np.random.Generator, users: list) -> int:
    """Synthetic saves, suggestions and feed clicks of the readers; returns how many."""
    from django.utils import timezone

    from bench.corpus import zipf
    from catalog.models import NEWEST_FIRST, Paper, ReaderSignal

    newest = list(
        Paper.objects.visible()
        .order_by(*NEWEST_FIRST)
        .values_list("pk", flat=True)[:SIGNALLED_PAPERS]
    )
    kinds = [ReaderSignal.Kind.SAVE, ReaderSignal.Kind.SUGGEST, ReaderSignal.Kind.CLICK]
    now = timezone.now()
    signals = []
    for user in users:
        count = min(int(rng.integers(0, SIGNALS_PER_READER + 1)), len(newest))
        for i in zipf(rng, count, len(newest), 0.9, replace=False):
            seconds = float(rng.uniform(0, 30 * 24 * 3600))
            signals.append(
                ReaderSignal(
                    paper_id=newest[i],
                    reader=user,
                    kind=kinds[int(rng.choice(3, p=[0.5, 0.1, 0.4]))],
                    created_at=now - datetime.timedelta(seconds=seconds),
                )
            )
    ReaderSignal.objects.bulk_create(signals, batch_size=5_000)
    return len(signals)


def discovery_rows(rng: np.random.Generator, users: list) -> tuple[int, int]:
    """What the nightly discovery jobs leave: RECOMMENDED rows a reader over the
    newest RECENT papers (the For-you tab), and SIMILAR neighbours for each of
    the newest SIMILAR_PAPERS papers (the paper page measures one of them)."""
    from django.db import transaction
    from django.utils import timezone

    from accounts.models import Profile
    from catalog.models import Paper, SimilarPaper
    from discovery.models import Recommendation

    recent = np.asarray(
        Paper.objects.visible().order_by("-id").values_list("pk", flat=True)[:RECENT]
    )
    if len(recent) < 2:
        return 0, 0
    now = timezone.now()
    recommended = 0
    with transaction.atomic():
        for user in users:
            chosen = rng.choice(recent, size=min(RECOMMENDED, len(recent)), replace=False)
            scores = rng.uniform(0.2, 0.9, size=len(chosen))
            Recommendation.objects.bulk_create(
                Recommendation(
                    user=user,
                    paper_id=int(pk),
                    score=float(score),
                    because_paper_id=int(recent[-1]),
                    computed_at=now,
                )
                for pk, score in zip(chosen, scores, strict=True)
            )
            recommended += len(chosen)
        rows = []
        for pk in recent[:SIMILAR_PAPERS]:
            others = rng.choice(recent, size=SIMILAR + 1, replace=False)
            others = [int(o) for o in others if o != pk][:SIMILAR]
            rows.extend(
                SimilarPaper(
                    paper_id=int(pk),
                    similar_id=other,
                    rank=rank,
                    score=1.0 - rank / 20,
                    terms=["reasoning", "agents"],
                    computed_at=now,
                )
                for rank, other in enumerate(others, 1)
            )
        SimilarPaper.objects.bulk_create(rows, batch_size=10_000)
        Profile.objects.update(recommended_at=now)
    return recommended, len(rows)


if __name__ == "__main__":
    main()
