from django import forms
from django.utils.translation import gettext_lazy as _

from answers.services import QUESTION_CHARACTERS


class QuestionForm(forms.Form):
    question = forms.CharField(
        label=_("Your question"),
        min_length=3,
        max_length=QUESTION_CHARACTERS,
        help_text=_("Answered from the paper's own text, with the passages quoted."),
        error_messages={
            "required": _("Please write a question."),
            "min_length": _("Please write a question of a few words."),
            "max_length": _("A question is at most %(limit_value)d characters."),
        },
    )
