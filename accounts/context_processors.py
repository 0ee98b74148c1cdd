"""What a page needs to know about the reader, fetched only if a template asks."""

from django.http import HttpRequest

from accounts.toggles import reader_slots


def reader(request: HttpRequest) -> dict:
    own = reader_slots(request)
    return {
        "subscribed": own.subscribed,
        "saved_paper_ids": own.saved_paper_ids,
        # Where the reader's parts of the page come from: their own, or slots
        # while a page shared by every reader is rendered (catalog.pages).
        "card_slots": getattr(request, "card_slots", own),
    }
