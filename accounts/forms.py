from typing import Any

from allauth.account.adapter import get_adapter
from django import forms
from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.models import User
from django.utils.translation import gettext_lazy as _

from accounts.models import ApiToken, Profile


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
