from django import forms
from django.utils.translation import gettext_lazy as _

from accounts.models import Profile


class DigestSettingsForm(forms.Form):
    digest_frequency = forms.ChoiceField(
        label=_("Email digest of new papers"),
        choices=Profile.DigestFrequency.choices,
        widget=forms.RadioSelect,
    )
