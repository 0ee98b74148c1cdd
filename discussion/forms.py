from django import forms
from django.utils.translation import gettext_lazy as _

# The largest id a database key holds: a bigger number names no comment.
MAX_ID = 2**63 - 1


class CommentForm(forms.Form):
    body = forms.CharField(
        label=_("Your comment"),
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text=_("Markdown and $math$ are welcome."),
    )
    parent = forms.IntegerField(
        required=False, widget=forms.HiddenInput, min_value=1, max_value=MAX_ID
    )
    # Left empty by people (it is hidden from them); bots fill every field.
    website = forms.CharField(required=False, label=_("Leave this field empty"))


class ReportForm(forms.Form):
    reason = forms.CharField(label=_("What is wrong with it?"), required=False, max_length=500)
