from django.contrib import admin
from django.http import HttpRequest

from ingest import tasks
from ingest.models import IngestRun, IngestSource, OaiHarvest, TagRule


class ReadOnlyAdmin(admin.ModelAdmin):
    """Records written by ingest itself: viewable, never edited by hand."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


@admin.register(IngestSource)
class IngestSourceAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "query",
        "enabled",
        "interval_minutes",
        "max_results",
        "last_success_at",
        "claimed_at",
    ]
    list_filter = ["enabled"]
    search_fields = ["name", "query"]
    filter_horizontal = ["tags"]
    readonly_fields = ["last_success_at", "claimed_at"]
    actions = ["run_now"]

    @admin.action(description="Run now", permissions=["change"])
    def run_now(self, request: HttpRequest, queryset) -> None:
        source_ids = list(queryset.values_list("pk", flat=True))
        for source_id in source_ids:
            tasks.queue_source_run(source_id=source_id)
        self.message_user(
            request,
            f"Queued {len(source_ids)} source run(s); their results appear under Ingest runs.",
        )


@admin.register(IngestRun)
class IngestRunAdmin(ReadOnlyAdmin):
    list_display = [
        "started_at",
        "source",
        "query",
        "kind",
        "status",
        "fetched",
        "created",
        "updated",
        "unchanged",
        "skipped",
        "finished_at",
    ]
    list_select_related = ["source"]
    list_filter = ["status", "kind", "source"]
    date_hierarchy = "started_at"


@admin.register(TagRule)
class TagRuleAdmin(admin.ModelAdmin):
    list_display = ["tag", "keyword_list", "categories", "enabled"]
    list_select_related = ["tag"]
    list_filter = ["enabled"]
    search_fields = ["tag__name", "keywords", "categories"]
    actions = ["reapply"]

    @admin.display(description="keywords")
    def keyword_list(self, rule: TagRule) -> str:
        return ", ".join(line.strip() for line in rule.keywords.splitlines() if line.strip())

    @admin.action(description="Re-apply to the whole catalog", permissions=["change"])
    def reapply(self, request: HttpRequest, queryset) -> None:
        tasks.queue_tag_rules(rule_ids=list(queryset.values_list("pk", flat=True)))
        self.message_user(request, "Queued: the selected rules will tag matching papers shortly.")


@admin.register(OaiHarvest)
class OaiHarvestAdmin(ReadOnlyAdmin):
    list_display = [
        "set_spec",
        "from_date",
        "until_date",
        "records",
        "completed",
        "started_at",
        "updated_at",
    ]
    list_filter = ["completed"]
