"""The paper admin gains the enrichment actions: (re)generating summaries; the full texts read."""

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from catalog import curation
from catalog.admin import PaperAdmin
from catalog.models import CurationEvent, FullText, Paper
from core.http import signed_in_user
from enrichment.queue import queue_summaries


def _queue(request: HttpRequest, queryset: QuerySet[Paper], **options: bool) -> None:
    ids = list(queryset.values_list("pk", flat=True))
    queue_summaries(paper_ids=ids, **options)
    how = {
        (False, False): "",
        (True, False): "regenerated, keeping curator edits",
        (True, True): "regenerated, overwriting curator edits",
    }[options.get("regenerate", False), options.get("overwrite_curator", False)]
    curation.record(
        ids, CurationEvent.Action.SUMMARIES_REQUESTED, by=signed_in_user(request), detail=how
    )
    messages.success(request, f"Queued {len(ids)} papers for summaries.")


@admin.action(description="Generate summaries", permissions=["change"])
def generate_summaries(
    modeladmin: PaperAdmin, request: HttpRequest, queryset: QuerySet[Paper]
) -> None:
    _queue(request, queryset)


@admin.action(
    description="Regenerate summaries (overwrite machine output, keep curator edits)",
    permissions=["change"],
)
def regenerate_summaries(
    modeladmin: PaperAdmin, request: HttpRequest, queryset: QuerySet[Paper]
) -> None:
    _queue(request, queryset, regenerate=True)


@admin.action(
    description="Regenerate summaries, overwriting curator edits too", permissions=["change"]
)
def regenerate_summaries_overwriting_curator_edits(
    modeladmin: PaperAdmin, request: HttpRequest, queryset: QuerySet[Paper]
) -> None:
    _queue(request, queryset, regenerate=True, overwrite_curator=True)


SUMMARY_ACTIONS = [
    generate_summaries,
    regenerate_summaries,
    regenerate_summaries_overwriting_curator_edits,
]


class EnrichedPaperAdmin(PaperAdmin):
    actions = [*PaperAdmin.actions, *SUMMARY_ACTIONS]


admin.site.unregister(Paper)
admin.site.register(Paper, EnrichedPaperAdmin)


@admin.register(FullText)
class FullTextAdmin(admin.ModelAdmin):
    """What was read of each paper's text, and why a read failed: the report of
    `fetch_fulltext` that stays. Written by the reader alone."""

    list_display = ["paper", "version", "status", "source", "characters", "fetched_at", "error"]
    list_filter = ["status", "source"]
    search_fields = ["paper__arxiv_id", "error"]
    list_select_related = ["paper"]
    # The text's words (a tsvector of up to 1 MB) are the search's, not a curator's to read.
    readonly_fields = [
        field.name for field in FullText._meta.fields if field.name != "search_document"
    ]

    def get_queryset(self, request: HttpRequest) -> QuerySet[FullText]:
        return super().get_queryset(request).defer("search_document")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: FullText | None = None) -> bool:
        return False
