from django.contrib import admin
from django.http import HttpRequest

from answers.models import Answer


@admin.register(Answer)
class AnswerAdmin(admin.ModelAdmin):
    """Kept answers, for a curator to read and to delete one that misleads
    (the next reader's question is then answered anew)."""

    list_display = ["question", "paper", "version", "status", "model", "served", "created_at"]
    list_filter = ["status"]
    search_fields = ["question_key", "paper__arxiv_id"]
    raw_id_fields = ["paper"]
    readonly_fields = [
        "paper",
        "version",
        "question_key",
        "question",
        "status",
        "text",
        "passages",
        "model",
        "created_at",
        "served",
    ]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
