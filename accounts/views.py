import datetime
from collections.abc import Callable
from functools import wraps
from typing import Any, Concatenate, ParamSpec

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.core import signing
from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponseRedirect,
    QueryDict,
    StreamingHttpResponse,
)
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.cache import patch_cache_control, patch_vary_headers
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views import i18n
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_POST

from accounts import selectors, services, toggles, votes
from accounts.forms import ApiTokenForm, DigestSettingsForm, PublicProfileForm
from accounts.middleware import READER_LANGUAGE_SESSION_KEY
from accounts.tasks import refresh_recommendations
from catalog.filters import LIST_PARAMETERS, PERIOD_DAYS
from catalog.page_cache import cached_page
from catalog.views import clean_address, export_papers, render_paper_list
from core import background
from core.http import safe_methods, signed_in_user

# The For-you tab shows the last 30 days unless the reader picks another period.
FOR_YOU_DEFAULT_PERIOD = "30d"

P = ParamSpec("P")


@require_POST
def set_language(request: HttpRequest) -> HttpResponse:
    """Django's language switch; a logged-in reader's choice is also kept on
    their profile, so it follows them to other devices and into their digests."""
    response = i18n.set_language(request)
    language = request.POST.get("language", "")
    if request.user.is_authenticated and language in dict(settings.LANGUAGES):
        services.set_language(user=request.user, language=language)
        request.session[READER_LANGUAGE_SESSION_KEY] = language
    return response


