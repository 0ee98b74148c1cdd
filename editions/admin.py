from typing import Any

from django.contrib import admin, messages
from django.db import models
from django.db.models import QuerySet
from django.forms import ModelForm, Textarea
from django.http import HttpRequest
from django.utils.html import format_html
from django.utils.translation import ngettext

from catalog.latex import latex_to_text
from core.http import signed_in_user
from editions import services
from editions.models import Edition, EditionEntry


class EditionEntryInline(admin.TabularInline):
    """The edition's papers, drafted from its day's: curators order, pin and
    note them, or take one out; a paper of another day is never shown."""

    model = EditionEntry
    fields = ["position", "pinned", "paper_title", "note"]
    readonly_fields = ["paper_title"]
    formfield_overrides = {models.TextField: {"widget": Textarea(attrs={"rows": 2, "cols": 60})}}
    extra = 0

    def get_queryset(self, request: HttpRequest) -> QuerySet[EditionEntry]:
        # Each row names its edition and paper: all of them in the rows' own query.
        return super().get_queryset(request).select_related("edition", "paper")

    def has_add_permission(self, request: HttpRequest, obj: Edition | None = None) -> bool:
        return False

    @admin.display(description="paper")
    def paper_title(self, entry: EditionEntry) -> str:
        return format_html(
            '<a href="{}">{}</a>', entry.paper.get_absolute_url(), latex_to_text(entry.paper.title)
        )


@admin.register(Edition)
class EditionAdmin(admin.ModelAdmin):
    list_display = ["date", "state", "published_at", "published_by"]
    list_filter = ["state"]
    date_hierarchy = "date"
    fields = ["date", "note", "state", "published_at", "published_by"]
    readonly_fields = ["state", "published_at", "published_by"]
    inlines = [EditionEntryInline]
    actions = ["draft_entries", "publish", "unpublish"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Edition]:
        return super().get_queryset(request).select_related("published_by")

    def save_related(
        self, request: HttpRequest, form: ModelForm, formsets: Any, change: bool
    ) -> None:
        super().save_related(request, form, formsets, change)
        if not change:
            # A new edition drafts its entries from its day's papers by itself.
            services.draft_entries(edition=form.instance)

    @admin.action(
        description="Add the day's papers missing from selected editions", permissions=["change"]
    )
    def draft_entries(self, request: HttpRequest, queryset: QuerySet[Edition]) -> None:
        added = sum(services.draft_entries(edition=edition) for edition in queryset)
        message = ngettext("Added %(count)d paper.", "Added %(count)d papers.", added)
        self.message_user(request, message % {"count": added}, messages.SUCCESS)

    @admin.action(description="Publish selected editions", permissions=["change"])
    def publish(self, request: HttpRequest, queryset: QuerySet[Edition]) -> None:
        by = signed_in_user(request)
        editions = list(queryset)
        for edition in editions:
            services.publish(edition=edition, by=by)
        message = ngettext(
            "Published %(count)d edition.", "Published %(count)d editions.", len(editions)
        )
        self.message_user(request, message % {"count": len(editions)}, messages.SUCCESS)

    @admin.action(description="Return selected editions to drafts", permissions=["change"])
    def unpublish(self, request: HttpRequest, queryset: QuerySet[Edition]) -> None:
        by = signed_in_user(request)
        editions = list(queryset)
        for edition in editions:
            services.unpublish(edition=edition, by=by)
        message = ngettext(
            "Returned %(count)d edition to draft.",
            "Returned %(count)d editions to drafts.",
            len(editions),
        )
        self.message_user(request, message % {"count": len(editions)}, messages.SUCCESS)
