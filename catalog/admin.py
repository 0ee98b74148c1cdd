from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ActionForm
from django.db.models import Count, Exists, OuterRef, QuerySet
from django.http import HttpRequest
from django.utils.translation import ngettext

from catalog import arxiv_ids, services
from catalog.enrichment.admin_actions import SUMMARY_ACTIONS, CuratorSummaryForm
from catalog.models import (
    Author,
    Category,
    CodeLink,
    Paper,
    PaperAuthor,
    PaperImage,
    PaperTag,
    Summary,
    Tag,
)


class TagActionForm(ActionForm):
    tag = forms.ModelChoiceField(
        queryset=Tag.objects.order_by("name"),
        required=False,
        label="Tag for the add/remove actions",
    )


class PaperAdminForm(forms.ModelForm):
    match_arxiv_id = forms.CharField(
        label="Match to arXiv id",
        required=False,
        help_text=(
            "For a listing without an id: give its arXiv id. If that paper is already in "
            "the catalog, this listing's tags, code links and summaries move onto it."
        ),
    )

    class Meta:
        model = Paper
        fields = [
            "arxiv_id",
            "version",
            "title",
            "abstract",
            "primary_category",
            "categories",
            "comment",
            "journal_ref",
            "doi",
            "published_at",
            "published_precision",
            "updated_at",
            "is_visible",
            "added_at",
        ]

    def clean_arxiv_id(self) -> str | None:
        raw = self.cleaned_data.get("arxiv_id")
        if not raw:
            return None
        normalized = arxiv_ids.normalize(raw)
        if not normalized:
            raise forms.ValidationError("Not an arXiv id (e.g. 2505.15034 or hep-ex/0406020).")
        return normalized

    def clean_match_arxiv_id(self) -> str:
        raw = self.cleaned_data.get("match_arxiv_id", "").strip()
        if not raw:
            return ""
        if self.instance.arxiv_id:
            raise forms.ValidationError("This paper already has an arXiv id.")
        normalized = arxiv_ids.normalize(raw)
        if not normalized:
            raise forms.ValidationError("Not an arXiv id (e.g. 2505.15034 or hep-ex/0406020).")
        return normalized


