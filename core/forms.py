"""What the stubs cannot tell of a form's fields by their name."""

from django import forms


def choice_field(form: forms.BaseForm, name: str) -> forms.ChoiceField:
    """The form's field of that name, a choice field (whose choices are read or set)."""
    field = form.fields[name]
    if not isinstance(field, forms.ChoiceField):
        raise TypeError(f"{type(form).__name__}'s {name!r} is not a choice field.")
    return field
