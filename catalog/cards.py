"""Paper cards rendered once per paper version and shared by every reader.

Rendering a list's cards was most of a list page's time. A card's shared HTML
depends only on the rows it shows, the list's options, the language and time
zone, and its template, so it is kept in a per-process LRU
(PAPER_CARD_CACHE_SIZE) keyed on exactly those: the paper's, its tags' and
its category's versions (`changed_at`, moved by every write, see
catalog.changes), the options, and a digest of the template's source. A
changed paper gets a new key, and nothing ever needs invalidating. What
differs per reader is left as slots in the shared HTML, filled on every
request: the "new" badge, the comment count (which moves no version), and the
reader's parts (catalog.page_cache.ReaderParts): the upvote and save toggles,
each tag's follow chip and, on For you, why the paper is there and the "not
interested" button. Without Redis this works the same:
each process keeps its own cards.
"""

from django.template.loader import get_template
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from catalog.models import Paper
from catalog.page_cache import ReaderParts, comment_link, slot
from catalog.passages import Passage
from catalog.trending import WINDOWS
from core.fragments import Fragments, digest, template_digest

CARD_TEMPLATE = "catalog/_paper_card.html"

_cards = Fragments("PAPER_CARD_CACHE_SIZE")


def card_key(
    paper: Paper, *, thumbnails: bool, trending_window: str | None, passage: Passage | None = None
) -> bytes:
    """What changes the shared card: the versions of the rows it shows, the
    list's options (thumbnails, a search's marks and passage, and whether this paper wears
    the trending badge, a score the periodic refresh rewrites without moving
    versions), the language and time zone, and the template."""
    category = paper.primary_category
    return digest(
        paper.pk,
        paper.changed_at,
        [(tag.pk, tag.changed_at) for tag in paper.tags.all()],
        category and (category.pk, category.changed_at),
        thumbnails,
        # A search's marks depend on the query, not on the rows (catalog.selectors.for_cards).
        getattr(paper, "title_marked", None),
        getattr(paper, "abstract_marked", None),
        passage,
        # Whether it came for its meaning alone (catalog.search): its card says so.
        bool(getattr(paper, "closeness", 0)) and not getattr(paper, "word_match", True),
        trending_window in WINDOWS and bool(getattr(paper, WINDOWS[trending_window].column)),
        translation.get_language(),
        timezone.get_current_timezone_name(),
        template_digest(CARD_TEMPLATE),
    )


def shared_card(
    paper: Paper, *, thumbnails: bool, trending_window: str | None, passage: Passage | None = None
) -> str:
    """The card as every reader sees it, with their slots still open; passage:
    where a full-text search found the paper's text (catalog.passages)."""
    key = card_key(paper, thumbnails=thumbnails, trending_window=trending_window, passage=passage)
    context = {
        "paper": paper,
        "list_thumbnails": thumbnails,
        "trending_window": trending_window,
        "passage": passage,
    }
    return _cards.get_or_render(key, lambda: get_template(CARD_TEMPLATE).render(context))


def discussion_link(paper: Paper, *, parts: ReaderParts) -> str:
    if paper.arxiv_id:
        url = reverse("discussion:page", args=[paper.arxiv_id])
    else:
        url = reverse("discussion:page-by-pk", args=[paper.pk])
    return comment_link(parts, paper_id=paper.pk, count=paper.comment_count, url=url)


def paper_card(
    paper: Paper,
    *,
    thumbnails: bool,
    trending_window: str | None,
    marks_new: bool,
    for_you: bool,
    parts: ReaderParts,
    passage: Passage | None = None,
) -> SafeString:
    """The card for this reader: the shared HTML with their slots filled."""
    html = shared_card(
        paper, thumbnails=thumbnails, trending_window=trending_window, passage=passage
    )
    badge = ""
    if marks_new and getattr(paper, "is_new", False):
        badge = format_html(
            '<span class="badge new">{}</span>', translation.gettext("New since your last visit")
        )
    html = html.replace(slot("new"), badge, 1).replace(slot("save"), parts.save_toggle(paper.pk), 1)
    html = html.replace(slot("upvote"), parts.upvote_toggle(paper.pk, paper.upvote_count), 1)
    html = html.replace(slot("comments"), discussion_link(paper, parts=parts), 1)
    html = html.replace(slot("because"), parts.because(paper) if for_you else "", 1)
    html = html.replace(slot("dismiss"), parts.dismiss_button(paper) if for_you else "", 1)
    for tag in paper.tags.all():
        html = html.replace(slot("chip", tag.pk), parts.follow_chip(tag), 1)
    # The shared HTML was escaped when rendered; the slots are the reader's
    # toggles, rendered from the site's own templates.
    return mark_safe(html)  # noqa: S308
