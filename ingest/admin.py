from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, TypedDict

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ActionForm
from django.contrib.admin.views.main import ChangeList
from django.contrib.admin.widgets import AutocompleteSelectMultiple
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.translation import ngettext

from catalog import curation
from catalog.models import Paper, Tag
from core.forms import choice_field
from core.http import signed_in_user
from ingest import by_hand, links, tasks
from ingest.models import InboxEntry, IngestRun, IngestSource, LinkRequest, OaiHarvest, TagRule
from ingest.other_ids import find_doi
from ingest.records import MalformedEntry, VenueRecord
from ingest.tagging import compile_rule
from ingest.upsert import Outcome

if TYPE_CHECKING:
    from core.typing import StrOrPromise, WithAnnotations


class ReadOnlyAdmin(admin.ModelAdmin):
    """Records written by ingest itself: viewable, never edited by hand."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(IngestSource)
class IngestSourceAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "query",
        "listing_categories",
        "enabled",
        "needs_review",
        "interval_minutes",
        "max_results",
        "last_success_at",
        "listed_through",
        "claimed_at",
    ]
    list_filter = ["enabled", "needs_review"]
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
    def read_listing_now(self, request: HttpRequest, queryset: QuerySet[IngestSource]) -> None:
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
    def run_now(self, request: HttpRequest, queryset: QuerySet[IngestSource]) -> None:
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
        "heartbeat_at",
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
    def reapply(self, request: HttpRequest, queryset: QuerySet[TagRule]) -> None:
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


def tags_widget() -> AutocompleteSelectMultiple:
    """Tags chosen by typing, as on the paper form."""
    return AutocompleteSelectMultiple(Paper._meta.get_field("tags"), admin.site)


class AddPapersForm(forms.Form):
    text = forms.CharField(
        label="Ids, links or references",
        required=False,
        widget=forms.Textarea(attrs={"rows": 12, "cols": 90, "autofocus": True}),
        help_text=(
            "One per line, or separated by spaces or commas: 2505.15034, arXiv:2505.15034v2, "
            "hep-th/9901001, arxiv.org abs/pdf/html links, Hugging Face, alphaXiv or "
            "Papers with Code links; DOIs (read from Crossref), OpenReview forum links, "
            "ACL Anthology ids and links; Markdown lists of links, a page's HTML (a Hugging "
            "Face collection's), or BibTeX, RIS or CSL-JSON references. "
            f"At most {links.MAX_IDS:,} papers at once."
        ),
    )
    file = forms.FileField(
        label="or a file of references",
        required=False,
        help_text=(
            "A reference manager's export (Zotero's BibTeX, RIS or CSL-JSON), a saved page "
            f"or a list of links, at most {links.MAX_FILE_BYTES // 1_000_000} MB."
        ),
    )
    tags = forms.ModelMultipleChoiceField(
        queryset=Tag.objects.all(),
        required=False,
        widget=tags_widget(),
        help_text="Given to every paper, whether new or already in the catalog.",
    )
    note = forms.CharField(
        required=False,
        max_length=1000,
        widget=forms.Textarea(attrs={"rows": 2, "cols": 90}),
        help_text="Why these papers: kept in each paper's history.",
    )

    def clean(self) -> dict[str, Any]:
        """The text to read, pasted or uploaded, once it names papers to add."""
        cleaned: dict[str, Any] = super().clean() or {}
        text, upload = cleaned.get("text", ""), cleaned.get("file")
        field = "file" if upload is not None else "text"
        try:
            if upload is not None:
                if text.strip():
                    raise links.InvalidRequest("Paste references or choose a file, not both.")
                text = links.read_upload(name=upload.name, content=upload.read())
            elif not text.strip():
                raise links.InvalidRequest(
                    "Paste arXiv ids, links or references, or choose a file of them."
                )
            links.parse_lines(text)
        except links.InvalidRequest as err:
            self.add_error(field, str(err))
        cleaned["text"] = text
        return cleaned


class EnterPaperForm(forms.Form):
    """A paper no source the site reads has, entered by hand."""

    title = forms.CharField(max_length=1000, widget=forms.TextInput(attrs={"size": 90}))
    authors = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 4, "cols": 90}),
        help_text="One per line, as the paper lists them: Given Family.",
        error_messages={"required": "Name at least one author."},
    )
    abstract = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 8, "cols": 90}))
    venue = forms.CharField(
        required=False,
        max_length=500,
        widget=forms.TextInput(attrs={"size": 90}),
        help_text="Where it was published: a journal, proceedings or workshop.",
    )
    published_on = forms.DateField(
        label="Published",
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}),
        help_text="Lists sort by this date; without one, by the day it is added here.",
    )
    precision = forms.ChoiceField(
        label="Known to the",
        choices=Paper.DatePrecision.choices,
        initial=Paper.DatePrecision.DAY,
        help_text="A date known only to the month or the year is shown so.",
    )
    doi = forms.CharField(label="DOI", required=False, max_length=200)
    url = forms.URLField(
        label="Link",
        required=False,
        max_length=500,
        assume_scheme="https",
        help_text="The paper's page at its publisher or venue; without one, its DOI's.",
    )
    tags = forms.ModelMultipleChoiceField(
        queryset=Tag.objects.all(), required=False, widget=tags_widget()
    )
    note = forms.CharField(
        required=False,
        max_length=1000,
        widget=forms.Textarea(attrs={"rows": 2, "cols": 90}),
        help_text="Why this paper: kept in its history.",
    )

    def clean_authors(self) -> list[str]:
        names = [" ".join(line.split()) for line in self.cleaned_data["authors"].splitlines()]
        if not any(names):
            raise forms.ValidationError("Name at least one author.")
        return [name for name in names if name]

    def clean_doi(self) -> str:
        given = self.cleaned_data["doi"].strip()
        doi = find_doi(given)
        if given and not doi:
            raise forms.ValidationError("A DOI starts with 10. and a slash follows its prefix.")
        return doi

    def record(self) -> VenueRecord:
        data = self.cleaned_data
        return by_hand.paper_record(
            title=data["title"],
            authors=data["authors"],
            abstract=data["abstract"],
            venue=data["venue"],
            doi=data["doi"],
            url=data["url"],
            published_on=data["published_on"],
            precision=data["precision"],
        )


def _entered_message(entered: by_hand.Entered) -> str:
    title = entered.paper.title
    if entered.created:
        return f"Added “{title}”."
    if entered.stored.outcome == Outcome.REJECTED:
        return f"“{title}” was rejected in review and stays so: publish it from the review inbox."
    found = "from arXiv" if entered.paper.arxiv_id else "already"
    return f"“{title}” was in the catalog {found}: the entry was matched to it, not added twice."


@admin.register(LinkRequest)
class LinkRequestAdmin(admin.ModelAdmin):
    """Add papers by link: the add page takes the pasted links, each request's
    page shows its progress and then what became of every line."""

    list_display = ["created_at", "requester", "ids_total", "status", "results"]
    list_select_related = ["run", "requested_by"]
    list_filter = ["run__status"]
    date_hierarchy = "created_at"

    def has_change_permission(self, request: HttpRequest, obj: LinkRequest | None = None) -> bool:
        return False

    @admin.display(description="by")
    def requester(self, link_request: LinkRequest) -> str:
        if link_request.requested_by is not None:
            return link_request.requested_by.get_username()
        return link_request.actor

    @admin.display(description="status", ordering="run__status")
    def status(self, link_request: LinkRequest) -> str:
        return link_request.run.get_status_display()

    @admin.display(description="results")
    def results(self, link_request: LinkRequest) -> str:
        return ", ".join(
            f"{result.label} {count}"
            for result, count in links.counts(link_request).most_common()
            if result != links.Result.REPEATED
        )

    def add_view(
        self, request: HttpRequest, form_url: str = "", extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        if not self.has_add_permission(request):
            raise PermissionDenied
        initial: dict[str, Any] = {}
        retried = request.GET.get("retry", "")
        if retried.isdigit() and (earlier := LinkRequest.objects.filter(pk=retried).first()):
            initial = {"text": earlier.text, "tags": earlier.tags.all(), "note": earlier.note}
        form = AddPapersForm(request.POST or None, request.FILES or None, initial=initial)
        if request.method == "POST" and form.is_valid():
            link_request = links.request_papers(
                text=form.cleaned_data["text"],
                tags=list(form.cleaned_data["tags"]),
                note=form.cleaned_data["note"],
                by=signed_in_user(request),
            )
            tasks.queue_link_request(request_id=link_request.pk)
            self.message_user(
                request,
                f"Asking for {link_request.ids_total} papers; this page follows them.",
                messages.SUCCESS,
            )
            return redirect("admin:ingest_linkrequest_change", link_request.pk)
        context = {
            **self.admin_site.each_context(request),
            "title": "Add papers by link",
            "subtitle": None,
            "opts": self.opts,
            "form": form,
            "media": self.media + form.media,
            "has_view_permission": self.has_view_permission(request),
        }
        return TemplateResponse(request, "admin/ingest/linkrequest/add_papers.html", context)

    def get_urls(self) -> list[URLPattern]:
        enter = self.admin_site.admin_view(self.enter_paper_view)
        return [path("by-hand/", enter, name="ingest_linkrequest_by_hand"), *super().get_urls()]

    def enter_paper_view(self, request: HttpRequest) -> HttpResponse:
        """Enter a paper by hand: stored through the ingest pipeline, then its admin page."""
        if not self.has_add_permission(request):
            raise PermissionDenied
        form = EnterPaperForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            try:
                record = form.record()
            except MalformedEntry as err:
                form.add_error("title", str(err))
            else:
                entered = by_hand.enter_paper(
                    record,
                    tags=list(form.cleaned_data["tags"]),
                    note=form.cleaned_data["note"],
                    by=signed_in_user(request),
                )
                self.message_user(request, _entered_message(entered), messages.SUCCESS)
                return redirect("admin:catalog_paper_change", entered.paper.pk)
        context = {
            **self.admin_site.each_context(request),
            "title": "Enter a paper by hand",
            "subtitle": None,
            "opts": self.opts,
            "form": form,
            "media": self.media + form.media,
            "has_view_permission": False,
            "submit_label": "Enter the paper",
        }
        return TemplateResponse(request, "admin/ingest/linkrequest/add_papers.html", context)

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        link_request = self.get_object(request, object_id)
        if link_request is None:
            # The admin's own answer for a missing object; its stubs leave the method out.
            gone: HttpResponseRedirect = self._get_obj_does_not_exist_redirect(  # type: ignore[attr-defined]
                request, self.opts, object_id
            )
            return gone
        if not self.has_view_permission(request, link_request):
            raise PermissionDenied
        run = link_request.run
        # A request whose worker died is marked interrupted; one that no worker
        # has taken up (its task lost) shows as stalled once it waited as long.
        stalled = run.status == IngestRun.Status.INTERRUPTED or run.seems_stopped(
            now=timezone.now()
        )
        context = {
            **self.admin_site.each_context(request),
            "title": f"Papers by link: {link_request}",
            "subtitle": None,
            "opts": self.opts,
            "original": link_request,
            "link_request": link_request,
            "run": run,
            "running": run.status == IngestRun.Status.RUNNING and not stalled,
            "stalled": stalled,
            "failed": run.status == IngestRun.Status.FAILED,
            "lines": [links.Line.from_json(data) for data in link_request.lines],
            "counts": links.counts(link_request).most_common(),
            "tags": list(link_request.tags.all()),
            "has_add_permission": self.has_add_permission(request),
        }
        return TemplateResponse(request, "admin/ingest/linkrequest/result.html", context)


class FilterChoice(TypedDict):
    """One choice of a list filter, as the admin's template shows it."""

    selected: bool
    query_string: str
    display: "StrOrPromise"


