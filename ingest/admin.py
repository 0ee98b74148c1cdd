from django.contrib import admin
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join
from django.utils.translation import ngettext

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
        "listing_categories",
        "enabled",
        "interval_minutes",
        "max_results",
        "last_success_at",
        "listed_through",
        "claimed_at",
    ]
    list_filter = ["enabled"]
    search_fields = ["name", "query"]
    filter_horizontal = ["tags"]
    readonly_fields = ["last_success_at", "listed_through", "awaited", "claimed_at", "recent_runs"]
    actions = ["run_now", "read_listing_now"]

    @admin.display(description="awaited papers")
    def awaited(self, source: IngestSource) -> str:
        """Papers a listing announced that the API has not given yet."""
        return " ".join(sorted(source.awaiting)) or "None."

    @admin.display(description="recent runs")
    def recent_runs(self, source: IngestSource) -> str:
        """The last runs with their counts, a running one's growing batch by batch."""
        runs = IngestRun.objects.filter(source=source).order_by("-started_at")[:10]
        if not runs:
            return "No run yet."
        columns = ["started_at", "status", *IngestRun.COUNT_FIELDS, "finished_at"]
        head = format_html_join("", "<th>{}</th>", ((name.replace("_", " "),) for name in columns))
        rows = format_html_join(
            "",
            "<tr>{}</tr>",
            (
                (
                    format_html_join(
                        "",
                        "<td>{}</td>",
                        (
                            (run.get_status_display() if name == "status" else getattr(run, name),)
                            for name in columns
                        ),
                    ),
                )
                for run in runs
            ),
        )
        return format_html("<table><thead><tr>{}</tr></thead><tbody>{}</tbody></table>", head, rows)

    @admin.action(description="Read the latest listing now", permissions=["change"])
    def read_listing_now(self, request: HttpRequest, queryset) -> None:
        source_ids = list(queryset.exclude(listing_categories="").values_list("pk", flat=True))
        for source_id in source_ids:
            tasks.queue_listing_read(source_id=source_id)
        self.message_user(
            request,
            ngettext(
                "Queued %(count)d listing read; sources without listing categories are skipped.",
                "Queued %(count)d listing reads; sources without listing categories are skipped.",
                len(source_ids),
            )
            % {"count": len(source_ids)},
        )

    @admin.action(description="Run now", permissions=["change"])
    def run_now(self, request: HttpRequest, queryset) -> None:
        source_ids = list(queryset.values_list("pk", flat=True))
        for source_id in source_ids:
            tasks.queue_source_run(source_id=source_id)
        self.message_user(
            request,
            ngettext(
                "Queued %(count)d source run; its progress shows on the source's page.",
                "Queued %(count)d source runs; their progress shows on each source's page.",
                len(source_ids),
            )
            % {"count": len(source_ids)},
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
