"""Readers of the benchmark catalog: 2,000 users with 1 to 30 subscriptions each.

Run by bench.corpus through Django (DATABASE_URL on the benchmark database),
so users and profiles get whatever defaults their models give. Reader 1 has
30 subscriptions, two thirds tags and one third categories, and 200 saved
papers, some of them on the first pages; prints the row counts as JSON.
"""

import json
import os

import django
import numpy as np

READERS = 2_000
SAVED = 200
SEED = 20260102


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    from django.contrib.auth import get_user_model
    from django.db import transaction

    from accounts.models import Profile, Subscription
    from bench.corpus import zipf
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
    print(
        json.dumps(
            {
                "auth_user": len(users),
                "accounts_profile": len(users),
                "accounts_subscription": len(subscriptions),
                "accounts_savedpaper": saved,
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


if __name__ == "__main__":
    main()
