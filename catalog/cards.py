"""Paper cards rendered once per paper version and shared by every reader.

Rendering a list's cards was most of a list page's time. A card's shared HTML
depends only on the paper as the list fetched it, the language and the list's
options, so it is kept in a per-process LRU keyed by a digest of exactly those
values: a changed paper gets a new key, and nothing ever needs invalidating.
What differs per reader is left as slots in the shared HTML, filled on every
request: the "new" badge, the save toggle, each tag's follow chip and, on
For you, why the paper is there and the "not interested" button (all but the
badge by the reader's `ReaderSlots`, which the accounts app puts in every
page's context and on the request). Without Redis this works the same: each
process keeps its own cards.

Whole pages are shared between logged-in readers the same way (catalog.pages):
rendered once with `SlotMarkers` standing in for the reader, which leaves each
of their parts as a slot, and filled for each reader by `fill_slots`.
"""

import re
from typing import Protocol

from django.conf import settings
from django.template.loader import get_template
from django.utils import timezone, translation
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from catalog.models import Category, Paper, Tag
from catalog.trending import WINDOWS
from core.fragments import Fragments, digest

CARD_TEMPLATE = "catalog/_paper_card.html"
# A slot is an HTML comment the escaped paper text cannot contain.
SLOT = "<!--slot:{}-->"


class ReaderSlots(Protocol):
    """The reader's own parts of a page."""

    def save_toggle(self, paper_id: int) -> str: ...

    def follow_chip(self, tag: Tag) -> str: ...

    def subscribe_toggle(self, target: Tag | Category, look: str = "button") -> str: ...

    def account_menu(self) -> str: ...

    def because(self, paper: Paper) -> str: ...

    def dismiss_button(self, paper: Paper) -> str: ...


_cards = Fragments()


def card_key(paper: Paper, *, thumbnails: bool, trending_window: str | None) -> bytes:
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
        paper.updated_at,
        paper.version,
        paper.added_at,
        # A search's marks and the reader's language's summary (catalog.selectors.for_cards).
        getattr(paper, "title_marked", None),
        getattr(paper, "abstract_marked", None),
        getattr(paper, "lead_body", None),
        getattr(paper, "lead_kind", None),
        getattr(paper, "lead_backend", None),
        category and (category.code, category.name),
        [(tag.pk, tag.name, tag.slug) for tag in paper.tags.all()],
        paper.official_code_url,
        thumbnails and paper.thumbnail,
        trending_window in WINDOWS and bool(getattr(paper, WINDOWS[trending_window].column)),
        translation.get_language(),
        timezone.get_current_timezone_name(),
    )
    return digest(*parts)


def shared_card(paper: Paper, *, thumbnails: bool, trending_window: str | None) -> str:
    """The card as every reader sees it, with their slots still open."""
    size = settings.PAPER_CARD_CACHE_SIZE
    key = card_key(paper, thumbnails=thumbnails, trending_window=trending_window) if size else b""
    context = {"paper": paper, "list_thumbnails": thumbnails, "trending_window": trending_window}
    return _cards.get_or_render(key, lambda: get_template(CARD_TEMPLATE).render(context), size=size)


def slot(name: str, *key: object) -> SafeString:
    """Where a reader's part goes in the card template ({% card_slot %})."""
    return mark_safe(SLOT.format(":".join(map(str, (name, *key)))))  # noqa: S308


def paper_card(
    paper: Paper,
    *,
    thumbnails: bool,
    trending_window: str | None,
    marks_new: bool,
    for_you: bool,
    slots: ReaderSlots,
) -> SafeString:
    """The card for this reader: the shared HTML with their slots filled."""
    html = shared_card(paper, thumbnails=thumbnails, trending_window=trending_window)
    badge = ""
    if marks_new and getattr(paper, "is_new", False):
        badge = format_html(
            '<span class="badge new">{}</span>', translation.gettext("New since your last visit")
        )
    html = html.replace(slot("new"), badge, 1).replace(slot("save"), slots.save_toggle(paper.pk), 1)
    html = html.replace(slot("because"), slots.because(paper) if for_you else "", 1)
    html = html.replace(slot("dismiss"), slots.dismiss_button(paper) if for_you else "", 1)
    for tag in paper.tags.all():
        html = html.replace(slot("chip", tag.pk), slots.follow_chip(tag), 1)
    # The shared HTML was escaped when rendered; the slots are the reader's
    # toggles, rendered from the site's own templates.
    return mark_safe(html)  # noqa: S308


# A page's slots, as SlotMarkers leaves them: the part and what names its object.
PAGE_SLOT = re.compile(r"<!--slot:(save|subscribe|account)(?::([^>]*))?-->")


class SlotMarkers:
    """Stands in for the reader while a page every logged-in reader shares is
    rendered: each of their parts is left as a slot, and `targets` notes the
    tags and categories the slots name (stored with the page, for filling)."""

    def __init__(self) -> None:
        self.targets: dict[str, tuple] = {}

    def save_toggle(self, paper_id: int) -> str:
        return slot("save", paper_id)

    def follow_chip(self, tag: Tag) -> str:
        return self.subscribe_toggle(tag, "chip")

    def subscribe_toggle(self, target: Tag | Category, look: str = "button") -> str:
        if isinstance(target, Tag):
            name, fields = f"tag.{target.pk}", (target.name, target.slug)
        else:
            name, fields = f"category.{target.pk}", (target.code, target.name)
        self.targets[name] = fields
        return slot("subscribe", name, look)

    def account_menu(self) -> str:
        return slot("account")

    def because(self, paper: Paper) -> str:
        raise TypeError("For-you pages are the reader's own, never shared.")

    def dismiss_button(self, paper: Paper) -> str:
        raise TypeError("For-you pages are the reader's own, never shared.")


def fill_slots(html: str, *, slots: ReaderSlots, targets: dict[str, tuple]) -> str:
    """A page SlotMarkers left open, with this reader's parts in its slots."""
    parts: dict[str, str] = {}

    def part(match: re.Match) -> str:
        marker = match.group(0)
        if marker not in parts:
            kind, key = match.group(1), match.group(2)
            if kind == "save":
                parts[marker] = slots.save_toggle(int(key))
            elif kind == "subscribe":
                name, look = key.split(":")
                parts[marker] = slots.subscribe_toggle(_target(name, targets[name]), look)
            else:
                parts[marker] = slots.account_menu()
        return parts[marker]

    return PAGE_SLOT.sub(part, html)


def _target(name: str, fields: tuple) -> Tag | Category:
    kind, pk = name.split(".")
    if kind == "tag":
        tag_name, slug = fields
        return Tag(pk=int(pk), name=tag_name, slug=slug)
    code, category_name = fields
    return Category(pk=int(pk), code=code, name=category_name)
