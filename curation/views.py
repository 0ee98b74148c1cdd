from django.conf import settings
from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from core.http import safe_methods
from core.limits import limit_pages
from curation import profiles, suggestions
from curation.forms import SuggestionForm


@require_http_methods(["GET", "POST"])
def suggest(request: HttpRequest) -> HttpResponse:
    """Suggest a paper to the curators, and follow what became of earlier suggestions."""
    if not request.user.is_authenticated:
        if request.method == "POST":
            return redirect_to_login(request.get_full_path())
        return render(request, "curation/suggest.html", {"login_needed": True})
    form = SuggestionForm(
        request.POST or None,
        user=request.user,
        initial={"link": request.GET.get("link", "")[:500]},
    )
    if form.is_valid():
        suggestions.suggest(
            user=request.user,
            arxiv_id=form.arxiv_id,
            link=form.cleaned_data["link"],
            tag=form.cleaned_data["tag"],
            note=form.cleaned_data["note"],
        )
        messages.success(
            request,
            _("Thank you: the curators will look at arXiv:%(id)s.") % {"id": form.arxiv_id},
        )
        return redirect("curation:suggest")
    if form.paper_in_catalog is not None:
        suggestions.suggest_in_catalog(user=request.user, paper=form.paper_in_catalog)
    context = {
        "form": form,
        "suggestions": suggestions.reader_suggestions(user=request.user),
        "per_day": settings.SUGGESTIONS_PER_DAY,
    }
    return render(request, "curation/suggest.html", context)


@safe_methods
@limit_pages
def reader_profile(request: HttpRequest, display_name: str) -> HttpResponse:
    """A reader's public profile: their name, when they joined, the papers they found."""
    profile = profiles.public_profile(name=display_name)
    context = {
        "reader": profile,
        "papers": list(profiles.accepted_papers(profile=profile)),
        "upvoted": profiles.upvoted_papers(profile=profile),
        "comments": profiles.reader_comments(profile=profile),
        "list_thumbnails": settings.PREVIEW_LIST_THUMBNAILS,
    }
    return render(request, "curation/reader_profile.html", context)
