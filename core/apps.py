from django.apps import AppConfig, apps
from django.db.models.signals import post_migrate


class CoreConfig(AppConfig):
    name = "core"
    verbose_name = "Core"

    def ready(self) -> None:
        from core.schedule import sync_beat_schedule

        # post_migrate comes once per app with models, after every migration
        # has run: beat's own is the one to answer.
        post_migrate.connect(
            sync_beat_schedule,
            sender=apps.get_app_config("django_celery_beat"),
            dispatch_uid="sync_beat_schedule",
        )
