from typing import TYPE_CHECKING, Any, TypedDict

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ActionForm
from django.contrib.admin.widgets import AutocompleteSelectMultiple
from django.db.models import Count, Prefetch, QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from catalog.models import Paper, Tag
from core.forms import choice_field
from core.http import signed_in_user
from curation import suggestions
from curation.models import SuggestedPaper, Suggestion

if TYPE_CHECKING:
    from core.typing import WithAnnotations

# The admin's home opens with the curator's desk (curation/desk.py).
admin.site.index_template = "admin/desk_index.html"


class ReaderCount(TypedDict):
    """What SuggestedPaperAdmin.get_queryset gives each row."""

    reader_count: int


# Shown, never edited: what the reader sent.
SUGGESTION_FIELDS = ("user", "link", "tag", "note", "created_at")


class SuggestionInline(admin.TabularInline):
    model = Suggestion
    extra = 0
    fields = readonly_fields = SUGGESTION_FIELDS
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: SuggestedPaper | None = None) -> bool:
        return False


class SuggestionActionForm(ActionForm):
    tags = forms.ModelMultipleChoiceField(
        queryset=Tag.objects.all(),
        required=False,
        widget=AutocompleteSelectMultiple(Paper._meta.get_field("tags"), admin.site),
        label="Tags to add with",
    )
    reason = forms.CharField(
        required=False, max_length=500, label="Reason to decline (readers see it)"
    )


@admin.register(SuggestedPaper)
class SuggestedPaperAdmin(admin.ModelAdmin):
    """Readers' suggestions, one row a paper with how many readers suggested it."""

    action_form = SuggestionActionForm
    list_display = [
        "arxiv_link",
        "title",
        "reader_count",
        "suggested_tags",
        "notes",
        "state",
        "last_suggested_at",
    ]
    list_filter = ["state"]
    search_fields = ["=arxiv_id", "suggestions__note", "paper__title"]
    readonly_fields = [
        "arxiv_id",
        "state",
        "paper",
        "decline_reason",
        "reviewed_by",
        "reviewed_at",
        "link_request",
        "created_at",
        "last_suggested_at",
    ]
    inlines = [SuggestionInline]
    actions = ["approve", "decline"]
    list_per_page = 50

    def get_queryset(self, request: HttpRequest) -> QuerySet[SuggestedPaper]:
        rows: QuerySet[SuggestedPaper] = super().get_queryset(request)
        return (
            rows.select_related("paper")
            .annotate(reader_count=Count("suggestions"))
            .prefetch_related(
                Prefetch("suggestions", queryset=Suggestion.objects.select_related("tag"))
            )
        )

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions

    @admin.display(description="arXiv id", ordering="arxiv_id")
    def arxiv_link(self, suggested: SuggestedPaper) -> str:
        return format_html('<a href="{}">{}</a>', suggested.abs_url, suggested.arxiv_id)

    @admin.display(description="title")
    def title(self, suggested: SuggestedPaper) -> str:
        return suggested.paper.title if suggested.paper else ""

    @admin.display(description="readers", ordering="reader_count")
    def reader_count(self, suggested: "WithAnnotations[SuggestedPaper, ReaderCount]") -> int:
        return suggested.reader_count

    @admin.display(description="tags suggested")
    def suggested_tags(self, suggested: SuggestedPaper) -> str:
        names = {s.tag.name for s in suggested.suggestions.all() if s.tag}
        return ", ".join(sorted(names))

    @admin.display(description="notes")
    def notes(self, suggested: SuggestedPaper) -> str:
        return format_html_join(
            "", "<p>{}</p>", ((s.note,) for s in suggested.suggestions.all() if s.note)
        )

    @admin.action(
        description="Approve: add from arXiv with the chosen tags", permissions=["change"]
    )
    def approve(self, request: HttpRequest, queryset: QuerySet[SuggestedPaper]) -> None:
        form = self._action_form(request)
        if form is None:
            return
        link_request = suggestions.approve(
            suggested=queryset, tags=list(form.cleaned_data["tags"]), by=signed_in_user(request)
        )
        if link_request is None:
            self.message_user(request, "Those papers are already added.", messages.WARNING)
            return
        url = reverse("admin:ingest_linkrequest_change", args=[link_request.pk])
        self.message_user(
            request,
            format_html(
                'Adding {} papers from arXiv: <a href="{}">follow the progress</a>.',
                link_request.ids_total,
                url,
            ),
            messages.SUCCESS,
        )

    @admin.action(description="Decline with the reason given", permissions=["change"])
    def decline(self, request: HttpRequest, queryset: QuerySet[SuggestedPaper]) -> None:
        form = self._action_form(request)
        if form is None:
            return
        reason = " ".join(form.cleaned_data["reason"].split())
        if not reason:
            self.message_user(
                request, "Give a reason: the readers who suggested it see it.", messages.ERROR
            )
            return
        count = suggestions.decline(suggested=queryset, reason=reason, by=signed_in_user(request))
        self.message_user(request, f"Declined {count} suggestions.", messages.SUCCESS)

    def _action_form(self, request: HttpRequest) -> SuggestionActionForm | None:
        form = SuggestionActionForm(request.POST)
        choice_field(form, "action").choices = self.get_action_choices(request)
        if not form.is_valid():
            # Each error comes as its message (ErrorList), whatever the stubs allow.
            errors = "; ".join(
                f"{name}: {' '.join(map(str, e))}" for name, e in form.errors.items()
            )
            self.message_user(request, f"Check the form: {errors}", messages.ERROR)
            return None
        return form
