"""Curation hooks for the admin: (re)generating summaries, and protecting curators' edits."""

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from catalog.enrichment.queue import queue_summaries
from catalog.models import Paper, Summary


def _queue(request: HttpRequest, queryset: QuerySet[Paper], **options: bool) -> None:
    ids = list(queryset.values_list("pk", flat=True))
    queue_summaries(paper_ids=ids, **options)
    messages.success(request, f"Queued {len(ids)} papers for summaries.")


@admin.action(description="Generate summaries")
def generate_summaries(modeladmin, request: HttpRequest, queryset: QuerySet[Paper]) -> None:
    _queue(request, queryset)


@admin.action(description="Regenerate summaries (overwrite machine output, keep curator edits)")
def regenerate_summaries(modeladmin, request: HttpRequest, queryset: QuerySet[Paper]) -> None:
    _queue(request, queryset, regenerate=True)


@admin.action(description="Regenerate summaries, overwriting curator edits too")
def regenerate_summaries_overwriting_curator_edits(
    modeladmin, request: HttpRequest, queryset: QuerySet[Paper]
) -> None:
    _queue(request, queryset, regenerate=True, overwrite_curator=True)


SUMMARY_ACTIONS = [
    generate_summaries,
    regenerate_summaries,
    regenerate_summaries_overwriting_curator_edits,
]


class CuratorSummaryForm(forms.ModelForm):
    """A summary whose text a curator changes is theirs: regeneration leaves it alone."""

    class Meta:
        model = Summary
        fields = [
            "paper",
            "language",
            "kind",
            "status",
            "body",
            "backend",
            "written_by",
            "model_name",
            "prompt_version",
            "curator_edited",
        ]

    def save(self, commit: bool = True) -> Summary:
        if "body" in self.changed_data:
            self.instance.curator_edited = True
        return super().save(commit=commit)