class ReviewFilter(admin.SimpleListFilter):
    """Waiting papers unless asked otherwise: the inbox is what is left to review."""

    title = "review"
    parameter_name = "review"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        return [*Paper.Review.choices, ("all", "all")]

    def choices(self, changelist: ChangeList) -> Iterator[FilterChoice]:
        value = self.value() or Paper.Review.PENDING
        for lookup, title in self.lookup_choices:
            yield {
                "selected": value == lookup,
                "query_string": changelist.get_query_string({self.parameter_name: lookup}),
                "display": title,
            }

    def queryset(
        self, request: HttpRequest, queryset: QuerySet[InboxEntry]
    ) -> QuerySet[InboxEntry]:
        value = self.value() or Paper.Review.PENDING
        if value == "all":
            return queryset
        return queryset.filter(paper__review=value)


class RulesMatched(TypedDict):
    """What InboxChangeList gives each entry of the page."""

    rules_matched: list[str]


class InboxChangeList(ChangeList):
    """The inbox page, each paper with the tag rules it matches, compiled once a page."""

    def get_results(self, request: HttpRequest) -> None:
        super().get_results(request)
        rules = [
            (rule.tag.name, compile_rule(rule))
            for rule in TagRule.objects.filter(enabled=True).select_related("tag")
        ]
        self.result_list = list(self.result_list)
        for entry in self.result_list:
            paper = entry.paper
            codes = {category.code for category in paper.categories.all()}
            if paper.primary_category:
                codes.add(paper.primary_category.code)
            text = f"{paper.title}\n{paper.abstract}"
            entry.rules_matched = [
                name for name, rule in rules if rule.matches(text=text, categories=codes)
            ]


