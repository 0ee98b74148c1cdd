"""The Curators group: exactly the permissions curating the catalog needs.

Curators are staff users in this group: they add papers (by link too), edit
them with their tags, code links, summaries, authors and preview images,
manage tags and ingest sources and tag rules, draft and publish the daily
editions, review the inbox and readers' suggestions, and read the ingest
runs and the curation log. They delete no papers (they hide them), no tags
and no readers, and change no settings.

`migrate` sets the group to exactly these permissions every time it runs: give
anyone more through another group, never by editing this one in admin.
"""

from django.contrib.auth.models import Group, Permission
from django.db.models import Q

CURATORS = "Curators"
PERMISSIONS = {
    "catalog": {
        "paper": ["view", "add", "change"],
        "papertag": ["view", "add", "change", "delete"],
        "codelink": ["view", "add", "change", "delete"],
        "summary": ["view", "add", "change", "delete"],
        "paperauthor": ["view", "add", "change", "delete"],
        "author": ["view", "add", "change"],
        "paperimage": ["view", "delete"],
        "category": ["view"],
        "tag": ["view", "add", "change"],
        "curationevent": ["view"],
    },
    "ingest": {
        "ingestsource": ["view", "add", "change", "delete"],
        "ingestrun": ["view"],
        "tagrule": ["view", "add", "change", "delete"],
        "oaiharvest": ["view"],
        "inboxentry": ["view", "change"],
        "linkrequest": ["view", "add"],
    },
    "curation": {
        "suggestedpaper": ["view", "change"],
        "suggestion": ["view"],
    },
    "editions": {
        "edition": ["view", "add", "change"],
        "editionentry": ["view", "add", "change", "delete"],
    },
}


def sync_curators_group(**kwargs: object) -> Group:
    """The group, with exactly PERMISSIONS (a post_migrate receiver, after
    every app's permissions exist)."""
    group, _ = Group.objects.get_or_create(name=CURATORS)
    wanted = Q(pk__in=[])
    for app_label, models in PERMISSIONS.items():
        for model, actions in models.items():
            wanted |= Q(
                content_type__app_label=app_label,
                content_type__model=model,
                codename__in=[f"{action}_{model}" for action in actions],
            )
    group.permissions.set(Permission.objects.filter(wanted))
    return group
