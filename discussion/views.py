"""The discussion page of a paper, its fragment on the paper page, and the
readers' writes to it. A write from htmx answers with the discussion's fragment
(its error, if any, in it); a plain form post is redirected back to the page,
or refused with the page and the status that says why."""

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core import signing
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_POST

from catalog import arxiv_ids
from catalog.models import Paper
from core.http import safe_methods
from core.limits import limit_pages
from discussion import limits, mail, selectors, services
from discussion.forms import CommentForm, ReportForm
from discussion.models import Comment
from discussion.rendering import ReaderActions
from discussion.services import CommentRefused


def discussed_paper(request: HttpRequest, **lookup: Any) -> Paper:
    """The visible paper, with the reader's state in its discussion (read
    again after a write that changes it: posting follows the discussion)."""
    papers = selectors.with_reader_state(Paper.objects.visible(), user=request.user)
    return get_object_or_404(papers, **lookup)


def requested_page(request: HttpRequest) -> int:
    """The page of threads asked for: the first unless ?page= names another."""
    raw = request.GET.get("page", "")
    return int(raw) if raw.isdecimal() and len(raw) < 9 else 1


def discussion_context(
    request: HttpRequest,
    paper: Paper,
    *,
    page: int = 1,
    form: CommentForm | None = None,
    error: str = "",
) -> dict[str, Any]:
    context = {
        "paper": paper,
        "page": selectors.thread_page(paper=paper, user=request.user, number=page),
        "state": selectors.reader_state(paper),
        "form": form or CommentForm(),
        "error": error,
    }
    return {**context, "actions": ReaderActions(request=request, context=context)}


def render_discussion(
    request: HttpRequest,
    paper: Paper,
    *,
    page: int | None = None,
    form: CommentForm | None = None,
    error: str = "",
    status: int = 200,
) -> HttpResponse:
    """The whole page, or for htmx the fragment it swaps in (always 200, so
    that htmx shows the error where the reader looks); by default the page of
    threads the address names (forms post to their page's address). The
    paper is as discussed_paper read it, with the reader's state."""
    number = page if page is not None else requested_page(request)
    context = discussion_context(request, paper, page=number, form=form, error=error)
    if request.headers.get("HX-Request"):
        return render(request, "discussion/_discussion.html", context)
    return render(request, "discussion/page.html", context, status=status)


def back_to(paper: Paper, comment: Comment) -> HttpResponse:
    """The page of the discussion that shows the comment."""
    number = selectors.page_of(comment)
    url = reverse("discussion:page-by-pk", args=[paper.pk])
    return redirect(f"{url}{f'?page={number}' if number > 1 else ''}#comment-{comment.pk}")


@safe_methods
@limit_pages
def page(request: HttpRequest, arxiv_id: str) -> HttpResponse:
    # As the paper's own page: a versioned or prefixed id has one canonical
    # address, and any other is looked up as stored.
    parsed = arxiv_ids.split_version(arxiv_id)
    if parsed and parsed[0] != arxiv_id:
        return redirect(
            with_query(reverse("discussion:page", args=[parsed[0]]), request), permanent=True
        )
    paper = discussed_paper(request, arxiv_id=arxiv_id)
    return render_discussion(request, paper)


@safe_methods
@limit_pages
def page_by_pk(request: HttpRequest, pk: int) -> HttpResponse:
    paper = discussed_paper(request, pk=pk)
    if paper.arxiv_id:
        url = reverse("discussion:page", args=[paper.arxiv_id])
        return redirect(with_query(url, request), permanent=True)
    return render_discussion(request, paper)


@safe_methods
@limit_pages
def fragment(request: HttpRequest, paper_id: int) -> HttpResponse:
    """The discussion as the paper page loads it: never cached, so a reader's
    own comment is there on their next view of the paper."""
    paper = discussed_paper(request, pk=paper_id)
    context = discussion_context(request, paper, page=requested_page(request))
    return render(request, "discussion/_discussion.html", context)


def with_query(url: str, request: HttpRequest) -> str:
    """The address with the request's page of threads, if it asked for one."""
    page = requested_page(request)
    return f"{url}?page={page}" if page > 1 else url


def reader(request: HttpRequest) -> User:
    user = request.user
    assert isinstance(user, User)  # login_required let only a reader in
    return user