class HasCodeFilter(admin.SimpleListFilter):
    title = "code"
    parameter_name = "has_code"

    def lookups(self, request, model_admin):
        return [("yes", "With code"), ("no", "Without code")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(has_any_code=True)
        if self.value() == "no":
            return queryset.filter(has_any_code=False)
        return queryset


class CodeLinkInline(admin.TabularInline):
    model = CodeLink
    extra = 0
    fields = ["url", "kind", "source"]


class SummaryInline(admin.StackedInline):
    model = Summary
    form = CuratorSummaryForm
    extra = 0
    fields = [
        ("language", "kind", "status"),
        "body",
        ("backend", "written_by", "model_name", "prompt_version"),
        "curator_edited",
    ]


class PaperTagInline(admin.TabularInline):
    model = PaperTag
    extra = 1
    autocomplete_fields = ["tag"]
    fields = ["tag", "added_at"]
    readonly_fields = ["added_at"]
    verbose_name = "tag"
    verbose_name_plural = "tags"


class PaperAuthorInline(admin.TabularInline):
    model = PaperAuthor
    extra = 0
    autocomplete_fields = ["author"]
    ordering = ["position"]


class PaperImageInline(admin.TabularInline):
    model = PaperImage
    extra = 0
    fields = ["kind", "position", "image", "width", "height"]


@admin.register(Paper)
class PaperAdmin(admin.ModelAdmin):
    form = PaperAdminForm
    action_form = TagActionForm
    list_display = [
        "title",
        "arxiv_id",
        "listed_at",
        "primary_category",
        "tag_list",
        "has_any_code",
        "summary_count",
        "is_visible",
    ]
    list_display_links = ["title"]
    list_select_related = ["primary_category"]
    list_filter = ["is_visible", HasCodeFilter, "tags", "categories", "published_at", "added_at"]
    search_fields = ["=arxiv_id", "title", "author_names"]
    date_hierarchy = "added_at"
    list_per_page = 50
    autocomplete_fields = ["primary_category", "categories"]
    readonly_fields = ["listed_at", "author_names", "merged_into"]
    inlines = [PaperTagInline, CodeLinkInline, SummaryInline, PaperAuthorInline, PaperImageInline]
    actions = ["add_tag", "remove_tag", "hide", "show", *SUMMARY_ACTIONS]
    fieldsets = [
        (None, {"fields": ["arxiv_id", "match_arxiv_id", "version", "title", "abstract"]}),
        ("Authors", {"fields": ["author_names"]}),
        (
            "arXiv metadata",
            {
                "fields": [
                    "primary_category",
                    "categories",
                    "comment",
                    "journal_ref",
                    "doi",
                    ("published_at", "published_precision"),
                    "updated_at",
                ]
            },
        ),
        ("Catalog", {"fields": ["is_visible", "added_at", "listed_at", "merged_into"]}),
    ]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Paper]:
        return (
            super()
            .get_queryset(request)
            .annotate(
                has_any_code=Exists(CodeLink.objects.filter(paper=OuterRef("pk"))),
                summary_count=Count("summaries", distinct=True),
            )
            .prefetch_related("tags")
        )

    def get_readonly_fields(self, request, obj=None):
        # Ids come from arXiv; an id-less listing is matched through match_arxiv_id.
        fields = list(super().get_readonly_fields(request, obj))
        return [*fields, "arxiv_id"] if obj else fields

    def get_fieldsets(self, request, obj=None):
        fieldsets = super().get_fieldsets(request, obj)
        if obj is None or obj.arxiv_id:
            main = [f for f in fieldsets[0][1]["fields"] if f != "match_arxiv_id"]
            return [(None, {"fields": main}), *fieldsets[1:]]
        return fieldsets

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        arxiv_id = form.cleaned_data.get("match_arxiv_id")
        if arxiv_id:
            target = services.match_to_arxiv_id(obj, arxiv_id)
            if target.pk != obj.pk:
                self.message_user(
                    request,
                    f"Merged into arXiv:{arxiv_id}; this listing now redirects there.",
                    messages.SUCCESS,
                )

    @admin.display(description="tags")
    def tag_list(self, obj: Paper) -> str:
        return ", ".join(tag.name for tag in obj.tags.all())

    @admin.display(boolean=True, description="code", ordering="has_any_code")
    def has_any_code(self, obj: Paper) -> bool:
        return obj.has_any_code

    @admin.display(description="summaries", ordering="summary_count")
    def summary_count(self, obj: Paper) -> int:
        return obj.summary_count

    def _chosen_tag(self, request: HttpRequest) -> Tag | None:
        try:
            tag = TagActionForm.base_fields["tag"].clean(request.POST.get("tag"))
        except forms.ValidationError:
            tag = None
        if tag is None:
            self.message_user(request, "Choose a tag first.", messages.ERROR)
        return tag

    @admin.action(description="Add the chosen tag to selected papers")
    def add_tag(self, request: HttpRequest, queryset: QuerySet[Paper]) -> None:
        tag = self._chosen_tag(request)
        if tag is not None:
            added = services.add_tag(queryset, tag)
            message = ngettext(
                "Tagged %(count)d paper with %(tag)s.",
                "Tagged %(count)d papers with %(tag)s.",
                added,
            )
            self.message_user(request, message % {"count": added, "tag": tag}, messages.SUCCESS)

    @admin.action(description="Remove the chosen tag from selected papers")
    def remove_tag(self, request: HttpRequest, queryset: QuerySet[Paper]) -> None:
        tag = self._chosen_tag(request)
        if tag is not None:
            removed = services.remove_tag(queryset, tag)
            message = ngettext(
                "Removed %(tag)s from %(count)d paper.",
                "Removed %(tag)s from %(count)d papers.",
                removed,
            )
            self.message_user(request, message % {"count": removed, "tag": tag}, messages.SUCCESS)

    @admin.action(description="Hide selected papers")
    def hide(self, request: HttpRequest, queryset: QuerySet[Paper]) -> None:
        count = queryset.update(is_visible=False)
        message = ngettext("Hid %(count)d paper.", "Hid %(count)d papers.", count)
        self.message_user(request, message % {"count": count}, messages.SUCCESS)

    @admin.action(description="Show selected papers")
    def show(self, request: HttpRequest, queryset: QuerySet[Paper]) -> None:
        count = queryset.update(is_visible=True)
        message = ngettext("Made %(count)d paper visible.", "Made %(count)d papers visible.", count)
        self.message_user(request, message % {"count": count}, messages.SUCCESS)


@admin.register(Tag)
class TagAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "paper_count", "created_at"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}

    def get_queryset(self, request: HttpRequest) -> QuerySet[Tag]:
        return super().get_queryset(request).annotate(paper_count=Count("papers"))

    @admin.display(description="papers", ordering="paper_count")
    def paper_count(self, obj: Tag) -> int:
        return obj.paper_count


@admin.register(Category)
class CategoryAdmin(admin.ModelAdmin):
    list_display = ["code", "name", "paper_count"]
    search_fields = ["code", "name"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Category]:
        return super().get_queryset(request).annotate(paper_count=Count("papers"))

    @admin.display(description="papers", ordering="paper_count")
    def paper_count(self, obj: Category) -> int:
        return obj.paper_count


@admin.register(Author)
class AuthorAdmin(admin.ModelAdmin):
    list_display = ["name", "paper_count"]
    search_fields = ["name", "normalized_name"]
    readonly_fields = ["normalized_name"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Author]:
        return super().get_queryset(request).annotate(paper_count=Count("papers"))

    @admin.display(description="papers", ordering="paper_count")
    def paper_count(self, obj: Author) -> int:
        return obj.paper_count


@admin.register(Summary)
class SummaryAdmin(admin.ModelAdmin):
    form = CuratorSummaryForm
    list_display = [
        "paper",
        "language",
        "kind",
        "backend",
        "status",
        "curator_edited",
        "updated_at",
    ]
    list_select_related = ["paper"]
    list_filter = ["language", "kind", "backend", "status", "curator_edited"]
    search_fields = ["paper__title", "=paper__arxiv_id", "body"]
    autocomplete_fields = ["paper"]
