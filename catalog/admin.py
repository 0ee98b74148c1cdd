from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypedDict, TypeGuard

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ActionForm
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import AnonymousUser, User
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import PermissionDenied
from django.db import models
from django.db.models import Count, Exists, OuterRef, QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.translation import ngettext

from catalog import arxiv_ids, counts, curation, services
from catalog.models import (
    Author,
    Category,
    CodeLink,
    CurationEvent,
    Paper,
    PaperAuthor,
    PaperImage,
    PaperProvenance,
    PaperTag,
    Summary,
    Tag,
    tag_label,
)
from catalog.names import normalize_name
from core.http import signed_in_user

if TYPE_CHECKING:
    from catalog.counts import CountedCategory, CountedTag, PaperCount
    from core.typing import FieldsetSpec, WithAnnotations

# Entries of a paper's history page, of each kind, newest kept.
HISTORY_LIMIT = 1000


class PaperListRow(TypedDict):
    """What PaperAdmin.get_queryset adds to each paper."""

    has_any_code: bool
    summary_count: int


def editable_tags(user: User | AnonymousUser) -> QuerySet[Tag]:
    """The tags a staff user may put on papers and take off: every tag for those
    who may change papers, otherwise the tags naming them as editors."""
    if user.has_perm("catalog.change_paper"):
        return Tag.objects.all()
    return Tag.objects.filter(editors=user) if user.is_authenticated else Tag.objects.none()


def is_tag_editor(user: User | AnonymousUser) -> TypeGuard[User]:
    return user.is_authenticated and user.is_staff and Tag.objects.filter(editors=user).exists()


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
    source_url = forms.URLField(
        label="Page at its source",
        required=False,
        max_length=500,
        assume_scheme="https",
        help_text="For a paper not from arXiv: its page at the publisher or venue.",
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
            "source_url",
            "published_at",
            "published_precision",
            "updated_at",
            "is_visible",
            "added_at",
        ]

    def save(self, commit: bool = True) -> Paper:
        # Made visible by hand, a paper waiting for review (or rejected) is published.
        if self.instance.is_visible and self.instance.review != Paper.Review.PUBLISHED:
            self.instance.review = Paper.Review.PUBLISHED
        paper: Paper = super().save(commit=commit)
        return paper

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


class CuratorSummaryForm(forms.ModelForm):
    """A summary whose text a curator changes is theirs: regeneration leaves it alone."""

    class Meta:
        model = Summary
        fields = [
            "paper",
            "language",
            "kind",
            "status",
            "body",
            "backend",
            "written_by",
            "model_name",
            "prompt_version",
            "curator_edited",
        ]

    def save(self, commit: bool = True) -> Summary:
        if "body" in self.changed_data:
            self.instance.curator_edited = True
        summary: Summary = super().save(commit=commit)
        return summary


class HasCodeFilter(admin.SimpleListFilter):
    title = "code"
    parameter_name = "has_code"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        return [("yes", "With code"), ("no", "Without code")]

    def queryset(
        self, request: HttpRequest, queryset: "QuerySet[WithAnnotations[Paper, PaperListRow]]"
    ) -> QuerySet[Paper]:
        if self.value() == "yes":
            return queryset.filter(has_any_code=True)
        if self.value() == "no":
            return queryset.filter(has_any_code=False)
        return queryset


