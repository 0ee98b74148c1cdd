from typing import Any

from django import forms
from django.conf import settings
from django.contrib.auth.models import User
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from catalog.arxiv_ids import parse_pasted
from catalog.models import Paper, Tag
from curation.models import Suggestion
from curation.suggestions import suggestions_today


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

    def __init__(self, *args: Any, user: User, **kwargs: Any) -> None:
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
                    str(_('It is already in the catalog: <a href="{url}">{title}</a>.')),
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

    def clean(self) -> dict[str, Any] | None:
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
