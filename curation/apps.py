from django.apps import AppConfig
from django.db.models.signals import post_migrate


class CurationConfig(AppConfig):
    name = "curation"
    verbose_name = "Curation"

    def ready(self) -> None:
        from curation import signals  # noqa: F401
        from curation.roles import sync_curators_group

        # Sent for this app after every migration has run and after the auth
        # app has made the permissions of every app before it, this one's too.
        post_migrate.connect(sync_curators_group, sender=self, dispatch_uid="sync_curators")
