from django.apps import AppConfig
from django.db.models.signals import post_migrate


class CatalogConfig(AppConfig):
    name = "catalog"
    verbose_name = "Catalog"

    def ready(self) -> None:
        from catalog import changes, checks  # noqa: F401
        from catalog.search import ensure_sqlite_index

        post_migrate.connect(ensure_sqlite_index, sender=self, dispatch_uid="catalog_sqlite_fts")
