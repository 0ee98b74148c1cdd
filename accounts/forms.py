from typing import Any

from allauth.account.adapter import get_adapter
from django import forms
from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.models import User
from django.utils.translation import gettext_lazy as _

from accounts import display_names
from accounts.models import NAME_TAKEN, ApiToken, Profile


class DigestSettingsForm(forms.Form):
    digest_frequency = forms.ChoiceField(
        label=_("Email digest of new papers"),
        choices=Profile.DigestFrequency.choices,
        widget=forms.RadioSelect,
    )


class PublicProfileForm(forms.Form):
    """The reader's public name and what they let others see under it."""

    display_name = forms.CharField(
        label=_("Display name"),
        required=False,
        # Longer names are refused by the validator, with a message that says why.
        max_length=display_names.MAX_LENGTH * 4,
        strip=True,
        help_text=_(
            "%(min)d to %(max)d letters or digits; hyphens, underscores and dots may join them."
        )
        % {"min": display_names.MIN_LENGTH, "max": display_names.MAX_LENGTH},
        widget=forms.TextInput(attrs={"autocomplete": "nickname", "spellcheck": "false"}),
    )
    public_profile = forms.BooleanField(
        label=_("Show my public profile and credit me on the papers I suggested or added"),
        required=False,
    )
    show_upvotes = forms.BooleanField(
        label=_("List the papers I upvoted on my public profile"), required=False
    )

    def __init__(self, *args: Any, profile: Profile, **kwargs: Any) -> None:
        kwargs.setdefault(
            "initial",
            {
                "display_name": profile.display_name,
                "public_profile": profile.public_profile,
                "show_upvotes": profile.show_upvotes,
            },
        )
        super().__init__(*args, **kwargs)
        self.profile = profile

    def clean_display_name(self) -> str:
        name: str = self.cleaned_data["display_name"]
        if not name:
            return ""
        display_names.validate_display_name(name)
        if self.profile.name_taken(name):
            raise forms.ValidationError(NAME_TAKEN, code="taken")
        return name

    def clean(self) -> dict[str, Any] | None:
        cleaned = super().clean()
        if (
            cleaned
            and cleaned.get("public_profile")
            and not cleaned.get("display_name")
            and "display_name" not in self.errors
        ):
            self.add_error("display_name", _("Choose a display name to make your profile public."))
        return cleaned


class ApiTokenForm(forms.Form):
    """A name for a new API token, within the reader's allowance of tokens."""

    name = forms.CharField(
        label=_("Token name"),
        max_length=100,
        widget=forms.TextInput(attrs={"placeholder": _("e.g. my reading script")}),
    )

    def __init__(self, *args: Any, user: User, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.user = user

    def clean(self) -> dict[str, Any] | None:
        cleaned = super().clean()
        if ApiToken.objects.filter(user=self.user).count() >= settings.API_TOKENS_PER_READER:
            raise forms.ValidationError(
                _("You have %(count)d tokens, the most a reader may have; revoke one first.")
                % {"count": settings.API_TOKENS_PER_READER}
            )
        return cleaned


class AdminLoginForm(AdminAuthenticationForm):
    """The admin's log-in, authenticated through allauth's adapter like the site's,
    so both share one throttle and lock-out (ACCOUNT_RATE_LIMITS "login_failed")."""

    def clean(self) -> dict[str, Any]:
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