def _toggle_response(
    request: HttpRequest, *, template: str, context: dict[str, Any], fallback_url: str
) -> HttpResponse:
    """HTMX swaps in the re-rendered toggle; a plain form post goes back where it came from."""
    if request.headers.get("HX-Request"):
        return render(request, template, context)
    next_url = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(
        next_url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        next_url = fallback_url
    # Not redirect(): it would take a `next` like "feed" for a view name to reverse.
    return HttpResponseRedirect(next_url)


@require_POST
def change_subscription(request: HttpRequest, kind: str, key: str, subscribe: bool) -> HttpResponse:
    target = selectors.subscription_target(kind=kind, key=key)
    if not request.user.is_authenticated:
        response = redirect_to_login(target.get_absolute_url())
        services.defer_until_login(
            request=request, response=response, kind=kind, object_id=target.pk
        )
        return response
    if subscribe:
        services.subscribe(user=request.user, target=target)
    else:
        services.unsubscribe(user=request.user, target=target)
    return _toggle_response(
        request,
        template=toggles.SUBSCRIBE_TEMPLATE,
        context=toggles.subscribe_context(
            request=request,
            target=target,
            is_subscribed=subscribe,
            look=request.POST.get("look", "button"),
        ),
        fallback_url=target.get_absolute_url(),
    )


@require_POST
def change_saved(request: HttpRequest, paper_id: int, save: bool) -> HttpResponse:
    paper = selectors.visible_paper(paper_id=paper_id)
    if not request.user.is_authenticated:
        response = redirect_to_login(paper.get_absolute_url())
        services.defer_until_login(
            request=request, response=response, kind="paper", object_id=paper.pk
        )
        return response
    if save:
        services.save_paper(user=request.user, paper=paper)
    else:
        services.unsave_paper(user=request.user, paper=paper)
    return _toggle_response(
        request,
        template=toggles.SAVE_TEMPLATE,
        context=toggles.save_context(request=request, paper_id=paper.pk, is_saved=save),
        fallback_url=paper.get_absolute_url(),
    )


@require_POST
def change_upvote(request: HttpRequest, paper_id: int, upvoted: bool) -> HttpResponse:
    paper = selectors.visible_paper(paper_id=paper_id)
    if not request.user.is_authenticated:
        return redirect_to_login(paper.get_absolute_url())
    wait = votes.retry_after(request, user=request.user)
    if wait is not None:
        response = render(request, "accounts/upvotes_limited.html", {"wait": wait}, status=429)
        response["Retry-After"] = str(wait)
        return response
    if upvoted:
        paper = services.upvote(user=request.user, paper=paper)
    else:
        paper = services.take_back_upvote(user=request.user, paper=paper)
    return _toggle_response(
        request,
        template=toggles.UPVOTE_TEMPLATE,
        context=toggles.upvote_context(
            request=request, paper_id=paper.pk, is_upvoted=upvoted, count=paper.upvote_count
        ),
        fallback_url=paper.get_absolute_url(),
    )


@login_required
@clean_address
def feed(request: HttpRequest) -> HttpResponse:
    profile = signed_in_user(request).profile
    now = timezone.now()
    new_since = selectors.feed_new_since(profile=profile, now=now)
    response = feed_page(request, new_since=new_since, private_feed_token=profile.feed_token)
    if selectors.feed_visit_changed(profile=profile, new_since=new_since, now=now):
        services.record_feed_visit(profile=profile, new_since=new_since, now=now)
    return response


@cached_page(own=True, **LIST_PARAMETERS)
def feed_page(
    request: HttpRequest, *, new_since: datetime.datetime | None, private_feed_token: str
) -> HttpResponse:
    """The feed as this visit marks it, kept until the catalog or the reader changes."""
    user = signed_in_user(request)
    return render_paper_list(
        request,
        papers=selectors.feed_papers(user=user, new_since=new_since),
        template="accounts/feed.html",
        context={
            "new_since": new_since,
            "private_feed_token": private_feed_token,
            "marks_new": True,  # only the feed's papers carry is_new
            "reader_ids": selectors.reader_ids(user=user),
        },
    )


@login_required
@require_POST
def feed_opened(request: HttpRequest, paper_id: int) -> HttpResponse:
    """The reader opened a paper from their feed: site.js tells with a beacon,
    which counts toward trending as a click (once per reader and paper)."""
    user = signed_in_user(request)
    paper = selectors.visible_paper(paper_id=paper_id)
    services.record_feed_click(user=user, paper=paper)
    return HttpResponse(status=204)


@login_required
@clean_address
def for_you(request: HttpRequest) -> HttpResponse:
    """Recent papers ranked for the reader (last 30 days unless a period or dates
    are chosen, or a wider period when the newest papers it could offer are older)."""
    user = signed_in_user(request)
    profile = user.profile
    pending = profile.recommendations_pending
    if profile.recommended_at is None and services.ask_for_first_recommendations(user_id=user.pk):
        # A reader's first visit: their list is computed now, in the background,
        # rather than at night.
        background.send(refresh_recommendations, [user.pk])
        pending = True
    chosen = any(request.GET.get(name) for name in ("period", "from", "to"))
    return for_you_page(
        request,
        period=None if chosen else opening_period(until=profile.recommended_until),
        recommended_at=profile.recommended_at,
        pending=pending,
    )


@cached_page(own=True, **LIST_PARAMETERS)
def for_you_page(
    request: HttpRequest,
    *,
    period: str | None,
    recommended_at: datetime.datetime | None,
    pending: bool,
) -> HttpResponse:
    """For you opening on period (unless the address chooses one), kept until
    the catalog, the reader or their list (recommended_at) changes."""
    params: QueryDict = request.GET
    if period:
        params = params.copy()
        params["period"] = period
    return render_paper_list(
        request,
        papers=selectors.for_you_papers(user=signed_in_user(request)),
        template="accounts/for_you.html",
        params=params,
        ordering=selectors.FOR_YOU_ORDER,
        ordering_label=_("Best match for you"),
        context={
            "for_you": True,
            "recommended_at": recommended_at,
            "recommendations_pending": pending,
        },
    )


def opening_period(*, until: datetime.datetime | None) -> str | None:
    """The period the For-you tab opens on: the last 30 days or, when the newest
    paper the reader's list could offer is older (the demo), the narrowest wider
    period holding it; None for any time."""
    if until is None:
        return FOR_YOU_DEFAULT_PERIOD
    age = timezone.now() - until
    return next(
        (
            period
            for period, days in PERIOD_DAYS.items()
            if days >= PERIOD_DAYS[FOR_YOU_DEFAULT_PERIOD] and age < datetime.timedelta(days=days)
        ),
        None,
    )


@login_required
@require_POST
def dismiss(request: HttpRequest, paper_id: int) -> HttpResponse:
    user = signed_in_user(request)
    paper = selectors.visible_paper(paper_id=paper_id)
    services.dismiss_paper(user=user, paper=paper)
    messages.success(
        request,
        _("You won't be shown “%(title)s” again, and papers like it rank lower.")
        % {"title": paper.title},
    )
    next_url = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(
        next_url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        next_url = reverse("accounts:for-you")
    return HttpResponseRedirect(next_url)


@login_required
@clean_address
def saved(request: HttpRequest) -> HttpResponse:
    user = signed_in_user(request)
    return render_paper_list(
        request,
        papers=selectors.saved_papers(user=user),
        template="accounts/saved.html",
        context={"reader_ids": selectors.reader_ids(user=user)},
    )


def signed_in_or_token(
    view: Callable[Concatenate[HttpRequest, P], StreamingHttpResponse],
) -> Callable[Concatenate[HttpRequest, P], HttpResponse | StreamingHttpResponse]:
    """The signed-in reader, or the one whose API token the request sends as
    `Authorization: Bearer <token>`, so that a script can fetch a reader's
    exports as the API's personal endpoints are fetched. A token that is not one
    is refused (401); with neither, the sign-in page, as login_required has it."""
    signed_in_only = login_required(view)

    @wraps(view)
    def wrapper(
        request: HttpRequest, /, *args: P.args, **kwargs: P.kwargs
    ) -> HttpResponse | StreamingHttpResponse:
        header = request.headers.get("Authorization")
        if header is None or request.user.is_authenticated:
            return signed_in_only(request, *args, **kwargs)
        scheme, _space, secret = header.partition(" ")
        is_bearer = scheme.lower() == "bearer" and secret.strip()
        token = selectors.api_token_for_secret(secret=secret.strip()) if is_bearer else None
        if token is None:
            refused = HttpResponse(
                _("This needs a valid API token, sent as 'Authorization: Bearer <token>'."),
                status=401,
                content_type="text/plain; charset=utf-8",
            )
            refused["WWW-Authenticate"] = 'Bearer realm="exports"'
            return refused
        request.user = token.user
        response = view(request, *args, **kwargs)
        # The reader's own papers: never kept by a shared cache.
        patch_vary_headers(response, ["Authorization"])
        patch_cache_control(response, private=True)
        return response

    return wrapper


@safe_methods
@signed_in_or_token
def export_saved(request: HttpRequest, fmt: str) -> StreamingHttpResponse:
    user = signed_in_user(request)
    papers = selectors.saved_papers(user=user)
    return export_papers(request, papers=papers, fmt=fmt, name="saved-papers")


@safe_methods
@signed_in_or_token
def export_feed(request: HttpRequest, fmt: str) -> StreamingHttpResponse:
    user = signed_in_user(request)
    papers = selectors.subscribed_papers(user=user)
    return export_papers(request, papers=papers, fmt=fmt, name="my-feed")


@login_required
@require_http_methods(["GET", "POST"])
def subscriptions(request: HttpRequest) -> HttpResponse:
    user = signed_in_user(request)
    profile = user.profile
    form = DigestSettingsForm(
        request.POST or None, initial={"digest_frequency": profile.digest_frequency}
    )
    if form.is_valid():
        services.set_digest_frequency(
            profile=profile, frequency=form.cleaned_data["digest_frequency"]
        )
        messages.success(request, _("Your digest settings are saved."))
        return redirect("accounts:subscriptions")
    return render_settings(request, form=form)


@login_required
@require_POST
def public_profile(request: HttpRequest) -> HttpResponse:
    """The reader's display name and whether others see it (their profile, credit)."""
    user = signed_in_user(request)
    form = PublicProfileForm(request.POST, profile=user.profile)
    if form.is_valid():
        try:
            services.set_public_profile(
                profile=user.profile,
                display_name=form.cleaned_data["display_name"],
                public_profile=form.cleaned_data["public_profile"],
                show_upvotes=form.cleaned_data["show_upvotes"],
            )
        except services.DisplayNameTaken:
            form.add_error("display_name", _("Another reader has this name; choose another."))
        else:
            messages.success(request, _("Your public profile settings are saved."))
            return redirect(f"{reverse('accounts:subscriptions')}#public-profile")
    return render_settings(request, profile_form=form, status=400)


def render_settings(
    request: HttpRequest,
    *,
    form: DigestSettingsForm | None = None,
    profile_form: PublicProfileForm | None = None,
    token_form: ApiTokenForm | None = None,
    new_token: dict[str, Any] | None = None,
    status: int = 200,
) -> HttpResponse:
    """The reader's settings page: subscriptions, digests, public profile, private
    feed and API tokens."""
    user = signed_in_user(request)
    profile = user.profile
    context = {
        "form": form or DigestSettingsForm(initial={"digest_frequency": profile.digest_frequency}),
        "profile": profile,
        "profile_form": profile_form or PublicProfileForm(profile=profile),
        "subscriptions": selectors.user_subscriptions(user=user),
        "api_tokens": selectors.user_api_tokens(user=user),
        "token_form": token_form or ApiTokenForm(user=user),
        "new_token": new_token,
    }
    return render(request, "accounts/subscriptions.html", context, status=status)


@login_required
@require_POST
def create_api_token(request: HttpRequest) -> HttpResponse:
    """Make a token and show its secret on the page this once: it is never stored,
    so it is not put in a message (a cookie) or a redirect."""
    user = signed_in_user(request)
    form = ApiTokenForm(request.POST, user=user)
    if not form.is_valid():
        return render_settings(request, token_form=form, status=400)
    token, secret = services.create_api_token(user=user, name=form.cleaned_data["name"])
    return render_settings(request, new_token={"token": token, "secret": secret}, status=201)


@login_required
@require_POST
def revoke_api_token(request: HttpRequest, token_id: int) -> HttpResponse:
    user = signed_in_user(request)
    if services.revoke_api_token(user=user, token_id=token_id):
        messages.success(request, _("The token is revoked; requests with it are now refused."))
    else:
        messages.error(request, _("You have no such token."))
    return redirect("accounts:subscriptions")


@login_required
@require_POST
def regenerate_feed_token(request: HttpRequest) -> HttpResponse:
    user = signed_in_user(request)
    services.regenerate_feed_token(profile=user.profile)
    messages.success(request, _("Your private feed has a new address; the old one stops working."))
    return redirect("accounts:subscriptions")


# Mail clients POST here with no session or CSRF token (RFC 8058 one-click).
# The page names the reader's address: no cache on the way may keep it.
@csrf_exempt
@never_cache
@require_http_methods(["GET", "POST"])
def digest_unsubscribe(request: HttpRequest, token: str) -> HttpResponse:
    try:
        profile = selectors.profile_for_unsubscribe_token(token=token)
    except signing.SignatureExpired:
        context: dict[str, object] = {
            "expired": True,
            "link_days": settings.DIGEST_UNSUBSCRIBE_LINK_DAYS,
        }
        return render(request, "accounts/unsubscribe_invalid.html", context, status=400)
    if profile is None:
        return render(request, "accounts/unsubscribe_invalid.html", status=400)
    # A GET only asks: link checkers in mailboxes open links without a reader.
    if request.method == "POST":
        services.stop_digests(profile=profile)
    context = {"done": request.method == "POST", "email": profile.user.email}
    return render(request, "accounts/unsubscribe.html", context)