@require_POST
@login_required
def post(request: HttpRequest, paper_id: int) -> HttpResponse:
    paper = discussed_paper(request, pk=paper_id)
    form = CommentForm(request.POST)
    if not form.is_valid():
        return render_discussion(
            request, paper, form=form, error=_("Please correct the comment."), status=400
        )
    if form.cleaned_data["website"]:
        return render_discussion(
            request, paper, error=_("This comment could not be posted."), status=400
        )
    try:
        limits.count_post(request, user=reader(request))
        comment = services.post_comment(
            user=reader(request),
            paper=paper,
            body=form.cleaned_data["body"],
            parent_id=form.cleaned_data["parent"],
        )
    except CommentRefused as refused:
        return render_discussion(
            request, paper, form=form, error=refused.message, status=refused.status
        )
    if request.headers.get("HX-Request"):
        posted_on = discussed_paper(request, pk=paper.pk)  # the reader now follows it
        return render_discussion(request, posted_on, page=selectors.page_of(comment))
    return back_to(paper, comment)


def own_comment(comment_id: int) -> Comment:
    return get_object_or_404(
        Comment.objects.select_related("paper").filter(paper__in=Paper.objects.visible()),
        pk=comment_id,
    )


@require_http_methods(["GET", "POST"])
@login_required
def edit(request: HttpRequest, comment_id: int) -> HttpResponse:
    comment = own_comment(comment_id)
    if not comment.editable_by(request.user):
        return render(
            request,
            "discussion/edit.html",
            {"comment": comment, "error": _("This comment can no longer be edited.")},
            status=403,
        )
    form = CommentForm(request.POST or None, initial={"body": comment.body})
    status = 200
    error = ""
    if request.method == "POST":
        if form.is_valid():
            try:
                services.edit_comment(
                    user=reader(request), comment=comment, body=form.cleaned_data["body"]
                )
            except CommentRefused as refused:
                error, status = refused.message, refused.status
            else:
                return back_to(comment.paper, comment)
        else:
            error, status = _("Please correct the comment."), 400
    context = {"comment": comment, "form": form, "error": error}
    return render(request, "discussion/edit.html", context, status=status)


@require_POST
@login_required
def delete(request: HttpRequest, comment_id: int) -> HttpResponse:
    comment = own_comment(comment_id)
    try:
        services.delete_comment(user=reader(request), comment=comment)
    except CommentRefused as refused:
        return render_discussion(
            request,
            discussed_paper(request, pk=comment.paper_id),
            error=refused.message,
            status=refused.status,
        )
    messages.success(request, _("Your comment is deleted."))
    return back_to(comment.paper, comment)


@require_POST
@login_required
def report(request: HttpRequest, comment_id: int) -> HttpResponse:
    comment = own_comment(comment_id)
    form = ReportForm(request.POST)
    if not form.is_valid():
        return render_discussion(
            request,
            discussed_paper(request, pk=comment.paper_id),
            error=_("A reason is at most 500 characters."),
            status=400,
        )
    try:
        services.report_comment(
            user=reader(request), comment=comment, reason=form.cleaned_data["reason"]
        )
    except CommentRefused as refused:
        return render_discussion(
            request,
            discussed_paper(request, pk=comment.paper_id),
            error=refused.message,
            status=refused.status,
        )
    messages.success(request, _("Thank you; the curators will look at it."))
    return back_to(comment.paper, comment)


@require_POST
@login_required
def follow(request: HttpRequest, paper_id: int) -> HttpResponse:
    paper = discussed_paper(request, pk=paper_id)
    if request.POST.get("follow") == "1":
        services.follow(user=reader(request), paper=paper)
    else:
        services.unfollow(user=reader(request), paper=paper)
    if request.headers.get("HX-Request"):
        return render_discussion(request, discussed_paper(request, pk=paper.pk))
    return redirect(with_query(reverse("discussion:page-by-pk", args=[paper.pk]), request))


# Mail clients POST here with no session or CSRF token (RFC 8058 one-click).
@csrf_exempt
@never_cache
@require_http_methods(["GET", "POST"])
def unsubscribe(request: HttpRequest, token: str) -> HttpResponse:
    try:
        user = mail.user_for_token(token)
    except signing.BadSignature:
        user = None
    if user is None:
        return render(request, "discussion/unsubscribe.html", {"invalid": True}, status=400)
    # A GET only asks: link checkers in mailboxes open links without a reader.
    if request.method == "POST":
        services.stop_all_mail(user=user)
    context = {"done": request.method == "POST", "email": user.email}
    return render(request, "discussion/unsubscribe.html", context)
