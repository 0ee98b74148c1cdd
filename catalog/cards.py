"""Paper cards rendered once per paper version and shared by every reader.

Rendering a list's cards was most of a list page's time. A card's shared HTML
depends only on the paper as the list fetched it, the language and the list's
options, so it is kept in a per-process LRU keyed by a digest of exactly those
values: a changed paper gets a new key, and nothing ever needs invalidating.
What differs per reader is left as slots in the shared HTML, filled on every
request: the "new" badge, and the reader's parts (catalog.page_cache.ReaderParts):
the save toggle, each tag's follow chip and, on For you, why the paper is
there and the "not interested" button. Without Redis this works the same:
each process keeps its own cards.
"""

from django.conf import settings
from django.template.loader import get_template
from django.utils import timezone, translation
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from catalog.models import Paper
from catalog.page_cache import ReaderParts, slot
from catalog.trending import WINDOWS
from core.fragments import Fragments, digest

CARD_TEMPLATE = "catalog/_paper_card.html"

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
        paper.added_at,
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


def paper_card(
    paper: Paper,
    *,
    thumbnails: bool,
    trending_window: str | None,
    marks_new: bool,
    for_you: bool,
    parts: ReaderParts,
) -> SafeString:
    """The card for this reader: the shared HTML with their slots filled."""
    html = shared_card(paper, thumbnails=thumbnails, trending_window=trending_window)
    badge = ""
    if marks_new and getattr(paper, "is_new", False):
        badge = format_html(
            '<span class="badge new">{}</span>', translation.gettext("New since your last visit")
        )
    html = html.replace(slot("new"), badge, 1).replace(slot("save"), parts.save_toggle(paper.pk), 1)
    html = html.replace(slot("because"), parts.because(paper) if for_you else "", 1)
    html = html.replace(slot("dismiss"), parts.dismiss_button(paper) if for_you else "", 1)
    for tag in paper.tags.all():
        html = html.replace(slot("chip", tag.pk), parts.follow_chip(tag), 1)
    # The shared HTML was escaped when rendered; the slots are the reader's
    # toggles, rendered from the site's own templates.
    return mark_safe(html)  # noqa: S308