class InboxActionForm(ActionForm):
    tags = forms.ModelMultipleChoiceField(
        queryset=Tag.objects.all(),
        required=False,
        widget=tags_widget(),
        label="Tags to publish with",
    )


@admin.register(InboxEntry)
class InboxEntryAdmin(admin.ModelAdmin):
    """Papers from sources that need review, newest first, to publish or reject."""

    action_form = InboxActionForm
    list_display = [
        "paper_title",
        "arxiv_id",
        "arrived_at",
        "source",
        "tag_list",
        "rules_matched",
        "code",
        "review",
    ]
    list_display_links = None
    list_filter = [ReviewFilter, "source"]
    search_fields = ["paper__title", "=paper__arxiv_id", "paper__author_names"]
    list_per_page = 50
    actions = ["publish_with_tags", "reject"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[InboxEntry]:
        entries: QuerySet[InboxEntry] = super().get_queryset(request)
        return entries.select_related("paper__primary_category", "source").prefetch_related(
            "paper__tags", "paper__code_links", "paper__categories"
        )

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        title = "Review inbox: publish or reject the papers sources brought"
        return super().changelist_view(request, {"title": title, **(extra_context or {})})

    @admin.display(description="paper", ordering="paper__title")
    def paper_title(self, entry: InboxEntry) -> str:
        url = reverse("admin:catalog_paper_change", args=[entry.paper_id])
        return format_html('<a href="{}">{}</a>', url, entry.paper.title)

    @admin.display(description="arXiv id", ordering="paper__arxiv_id")
    def arxiv_id(self, entry: InboxEntry) -> str:
        paper = entry.paper
        return format_html('<a href="{}">{}</a>', paper.abs_url, paper.arxiv_id or "")

    @admin.display(description="tags")
    def tag_list(self, entry: InboxEntry) -> str:
        return ", ".join(tag.name for tag in entry.paper.tags.all())

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[ChangeList]:
        return InboxChangeList

    @admin.display(description="tag rules matched")
    def rules_matched(self, entry: "WithAnnotations[InboxEntry, RulesMatched]") -> str:
        return ", ".join(entry.rules_matched)

    @admin.display(description="code")
    def code(self, entry: InboxEntry) -> str:
        return format_html_join(
            ", ",
            '<a href="{}">{}</a>',
            ((link.url, link.host_label) for link in entry.paper.code_links.all()),
        )

    @admin.display(description="review", ordering="paper__review")
    def review(self, entry: InboxEntry) -> str:
        return entry.paper.get_review_display()

    @admin.action(
        description="Publish selected papers with the chosen tags", permissions=["change"]
    )
    def publish_with_tags(self, request: HttpRequest, queryset: QuerySet[InboxEntry]) -> None:
        tags = self._chosen_tags(request)
        if tags is None:
            return
        published = curation.publish(
            Paper.objects.filter(inbox_entry__in=queryset), tags=tags, by=signed_in_user(request)
        )
        with_tags = f" with {curation.tag_names(tags)}" if tags else ""
        self.message_user(
            request, f"Published {len(published)} papers{with_tags}.", messages.SUCCESS
        )

    @admin.action(description="Reject selected papers", permissions=["change"])
    def reject(self, request: HttpRequest, queryset: QuerySet[InboxEntry]) -> None:
        rejected = curation.reject(
            Paper.objects.filter(inbox_entry__in=queryset), by=signed_in_user(request)
        )
        self.message_user(
            request,
            f"Rejected {len(rejected)} papers: they stay hidden and later runs leave them out.",
            messages.SUCCESS,
        )

    def _chosen_tags(self, request: HttpRequest) -> list[Tag] | None:
        form = InboxActionForm(request.POST)
        choice_field(form, "action").choices = self.get_action_choices(request)
        if not form.is_valid() and "tags" in form.errors:
            self.message_user(request, "Choose existing tags.", messages.ERROR)
            return None
        return list(form.cleaned_data.get("tags") or [])
