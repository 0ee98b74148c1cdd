"""A paper's question page, and a reader's question: for the page's script an
event stream of the answer as the model writes it, then the checked answer;
for a plain form post the whole page with the answer once it is checked."""

import json
from collections.abc import Iterator
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from answers import services
from answers.forms import QuestionForm
from answers.services import Asking, AskRefused, Outcome
from catalog import arxiv_ids
from catalog.models import Paper
from core.http import safe_methods, signed_in_user
from core.limits import limit_pages


def askable_paper(**lookup: Any) -> Paper:
    """A visible paper with its stored text's row, if any (one query)."""
    return get_object_or_404(Paper.objects.visible().select_related("fulltext"), **lookup)


def wants_stream(request: HttpRequest) -> bool:
    return "text/event-stream" in request.headers.get("Accept", "")


def render_page(
    request: HttpRequest,
    paper: Paper,
    *,
    form: QuestionForm | None = None,
    outcome: Outcome | None = None,
    error: str = "",
    status: int = 200,
) -> HttpResponse:
    """The question page, or for the page's script the part it swaps in."""
    context = {
        "paper": paper,
        "can_ask": services.text_version(paper) is not None,
        "form": form or QuestionForm(),
        "outcome": outcome,
        "error": error,
    }
    template = "answers/_result.html" if wants_stream(request) else "answers/page.html"
    return render(request, template, context, status=status)


@safe_methods
@limit_pages
def page(request: HttpRequest, arxiv_id: str) -> HttpResponse:
    parsed = arxiv_ids.split_version(arxiv_id)
    if parsed and parsed[0] != arxiv_id:
        return redirect("answers:page", arxiv_id=parsed[0], permanent=True)
    return render_page(request, askable_paper(arxiv_id=arxiv_id))


def event(name: str, data: dict[str, str]) -> str:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n"


def events(request: HttpRequest, paper: Paper, started: Outcome | Asking) -> Iterator[str]:
    """The model's words as they come (`delta`), then the checked answer or the
    passages as HTML (`done`)."""
    if isinstance(started, Asking):
        for piece in services.stream(started):
            yield event("delta", {"text": piece})
        assert started.outcome is not None  # services.stream set it
        started = started.outcome
    context = {"paper": paper, "outcome": started}
    yield event("done", {"html": render_to_string("answers/_result.html", context, request)})


@require_POST
@login_required
def ask(request: HttpRequest, paper_id: int) -> HttpResponse | StreamingHttpResponse:
    paper = askable_paper(pk=paper_id)
    form = QuestionForm(request.POST)
    version = services.text_version(paper)
    try:
        if version is None:
            raise AskRefused(_("The paper's text is not available yet."), status=409)
        if not form.is_valid():
            raise AskRefused(" ".join(str(e) for e in form.errors["question"]), status=400)
        services.count_question(request, reader_id=signed_in_user(request).pk)
    except AskRefused as refused:
        return render_page(request, paper, form=form, error=refused.message, status=refused.status)
    started = services.start(paper=paper, version=version, question=form.cleaned_data["question"])
    if wants_stream(request):
        response = StreamingHttpResponse(
            events(request, paper, started), content_type="text/event-stream; charset=utf-8"
        )
        response["Cache-Control"] = "no-cache"
        # nginx passes each event on as it comes rather than the answer whole.
        response["X-Accel-Buffering"] = "no"
        return response
    if isinstance(started, Asking):
        for _piece in services.stream(started):
            pass
        assert started.outcome is not None  # services.stream set it
        started = started.outcome
    return render_page(request, paper, form=form, outcome=started)
