"""Paper cards rendered once per paper version and shared by every reader.

Rendering a list's cards was most of a list page's time. A card's shared HTML
depends only on the paper as the list fetched it, the language and the list's
options, so it is kept in a per-process LRU keyed by a digest of exactly those
values: a changed paper gets a new key, and nothing ever needs invalidating.
What differs per reader is left as slots in the shared HTML, filled on every
request: the "new" badge, the save toggle and each tag's follow chip (the last
two by the reader's `CardSlots`, which the accounts app puts in every page's
context). Without Redis this works the same: each process keeps its own cards.
"""

import hashlib
import threading
from collections import OrderedDict
from typing import Protocol

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.template.loader import get_template
from django.utils import timezone, translation
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from catalog.models import Paper, Tag

CARD_TEMPLATE = "catalog/_paper_card.html"
# A slot is an HTML comment the escaped paper text cannot contain.
SLOT = "<!--slot:{}-->"


class CardSlots(Protocol):
    """The reader's own parts of a card."""

    def save_toggle(self, paper: Paper) -> str: ...

    def follow_chip(self, tag: Tag) -> str: ...


class _LRU:
    def __init__(self) -> None:
        self.entries: OrderedDict[bytes, str] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: bytes) -> str | None:
        with self.lock:
            html = self.entries.get(key)
            if html is not None:
                self.entries.move_to_end(key)
            return html

    def put(self, key: bytes, html: str, *, size: int) -> None:
        with self.lock:
            self.entries[key] = html
            while len(self.entries) > size:
                self.entries.popitem(last=False)


_cards = _LRU()


@receiver(setting_changed)
def _forget_cards(**kwargs) -> None:
    # Cards show addresses built from settings; tests change settings at run time.
    with _cards.lock:
        _cards.entries.clear()


def card_key(paper: Paper, *, thumbnails: bool) -> bytes:
    """A digest of everything the shared card shows (see templates/catalog/_paper_card.html)."""
    category = paper.primary_category
    parts = (
        paper.pk,
        paper.arxiv_id,
        paper.title,
        paper.abstract,
        paper.author_list,
        paper.published_at,
        paper.published_precision,
        paper.added_at,
        category and (category.code, category.name),
        [(tag.pk, tag.name, tag.slug) for tag in paper.tags.all()],
        paper.official_code_url,
        thumbnails and paper.thumbnail,
        translation.get_language(),
        timezone.get_current_timezone_name(),
    )
    return hashlib.blake2b(repr(parts).encode(), digest_size=16).digest()


def shared_card(paper: Paper, *, thumbnails: bool) -> str:
    """The card as every reader sees it, with their slots still open."""
    size = settings.PAPER_CARD_CACHE_SIZE
    key = card_key(paper, thumbnails=thumbnails) if size else b""
    html = _cards.get(key) if size else None
    if html is None:
        html = get_template(CARD_TEMPLATE).render({"paper": paper, "list_thumbnails": thumbnails})
        if size:
            _cards.put(key, html, size=size)
    return html


def slot(name: str, *key: object) -> SafeString:
    """Where a reader's part goes in the card template ({% card_slot %})."""
    return mark_safe(SLOT.format(":".join(map(str, (name, *key)))))  # noqa: S308


def paper_card(paper: Paper, *, thumbnails: bool, marks_new: bool, slots: CardSlots) -> SafeString:
    """The card for this reader: the shared HTML with their slots filled."""
    html = shared_card(paper, thumbnails=thumbnails)
    badge = ""
    if marks_new and getattr(paper, "is_new", False):
        badge = format_html(
            '<span class="badge new">{}</span>', translation.gettext("New since your last visit")
        )
    html = html.replace(slot("new"), badge, 1).replace(slot("save"), slots.save_toggle(paper), 1)
    for tag in paper.tags.all():
        html = html.replace(slot("chip", tag.pk), slots.follow_chip(tag), 1)
    # The shared HTML was escaped when rendered; the slots are the reader's
    # toggles, rendered from the site's own templates.
    return mark_safe(html)  # noqa: S308