class CodeLinkInline(admin.TabularInline):
    model = CodeLink
    extra = 0
    fields = ["url", "kind", "source"]
    # A link typed without a scheme is read as https, as code hosts serve it.
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}


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
    # The title gets the room (admin-papers.css); the rest is short: the day, codes, names.
    list_display = [
        "title",
        "arxiv_id",
        "listed_on",
        "primary_category",
        "tag_list",
        "has_any_code",
        "summary_count",
        "is_visible",
    ]
    list_display_links = ["title"]
    list_select_related = ["primary_category"]
    list_filter = [
        "is_visible",
        "review",
        HasCodeFilter,
        "tags",
        "categories",
        "published_at",
        "added_at",
    ]
    search_fields = ["=arxiv_id", "title", "author_names"]
    date_hierarchy = "added_at"
    list_per_page = 50
    autocomplete_fields = ["primary_category", "categories"]
    readonly_fields = [
        "listed_at",
        "author_names",
        "merged_into",
        "review",
        "provenance_record",
        "source_key",
    ]
    inlines = [
        PaperTagInline,
        CodeLinkInline,
        SummaryInline,
        PaperAuthorInline,
        PaperImageInline,
    ]
    actions = ["add_tag", "remove_tag", "hide", "show", "publish_draft_summaries"]
    change_list_template = "admin/catalog/paper/change_list.html"
    object_history_template = "admin/catalog/paper/object_history.html"
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
        ("Source", {"fields": ["source_key", "source_url"]}),
        (
            "Catalog",
            {"fields": ["is_visible", "review", "added_at", "listed_at", "merged_into"]},
        ),
    ]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Paper]:
        papers: QuerySet[Paper] = super().get_queryset(request)
        return papers.annotate(
            has_any_code=Exists(CodeLink.objects.filter(paper=OuterRef("pk"))),
            summary_count=Count("summaries", distinct=True),
        ).prefetch_related("tags")

    def get_readonly_fields(self, request: HttpRequest, obj: Paper | None = None) -> list[str]:
        # Ids come from arXiv; an id-less listing is matched through match_arxiv_id.
        fields = list(super().get_readonly_fields(request, obj))
        return [*fields, "arxiv_id"] if obj else fields

    def get_fieldsets(self, request: HttpRequest, obj: Paper | None = None) -> "FieldsetSpec":
        fieldsets = super().get_fieldsets(request, obj)
        if obj is not None and PaperProvenance.objects.filter(paper=obj).exists():
            fieldsets = [
                *fieldsets,
                ("Provenance of the metadata", {"fields": ["provenance_record"]}),
            ]
        if obj is None or obj.arxiv_id:
            main = [f for f in fieldsets[0][1]["fields"] if f != "match_arxiv_id"]
            return [(None, {"fields": main}), *fieldsets[1:]]
        return fieldsets

    @admin.display(description="where the arXiv facts came from")
    def provenance_record(self, paper: Paper) -> str:
        """The record of facts not read from arXiv (the demo's): shown, never edited."""
        provenance = PaperProvenance.objects.filter(paper=paper).first()
        if provenance is None:
            return "-"
        sources = format_html_join(
            "",
            '<li><a href="{}" rel="noreferrer">{}</a></li>',
            ((url, url) for url in provenance.sources if url.startswith(("https://", "http://"))),
        )
        replaced = (
            f"Replaced by arXiv's data on {provenance.replaced_at:%Y-%m-%d %H:%M} UTC."
            if provenance.replaced_at
            else "Not yet read from arXiv: these facts are shown to readers as they are."
        )
        return format_html(
            "<p>{} (recorded {}). Confidence: {}.</p><ul>{}</ul><p>{}</p><p>{}</p>",
            provenance.gathered_by,
            f"{provenance.recorded_at:%Y-%m-%d}",
            provenance.confidence or "none (not found)",
            sources,
            provenance.notes,
            replaced,
        )

    def has_module_permission(self, request: HttpRequest) -> bool:
        return super().has_module_permission(request) or is_tag_editor(request.user)

    def has_view_permission(self, request: HttpRequest, obj: Paper | None = None) -> bool:
        return super().has_view_permission(request, obj) or is_tag_editor(request.user)

    def has_tag_permission(self, request: HttpRequest) -> bool:
        """Curators tag papers; a tag's editors put their tags on and take them off."""
        return self.has_change_permission(request) or is_tag_editor(request.user)

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        response = super().changelist_view(request, extra_context)
        action_form = getattr(response, "context_data", {}).get("action_form")
        if action_form is not None:
            action_form.fields["tag"].queryset = editable_tags(request.user).order_by("name")
        return response

    def history_view(
        self, request: HttpRequest, object_id: str, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        """Django's history of form edits, and the curation actions, in one list."""
        response = super().history_view(request, object_id, extra_context)
        if not isinstance(response, TemplateResponse) or response.context_data is None:
            return response
        paper = response.context_data["object"]
        edits = LogEntry.objects.filter(
            content_type=ContentType.objects.get_for_model(Paper), object_id=str(paper.pk)
        ).select_related("user")
        events = CurationEvent.objects.filter(paper=paper).select_related("user")
        rows = [
            (entry.action_time, entry.user.get_username(), entry.get_change_message())
            for entry in edits.order_by("-action_time")[:HISTORY_LIMIT]
        ] + [
            (
                event.created_at,
                event.who,
                ": ".join(filter(None, [event.get_action_display().capitalize(), event.detail])),
            )
            for event in events[:HISTORY_LIMIT]
        ]
        response.context_data["history"] = sorted(rows, key=lambda row: row[0])
        return response

    def save_model(
        self, request: HttpRequest, obj: Paper, form: PaperAdminForm, change: bool
    ) -> None:
        super().save_model(request, obj, form, change)
        arxiv_id = form.cleaned_data.get("match_arxiv_id")
        if arxiv_id:
            target = services.match_to_arxiv_id(obj, arxiv_id)
            if target.pk != obj.pk:
                merged = CurationEvent.Action.MERGED
                by = signed_in_user(request)
                curation.record([obj.pk], merged, by=by, detail=f"into arXiv:{arxiv_id}")
                curation.record(
                    [target.pk], merged, by=by, detail=f"listing #{obj.pk} merged into it"
                )
                self.message_user(
                    request,
                    f"Merged into arXiv:{arxiv_id}; this listing now redirects there.",
                    messages.SUCCESS,
                )

    def save_related(
        self,
        request: HttpRequest,
        form: PaperAdminForm,
        formsets: Iterable[forms.BaseFormSet],
        change: bool,
    ) -> None:
        super().save_related(request, form, formsets, change)
        services.refresh_author_names(form.instance)

    class Media:
        css = {"all": ["css/admin-papers.css"]}

    @admin.display(description="listed", ordering="listed_at")
    def listed_on(self, obj: Paper) -> str:
        return obj.listed_at.strftime("%Y-%m-%d") if obj.listed_at else "-"

    @admin.display(description="tags")
    def tag_list(self, obj: Paper) -> str:
        return ", ".join(tag_label(tag.name) for tag in obj.tags.all())

    @admin.display(boolean=True, description="code", ordering="has_any_code")
    def has_any_code(self, obj: "WithAnnotations[Paper, PaperListRow]") -> bool:
        return obj.has_any_code

    @admin.display(description="summaries", ordering="summary_count")
    def summary_count(self, obj: "WithAnnotations[Paper, PaperListRow]") -> int:
        return obj.summary_count

    def _chosen_tag(self, request: HttpRequest) -> Tag | None:
        field = forms.ModelChoiceField(queryset=editable_tags(request.user), required=False)
        try:
            tag: Tag | None = field.clean(request.POST.get("tag"))
        except forms.ValidationError:
            tag = None
        if tag is None:
            self.message_user(request, "Choose a tag first.", messages.ERROR)
        return tag

    @admin.action(description="Add the chosen tag to selected papers", permissions=["tag"])
    def add_tag(self, request: HttpRequest, queryset: QuerySet[Paper]) -> None:
        tag = self._chosen_tag(request)
        if tag is not None:
            added = len(curation.add_tags(queryset, [tag], by=signed_in_user(request)))
            message = ngettext(
                "Tagged %(count)d paper with %(tag)s.",
                "Tagged %(count)d papers with %(tag)s.",
                added,
            )
            self.message_user(request, message % {"count": added, "tag": tag}, messages.SUCCESS)

    @admin.action(description="Remove the chosen tag from selected papers", permissions=["tag"])
    def remove_tag(self, request: HttpRequest, queryset: QuerySet[Paper]) -> None:
        tag = self._chosen_tag(request)
        if tag is not None:
            removed = len(curation.remove_tag(queryset, tag, by=signed_in_user(request)))
            message = ngettext(
                "Removed %(tag)s from %(count)d paper.",
                "Removed %(tag)s from %(count)d papers.",
                removed,
            )
            self.message_user(request, message % {"count": removed, "tag": tag}, messages.SUCCESS)

    @admin.action(description="Hide selected papers", permissions=["change"])
    def hide(self, request: HttpRequest, queryset: QuerySet[Paper]) -> None:
        count = len(curation.hide(queryset, by=signed_in_user(request)))
        message = ngettext("Hid %(count)d paper.", "Hid %(count)d papers.", count)
        self.message_user(request, message % {"count": count}, messages.SUCCESS)

    @admin.action(description="Show selected papers", permissions=["change"])
    def show(self, request: HttpRequest, queryset: QuerySet[Paper]) -> None:
        count = len(curation.show(queryset, by=signed_in_user(request)))
        message = ngettext("Made %(count)d paper visible.", "Made %(count)d papers visible.", count)
        self.message_user(request, message % {"count": count}, messages.SUCCESS)

    @admin.action(
        description="Publish the draft summaries of selected papers", permissions=["change"]
    )
    def publish_draft_summaries(self, request: HttpRequest, queryset: QuerySet[Paper]) -> None:
        count = curation.publish_summaries(
            Summary.objects.filter(paper__in=queryset), by=signed_in_user(request)
        )
        message = ngettext(
            "Published %(count)d draft summary.", "Published %(count)d draft summaries.", count
        )
        self.message_user(request, message % {"count": count}, messages.SUCCESS)


@admin.register(Tag)
class TagAdmin(admin.ModelAdmin):
    """Curators manage every tag; a tag's editors see their tags and edit only the description."""

    list_display = ["name", "slug", "paper_count", "created_at"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    autocomplete_fields = ["editors"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Tag]:
        tags = counts.with_tag_counts(super().get_queryset(request))
        if super().has_view_permission(request):
            return tags
        return tags.filter(editors=signed_in_user(request))

    def has_module_permission(self, request: HttpRequest) -> bool:
        return super().has_module_permission(request) or is_tag_editor(request.user)

    def has_view_permission(self, request: HttpRequest, obj: Tag | None = None) -> bool:
        return super().has_view_permission(request, obj) or self._edits(request, obj)

    def has_change_permission(self, request: HttpRequest, obj: Tag | None = None) -> bool:
        return super().has_change_permission(request, obj) or self._edits(request, obj)

    def _edits(self, request: HttpRequest, tag: Tag | None) -> bool:
        user = request.user
        if not is_tag_editor(user):
            return False
        return tag is None or tag.editors.filter(pk=user.pk).exists()

    def get_readonly_fields(
        self, request: HttpRequest, obj: Tag | None = None
    ) -> list[str] | tuple[str, ...]:
        if super().has_change_permission(request, obj):
            return super().get_readonly_fields(request, obj)
        return ["name", "slug", "created_at", "editors"]

    def get_prepopulated_fields(
        self, request: HttpRequest, obj: Tag | None = None
    ) -> dict[str, Sequence[str]]:
        if super().has_change_permission(request, obj):
            return super().get_prepopulated_fields(request, obj)
        return {}

    @admin.display(description="visible papers", ordering="paper_count")
    def paper_count(self, obj: "CountedTag") -> int:
        return obj.paper_count


@admin.register(Category)
class CategoryAdmin(admin.ModelAdmin):
    list_display = ["code", "name", "paper_count"]
    search_fields = ["code", "name"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Category]:
        return counts.with_category_counts(super().get_queryset(request))

    @admin.display(description="visible papers", ordering="paper_count")
    def paper_count(self, obj: "CountedCategory") -> int:
        return obj.paper_count


class AuthorSplitForm(forms.Form):
    """Which of an author's papers are another person's, and that person's name."""

    papers = forms.ModelMultipleChoiceField(
        queryset=Paper.objects.none(),
        widget=forms.CheckboxSelectMultiple,
        help_text="The papers to credit to the other person.",
    )
    name = forms.CharField(
        max_length=300,
        help_text="The other person's name, told apart from this one's (an initial, a middle"
        " name); the author of that name takes the papers if there is one.",
    )

    def __init__(self, *args: Any, author: Author, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.author = author
        papers = self.fields["papers"]
        assert isinstance(papers, forms.ModelMultipleChoiceField)
        papers.queryset = Paper.objects.filter(authors=author).order_by("-listed_at", "-pk")

    def clean_name(self) -> str:
        name = " ".join(self.cleaned_data["name"].split())
        if normalize_name(name) == self.author.normalized_name:
            raise forms.ValidationError("That is this author's own name; give the other person's.")
        return name


class AuthorForm(forms.ModelForm):
    class Meta:
        model = Author
        fields = ["name"]

    def clean_name(self) -> str:
        name = " ".join(self.cleaned_data["name"].split())
        others = Author.objects.exclude(pk=self.instance.pk)
        if others.filter(normalized_name=normalize_name(name)).exists():
            raise forms.ValidationError(
                "Another author has this name; merge the two from the list of authors instead."
            )
        return name


@admin.register(Author)
class AuthorAdmin(admin.ModelAdmin):
    form = AuthorForm
    list_display = ["name", "slug", "paper_count", "merged_into"]
    list_select_related = ["merged_into"]
    search_fields = ["name", "normalized_name", "=slug"]
    readonly_fields = ["normalized_name", "slug", "merged_into", "split_link"]
    fields = ["name", "normalized_name", "slug", "merged_into", "split_link"]
    actions = ["merge"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Author]:
        authors: QuerySet[Author] = super().get_queryset(request)
        return authors.annotate(paper_count=Count("papers"))

    def get_urls(self) -> list[URLPattern]:
        split = path(
            "<int:author_id>/split/",
            self.admin_site.admin_view(self.split_view),
            name="catalog_author_split",
        )
        return [split, *super().get_urls()]

    @admin.display(description="papers", ordering="paper_count")
    def paper_count(self, obj: "WithAnnotations[Author, PaperCount]") -> int:
        return obj.paper_count

    @admin.display(description="split")
    def split_link(self, obj: Author) -> str:
        if obj.pk is None:
            return "-"
        address = reverse("admin:catalog_author_split", args=[obj.pk])
        return format_html('<a href="{}">Move some papers to another author</a>', address)

    def save_model(self, request: HttpRequest, obj: Author, form: Any, change: bool) -> None:
        super().save_model(request, obj, form, change)
        # Cards show the stored names: a renamed author's papers store the new one.
        services.refresh_papers_authors(obj.papers.values_list("pk", flat=True))

    @admin.action(description="Merge selected authors into one", permissions=["change"])
    def merge(self, request: HttpRequest, queryset: QuerySet[Author]) -> HttpResponse | None:
        """First a page asking which author to keep, then the merge."""
        authors = list(queryset.filter(merged_into=None).order_by("pk"))
        if len(authors) < 2:
            self.message_user(request, "Select two or more authors to merge.", messages.ERROR)
            return None
        kept_id = request.POST.get("kept", "")
        kept = next((a for a in authors if str(a.pk) == kept_id), None)
        if kept is None:
            context = {
                **self.admin_site.each_context(request),
                "title": "Merge authors",
                "authors": authors,
                "opts": self.model._meta,
                "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
            }
            return TemplateResponse(request, "admin/catalog/author/merge.html", context)
        papers = curation.merge_authors(kept=kept, merged=authors, by=signed_in_user(request))
        message = ngettext(
            "Merged into %(name)s; %(count)d paper changed.",
            "Merged into %(name)s; %(count)d papers changed.",
            len(papers),
        )
        self.message_user(
            request, message % {"name": kept.name, "count": len(papers)}, messages.SUCCESS
        )
        return None

    def split_view(self, request: HttpRequest, author_id: int) -> HttpResponse:
        author = get_object_or_404(Author, pk=author_id)
        if not self.has_change_permission(request, author):
            raise PermissionDenied
        form = AuthorSplitForm(request.POST or None, author=author)
        if request.method == "POST" and form.is_valid():
            other = curation.split_author(
                author=author,
                paper_ids=[paper.pk for paper in form.cleaned_data["papers"]],
                name=form.cleaned_data["name"],
                by=signed_in_user(request),
            )
            count = len(form.cleaned_data["papers"])
            message = ngettext(
                "Moved %(count)d paper to %(name)s.", "Moved %(count)d papers to %(name)s.", count
            )
            self.message_user(request, message % {"count": count, "name": other.name})
            return redirect("admin:catalog_author_change", other.pk)
        context = {
            **self.admin_site.each_context(request),
            "title": f"Split {author.name}",
            "author": author,
            "form": form,
            "opts": self.model._meta,
        }
        return TemplateResponse(request, "admin/catalog/author/split.html", context)


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
    actions = ["publish_drafts"]

    @admin.action(description="Publish selected draft summaries", permissions=["change"])
    def publish_drafts(self, request: HttpRequest, queryset: QuerySet[Summary]) -> None:
        count = curation.publish_summaries(queryset, by=signed_in_user(request))
        self.message_user(request, f"Published {count} draft summaries.", messages.SUCCESS)


@admin.register(CurationEvent)
class CurationEventAdmin(admin.ModelAdmin):
    """Every curation action, newest first: the catalog's log."""

    list_display = ["created_at", "action", "about", "who", "detail"]
    list_select_related = ["paper", "user"]
    list_filter = ["action", "created_at"]
    search_fields = [
        "paper__title",
        "=paper__arxiv_id",
        "subject",
        "user__username",
        "actor",
        "detail",
    ]
    date_hierarchy = "created_at"
    list_per_page = 100

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.display(description="about", ordering="paper__title")
    def about(self, event: CurationEvent) -> str:
        """The paper, linked to its page in admin, or what else the event is about."""
        if event.paper_id is None:
            return event.subject
        url = reverse("admin:catalog_paper_change", args=[event.paper_id])
        return format_html('<a href="{}">{}</a>', url, event.about)

    def has_change_permission(self, request: HttpRequest, obj: CurationEvent | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: CurationEvent | None = None) -> bool:
        return False
