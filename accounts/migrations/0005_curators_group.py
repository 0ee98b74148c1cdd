"""The "Curators" group: exactly the permissions curating the catalog needs.

Curators are staff users in this group: they add papers (by link too), edit
them with their tags, code links, summaries, authors and preview images,
manage tags and ingest sources and tag rules, review the inbox and readers'
suggestions, and read the ingest runs and the curation log. They delete no
papers (they hide them), no tags and no readers, and change no settings.
"""

from django.contrib.auth.management import create_permissions
from django.db import migrations

GROUP = "Curators"
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
    "accounts": {
        "suggestedpaper": ["view", "change"],
        "suggestion": ["view"],
    },
}


def create_curators(apps, schema_editor):
    # Permissions are otherwise created after all migrations have run; the
    # migration's app registry has no models modules, which that step needs.
    for app_label in PERMISSIONS:
        app_config = apps.get_app_config(app_label)
        borrowed = getattr(app_config, "models_module", None) is None
        if borrowed:
            app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        if borrowed:
            app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.get_or_create(name=GROUP)
    wanted = [
        Permission.objects.get(
            content_type__app_label=app_label, codename=f"{action}_{model}"
        )
        for app_label, models in PERMISSIONS.items()
        for model, actions in models.items()
        for action in actions
    ]
    group.permissions.set(wanted)


def remove_curators(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name=GROUP).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0004_suggestions"),
        ("catalog", "0007_curation"),
        ("ingest", "0004_review_inbox_and_links"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(create_curators, remove_curators)]
