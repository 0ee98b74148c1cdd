from allauth.account.adapter import get_adapter
from django import forms
from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from accounts.models import ApiToken, Profile, Suggestion
from accounts.suggestions import suggestions_today
from catalog.arxiv_ids import parse_pasted
from catalog.models import Paper, Tag


class DigestSettingsForm(forms.Form):
    digest_frequency = forms.ChoiceField(
        label=_("Email digest of new papers"),
        choices=Profile.DigestFrequency.choices,
        widget=forms.RadioSelect,
    )


class ApiTokenForm(forms.Form):
    """A name for a new API token, within the reader's allowance of tokens."""

    name = forms.CharField(
        label=_("Token name"),
        max_length=100,
        widget=forms.TextInput(attrs={"placeholder": _("e.g. my reading script")}),
    )

    def __init__(self, *args, user, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.user = user

    def clean(self) -> dict:
        cleaned = super().clean()
        if ApiToken.objects.filter(user=self.user).count() >= settings.API_TOKENS_PER_READER:
            raise forms.ValidationError(
                _("You have %(count)d tokens, the most a reader may have; revoke one first.")
                % {"count": settings.API_TOKENS_PER_READER}
            )
        return cleaned


class SuggestionForm(forms.Form):
    """A reader's suggestion: one arXiv link or id, an optional tag and a short note."""

    link = forms.CharField(
        label=_("arXiv link or id"),
        max_length=500,
        widget=forms.TextInput(
            attrs={"placeholder": "https://arxiv.org/abs/2505.15034", "autocomplete": "off"}
        ),
    )
    tag = forms.ModelChoiceField(
        label=_("Tag (optional)"),
        queryset=Tag.objects.order_by("name"),
        required=False,
        empty_label=_("No tag"),
    )
    note = forms.CharField(
        label=_("Why it matters (optional)"),
        max_length=500,
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
    )

    def __init__(self, *args, user, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.user = user
        # Set when the link names a paper already in the catalog: not a
        # suggestion, but still the reader's interest in it.
        self.paper_in_catalog: Paper | None = None

    def clean_link(self) -> str:
        link = " ".join(self.cleaned_data["link"].split())
        items = parse_pasted(link)
        ids = {item.arxiv_id for item in items if item.arxiv_id}
        if len(ids) > 1:
            raise forms.ValidationError(_("One paper at a time, please."))
        if not ids:
            raise forms.ValidationError(
                _("That is not an arXiv link or id. Try one like 2505.15034 or its arXiv page.")
            )
        self.arxiv_id = ids.pop()
        paper = Paper.objects.visible().filter(arxiv_id=self.arxiv_id).first()
        if paper is not None:
            self.paper_in_catalog = paper
            raise forms.ValidationError(
                format_html(
                    _('It is already in the catalog: <a href="{url}">{title}</a>.'),
                    url=paper.get_absolute_url(),
                    title=paper.title,
                )
            )
        if Suggestion.objects.filter(
            user=self.user, suggested_paper__arxiv_id=self.arxiv_id
        ).exists():
            raise forms.ValidationError(_("You have already suggested this paper."))
        return link

    def clean_note(self) -> str:
        # One line of plain text: no control characters, runs of spaces folded.
        return " ".join(
            "".join(
                ch for ch in self.cleaned_data["note"] if ch.isprintable() or ch.isspace()
            ).split()
        )

    def clean(self) -> dict:
        cleaned = super().clean()
        if suggestions_today(user=self.user) >= settings.SUGGESTIONS_PER_DAY:
            raise forms.ValidationError(
                _(
                    "You have made %(count)d suggestions in the last day, the most a reader "
                    "may. Thank you! Please come back tomorrow."
                )
                % {"count": settings.SUGGESTIONS_PER_DAY}
            )
        return cleaned


class AdminLoginForm(AdminAuthenticationForm):
    """The admin's log-in, authenticated through allauth's adapter like the site's,
    so both share one throttle and lock-out (ACCOUNT_RATE_LIMITS "login_failed")."""

    def clean(self) -> dict:
        username = self.cleaned_data.get("username")
        password = self.cleaned_data.get("password")
        if username is not None and password:
            adapter = get_adapter(self.request)
            self.user_cache = adapter.authenticate(
                self.request, username=username, password=password
            )
            if self.user_cache is None:
                raise self.get_invalid_login_error()
            self.confirm_login_allowed(self.user_cache)
        return self.cleaned_data
