"""The curators' hold on discussions: each action on comments (hide, show,
dismiss their reports), their papers' discussions (lock, unlock) and their
authors (stop, allow) goes
through discussion.services, which writes it to the paper's curation log."""

from collections.abc import Callable

from django.contrib import admin, messages
from django.db.models import Count, Q, QuerySet
from django.http import HttpRequest

from core.http import signed_in_user
from discussion import services
from discussion.models import Comment, CommenterBan, CommentReport


class ReportInline(admin.TabularInline):
    model = CommentReport
    extra = 0
    fields = readonly_fields = ("reporter", "reason", "created_at", "dismissed_at", "dismissed_by")
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Comment | None = None) -> bool:
        return False


def each(
    request: HttpRequest, comments: QuerySet[Comment], act: Callable[[Comment], bool], done: str
) -> None:
    changed = sum(1 for comment in comments.select_related("paper", "author") if act(comment))
    messages.success(request, f"{done}: {changed}.")


@admin.register(Comment)
class CommentAdmin(admin.ModelAdmin):
    """Readers' comments, those with reports still open first."""

    list_display = ["pk", "paper", "author", "created_at", "report_count", "hidden_by_curator"]
    # No sidebar filters: their links are too small a target (axe's target-size);
    # hidden comments are found by the "hidden by curator" column's sort.
    search_fields = ["body", "author__email", "paper__arxiv_id"]
    raw_id_fields = ["paper", "author", "parent"]
    readonly_fields = ["paper", "author", "parent", "body", "created_at", "edited_at", "deleted"]
    fields = [*readonly_fields, "hidden_by_curator"]
    inlines = [ReportInline]
    actions = ["hide", "dismiss_reports", "show", "lock", "unlock", "stop_author", "allow_author"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Comment]:
        rows: QuerySet[Comment] = super().get_queryset(request)
        return (
            rows.select_related("paper", "author")
            .annotate(reports_count=Count("reports", filter=Q(reports__dismissed_at=None)))
            .order_by("-reports_count", "-created_at")
        )

    @admin.display(description="Open reports", ordering="reports_count")
    def report_count(self, comment: Comment) -> int:
        return int(getattr(comment, "reports_count", 0))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: Comment, form: object, change: bool) -> None:
        # The one editable field goes through the service, which logs it.
        services.set_hidden(
            curator=signed_in_user(request), comment=obj, hidden=obj.hidden_by_curator
        )

    @admin.action(description="Hide selected comments", permissions=["change"])
    def hide(self, request: HttpRequest, queryset: QuerySet[Comment]) -> None:
        curator = signed_in_user(request)
        each(
            request,
            queryset,
            lambda c: services.set_hidden(curator=curator, comment=c, hidden=True),
            "Hidden",
        )

    @admin.action(
        description="Dismiss the reports of selected comments (leave them up)",
        permissions=["change"],
    )
    def dismiss_reports(self, request: HttpRequest, queryset: QuerySet[Comment]) -> None:
        curator = signed_in_user(request)
        each(
            request,
            queryset,
            lambda c: services.dismiss_reports(curator=curator, comment=c),
            "Reports dismissed",
        )

    @admin.action(description="Show selected comments again", permissions=["change"])
    def show(self, request: HttpRequest, queryset: QuerySet[Comment]) -> None:
        curator = signed_in_user(request)
        each(
            request,
            queryset,
            lambda c: services.set_hidden(curator=curator, comment=c, hidden=False),
            "Shown",
        )

    @admin.action(
        description="Lock the discussions of selected comments' papers", permissions=["change"]
    )
    def lock(self, request: HttpRequest, queryset: QuerySet[Comment]) -> None:
        curator = signed_in_user(request)
        each(
            request,
            queryset,
            lambda c: services.set_locked(curator=curator, paper=c.paper, locked=True),
            "Discussions locked",
        )

    @admin.action(
        description="Unlock the discussions of selected comments' papers", permissions=["change"]
    )
    def unlock(self, request: HttpRequest, queryset: QuerySet[Comment]) -> None:
        curator = signed_in_user(request)
        each(
            request,
            queryset,
            lambda c: services.set_locked(curator=curator, paper=c.paper, locked=False),
            "Discussions unlocked",
        )

    @admin.action(
        description="Stop the authors of selected comments from commenting", permissions=["change"]
    )
    def stop_author(self, request: HttpRequest, queryset: QuerySet[Comment]) -> None:
        curator = signed_in_user(request)
        each(
            request,
            queryset,
            lambda c: services.set_banned(curator=curator, comment=c, banned=True),
            "Readers stopped",
        )

    @admin.action(
        description="Allow the authors of selected comments to comment again",
        permissions=["change"],
    )
    def allow_author(self, request: HttpRequest, queryset: QuerySet[Comment]) -> None:
        curator = signed_in_user(request)
        each(
            request,
            queryset,
            lambda c: services.set_banned(curator=curator, comment=c, banned=False),
            "Readers allowed",
        )


@admin.register(CommenterBan)
class CommenterBanAdmin(admin.ModelAdmin):
    list_display = ["user", "banned_by", "reason", "created_at"]
    readonly_fields = ["user", "banned_by", "reason", "created_at"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
