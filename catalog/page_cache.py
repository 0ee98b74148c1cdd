"""Whole catalog pages in the catalog cache (catalog.cache), for every reader,
and the reader's own parts of a page.

A page is stored once for anonymous readers and once for every logged-in
reader of a language to share. The shared one is rendered with
`SharedPageSlots` standing in for the reader, which leaves each of their parts
(the ReaderParts: save toggles, follow chips, subscribe buttons, the account
menu, upvote toggles) as a slot; each reader gets it with their own parts in the slots
(fill_slots). The parts come from the accounts app, which the catalog does
not import: settings.READER_PARTS names the factory that makes them for a
request, and the catalog calls it once a request (reader_parts). Templates
get them from the context processor `template_reader_parts`.

Upvote toggles show counts that change with every vote, which move no
catalog version: every stored page, anonymous readers' too, leaves them as
slots, filled on the way out with counts read for the page's papers at once
(upvote_counts), kept for a few seconds. Comment counts go the same way
(comment_counts): a comment moves no version, so it leaves every other
stored page as it was.
"""

import datetime
import functools
import re
from collections.abc import Callable, Iterable
from functools import partial, wraps
from typing import Any, Protocol, overload

from django.conf import settings
from django.contrib import messages
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse
from django.utils import translation
from django.utils.html import escape, format_html
from django.utils.module_loading import import_string
from django.utils.safestring import SafeString, mark_safe
from django.utils.timesince import timesince

from catalog.cache import (
    cache_key,
    canonical_query,
    catalog_cache,
    catalog_version,
    noted_catalog_version,
    reader_version,
    trending_version,
    votes_version,
)
from catalog.models import Author, Category, Paper, Tag
from core.http import page_csrf_token

CSRF_PLACEHOLDER = "__catalog_csrf_token__"
CSRF_INPUT = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
# A slot is an HTML comment the escaped paper text cannot contain.
SLOT = "<!--slot:{}-->"
# A page's slots, as SharedPageSlots leaves them: the part and what names its object.
PAGE_SLOT = re.compile(
    r"<!--slot:(save|upvote|subscribe|account|comment-link|comment-count|since)(?::([^>]*))?-->"
)
# A page's upvote counts are read again after this long (or at once after a
# vote: forget_upvote_counts), so others' votes show within seconds.
UPVOTE_COUNT_SECONDS = 5
# What a slot names, by the slot's name: a tag's name and slug, a category's code and
# name, an author's name and slug.
Targets = dict[str, tuple[str, str]]
View = Callable[..., HttpResponse]


class ReaderParts(Protocol):
    """The reader's own parts of a page, as HTML."""

    def save_toggle(self, paper_id: int) -> str: ...

    # The paper's counted upvotes (Paper.upvote_count) and the reader's own.
    def upvote_toggle(self, paper_id: int, count: int) -> str: ...

    def follow_chip(self, tag: Tag) -> str: ...

    def subscribe_toggle(self, target: Tag | Category | Author, look: str = "button") -> str: ...

    def account_menu(self) -> str: ...

    # On For you, which is the reader's own page: why the paper is there, and
    # the button that drops it.
    def because(self, paper: Paper) -> str: ...

    def dismiss_button(self, paper: Paper) -> str: ...


def slot(name: str, *key: object) -> SafeString:
    """Where a reader's part goes in a shared page or card."""
    return mark_safe(SLOT.format(":".join(map(str, (name, *key)))))  # noqa: S308


class SharedPageSlots:
    """Stands in for the reader while a page every logged-in reader shares is
    rendered: each of their parts is left as a slot, and `targets` notes the
    tags and categories the slots name (stored with the page, for filling)."""

    def __init__(self) -> None:
        self.targets: Targets = {}

    def save_toggle(self, paper_id: int) -> str:
        return slot("save", paper_id)

    def upvote_toggle(self, paper_id: int, count: int) -> str:
        return slot("upvote", paper_id)

    def follow_chip(self, tag: Tag) -> str:
        return self.subscribe_toggle(tag, "chip")

    def subscribe_toggle(self, target: Tag | Category | Author, look: str = "button") -> str:
        if isinstance(target, Tag):
            name, fields = f"tag.{target.pk}", (target.name, target.slug)
        elif isinstance(target, Author):
            name, fields = f"author.{target.pk}", (target.name, target.slug)
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


class OpenCounts:
    """Stands in for the reader while a page to store for every anonymous
    reader, or for this logged-in reader alone (their feed, For you), is
    rendered: their parts, but upvote toggles (and comment counts) left as slots."""

    def __init__(self, parts: ReaderParts) -> None:
        self.parts = parts

    def save_toggle(self, paper_id: int) -> str:
        return self.parts.save_toggle(paper_id)

    def upvote_toggle(self, paper_id: int, count: int) -> str:
        return slot("upvote", paper_id)

    def follow_chip(self, tag: Tag) -> str:
        return self.parts.follow_chip(tag)

    def subscribe_toggle(self, target: Tag | Category | Author, look: str = "button") -> str:
        return self.parts.subscribe_toggle(target, look)

    def account_menu(self) -> str:
        return self.parts.account_menu()

    def because(self, paper: Paper) -> str:
        return self.parts.because(paper)

    def dismiss_button(self, paper: Paper) -> str:
        return self.parts.dismiss_button(paper)


def _count_key(paper_id: int) -> str:
    return f"catalog:upvotes:{paper_id}"


def _comment_count_key(paper_id: int) -> str:
    return f"catalog:comments:{paper_id}"


def page_counts(
    *, upvoted: Iterable[int], commented: Iterable[int]
) -> tuple[dict[int, int], dict[int, int]]:
    """The papers' counted upvotes and shown comments (Paper.upvote_count,
    Paper.comment_count): from the cache in one read, and those it lacks in
    one query, kept for UPVOTE_COUNT_SECONDS."""
    keys = {
        **{_count_key(paper_id): ("upvote_count", paper_id) for paper_id in upvoted},
        **{_comment_count_key(paper_id): ("comment_count", paper_id) for paper_id in commented},
    }
    counts: dict[str, dict[int, int]] = {"upvote_count": {}, "comment_count": {}}
    if not keys:
        return counts["upvote_count"], counts["comment_count"]
    cache = catalog_cache()
    found = cache.get_many(keys.keys())
    for key, count in found.items():
        column, paper_id = keys[key]
        counts[column][paper_id] = count
    missing = {paper_id for key, (_, paper_id) in keys.items() if key not in found}
    if missing:
        read = Paper.objects.filter(pk__in=missing).values_list(
            "pk", "upvote_count", "comment_count"
        )
        kept = {}
        for paper_id, upvotes, comments in read:
            kept[_count_key(paper_id)] = upvotes
            kept[_comment_count_key(paper_id)] = comments
        cache.set_many(
            {key: count for key, count in kept.items() if key in keys}, UPVOTE_COUNT_SECONDS
        )
        for key, count in kept.items():
            if key in keys and key not in found:
                column, paper_id = keys[key]
                counts[column][paper_id] = count
    return counts["upvote_count"], counts["comment_count"]


def upvote_counts(paper_ids: Iterable[int]) -> dict[int, int]:
    """The papers' counted upvotes: from the cache, and those it lacks in one query."""
    return page_counts(upvoted=paper_ids, commented=())[0]


def forget_upvote_counts(paper_ids: Iterable[int]) -> None:
    """After votes changed the papers' counts (and committed): read them again."""
    catalog_cache().delete_many([_count_key(paper_id) for paper_id in paper_ids])


def comment_counts(paper_ids: Iterable[int]) -> dict[int, int]:
    """The papers' shown comments (Paper.comment_count): from the cache, and
    those it lacks in one query, kept as long as upvote counts."""
    return page_counts(upvoted=(), commented=paper_ids)[1]


def forget_comment_counts(paper_ids: Iterable[int]) -> None:
    """After comments changed the papers' counts (and committed): read them again."""
    catalog_cache().delete_many([_comment_count_key(paper_id) for paper_id in paper_ids])


def is_stored_for_others(parts: ReaderParts) -> bool:
    """Whether the page rendering now is stored for other readers (a stand-in
    renders it), so that counts which move no version are left as slots."""
    return isinstance(parts, SharedPageSlots | OpenCounts)


def comments_text(count: int) -> str:
    return translation.ngettext("%(counter)s comment", "%(counter)s comments", count) % {
        "counter": count
    }


def comment_link(parts: ReaderParts, *, paper_id: int, count: int, url: str) -> str:
    """A card's link to the paper's discussion with its count, none without
    comments; a slot on a page stored for others."""
    if is_stored_for_others(parts):
        return slot("comment-link", paper_id, url)
    if not count:
        return ""
    return format_html(
        '<a class="action-link comment-count" href="{}">{}</a>', url, comments_text(count)
    )


def comment_count(parts: ReaderParts, *, paper_id: int, count: int) -> str:
    """ "N comments", or a slot on a page stored for others."""
    if is_stored_for_others(parts):
        return slot("comment-count", paper_id)
    return escape(comments_text(count))


def time_since(parts: ReaderParts, moment: datetime.datetime) -> SafeString:
    """How long ago moment was ("3 hours, 5 minutes"), or a slot on a stored
    page, filled on the way out: the page is kept for minutes."""
    if is_stored_for_others(parts):
        return slot("since", int(moment.timestamp()))
    return escape(timesince(moment))


def fill_slots(html: str, *, parts: ReaderParts, targets: Targets) -> str:
    """A page SharedPageSlots (or OpenCounts) left open, with this reader's
    parts in its slots: the page is read once, its counts in one read."""
    # Text, then each slot's kind and key, then the text after it, and so on.
    pieces = PAGE_SLOT.split(html)
    slots = [(pieces[n], pieces[n + 1]) for n in range(1, len(pieces), 3)]
    counts, comments = page_counts(
        upvoted={int(key) for kind, key in slots if kind == "upvote"},
        commented={int(key.split(":", 1)[0]) for kind, key in slots if kind.startswith("comment")},
    )
    filled: dict[tuple[str, str], str] = {}
    for n, (kind, key) in enumerate(slots):
        if (kind, key) not in filled:
            filled[kind, key] = _slot_part(
                kind, key, parts=parts, targets=targets, counts=counts, comments=comments
            )
        pieces[3 * n + 1], pieces[3 * n + 2] = filled[kind, key], ""
    return "".join(pieces)


def _slot_part(
    kind: str,
    key: str,
    *,
    parts: ReaderParts,
    targets: Targets,
    counts: dict[int, int],
    comments: dict[int, int],
) -> str:
    if kind == "save":
        return parts.save_toggle(int(key))
    if kind == "upvote":
        # A paper gone since the page was stored shows none.
        return parts.upvote_toggle(int(key), counts.get(int(key), 0))
    if kind == "comment-link":
        paper_id, url = key.split(":", 1)
        count = comments.get(int(paper_id), 0)
        return comment_link(parts, paper_id=int(paper_id), count=count, url=url)
    if kind == "comment-count":
        return comment_count(parts, paper_id=int(key), count=comments.get(int(key), 0))
    if kind == "since":
        return time_since(parts, datetime.datetime.fromtimestamp(int(key), datetime.UTC))
    if kind == "subscribe":
        name, look = key.split(":")
        return parts.subscribe_toggle(_target(name, targets[name]), look)
    return parts.account_menu()


def _target(name: str, fields: tuple[str, str]) -> Tag | Category | Author:
    kind, pk = name.split(".")
    if kind == "tag":
        tag_name, slug = fields
        return Tag(pk=int(pk), name=tag_name, slug=slug)
    if kind == "author":
        author_name, slug = fields
        return Author(pk=int(pk), name=author_name, slug=slug)
    code, category_name = fields
    return Category(pk=int(pk), code=code, name=category_name)


@functools.cache
def _reader_parts_factory() -> Callable[[HttpRequest], ReaderParts]:
    factory: Callable[[HttpRequest], ReaderParts] = import_string(settings.READER_PARTS)
    return factory


@receiver(setting_changed)
def _forget_factory(*, setting: str, **kwargs: Any) -> None:
    if setting == "READER_PARTS":
        _reader_parts_factory.cache_clear()


def reader_parts(request: HttpRequest) -> ReaderParts:
    """The parts of this request's reader: made by settings.READER_PARTS once a
    request, or the stand-in while a page they share with others renders."""
    parts: ReaderParts | None = getattr(request, "_reader_parts", None)
    if parts is None:
        parts = _reader_parts_factory()(request)
        _keep_reader_parts(request, parts)
    return parts


def _keep_reader_parts(request: HttpRequest, parts: ReaderParts | None) -> None:
    # Kept on the request itself, which Django's stubs do not let have more attributes.
    request._reader_parts = parts  # type: ignore[attr-defined]


def template_reader_parts(request: HttpRequest) -> dict[str, ReaderParts]:
    """Context processor: the reader's parts, for the templates' tags
    ({% save_toggle %}, {% subscribe_toggle %}, {% account_menu %}, the cards)."""
    return {"reader_parts": reader_parts(request)}


def _render_shared(
    view: View, request: HttpRequest, *args: Any, **kwargs: Any
) -> tuple[HttpResponse, Targets]:
    """The view's page with slots for the reader's parts, and what the slots name."""
    stand_in = SharedPageSlots()
    return _render_with(stand_in, view, request, *args, **kwargs), stand_in.targets


def _render_with(
    stand_in: ReaderParts, view: View, request: HttpRequest, *args: Any, **kwargs: Any
) -> HttpResponse:
    own = getattr(request, "_reader_parts", None)
    _keep_reader_parts(request, stand_in)
    try:
        return view(request, *args, **kwargs)
    finally:
        _keep_reader_parts(request, own)


@overload
def cached_page(
    view: View,
    *,
    single: Iterable[str] = (),
    multiple: Iterable[str] = (),
    trending: bool = False,
    own: bool = False,
) -> View: ...


@overload
def cached_page(
    view: None = None,
    *,
    single: Iterable[str] = (),
    multiple: Iterable[str] = (),
    trending: bool = False,
    own: bool = False,
) -> Callable[[View], View]: ...


def cached_page(
    view: View | None = None,
    *,
    single: Iterable[str] = (),
    multiple: Iterable[str] = (),
    trending: bool = False,
    own: bool = False,
) -> View | Callable[[View], View]:
    """Serve the view's successful GET (and HEAD) pages from the cache.

    The view sees only the query parameters it declares (single- and
    multi-valued names), in canonical form; anything else is ignored, so
    neither made-up parameters nor reordered ones add entries. Entries are
    kept per scheme, host, language and canonical address, one for anonymous
    readers and one every logged-in reader shares, filled with each reader's
    parts on the way out. Pages are stored with their CSRF tokens (the
    language menu posts a form) replaced by a placeholder and each reader gets
    their own on the way out. Readers with a message waiting get the view
    itself. Pages sorted by trending (all of them with trending=True, else
    those asked with sort=trending) are also keyed on the trending scores'
    version, and pages sorted by votes on the votes version. Upvote counts
    are slots on every stored page, anonymous or not, filled on the way out.

    own=True: a logged-in reader's own page (their feed, For you), one entry
    per reader, also keyed on the reader's version (reader_version: any
    change of theirs leaves it behind at once) and on the keyword arguments
    the view is given beyond the address's (what it read of the reader's
    profile). Anonymous readers and readers whose version is not known get
    the view itself.
    """
    if view is None:
        return partial(cached_page, single=single, multiple=multiple, trending=trending, own=own)

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        canonical = canonical_query(request.GET, single=single, multiple=multiple)
        # Django lets a request's GET be replaced; its stubs type it as the one parsed.
        request.GET = canonical  # type: ignore[assignment]
        request.META["QUERY_STRING"] = request.GET.urlencode()
        if request.method not in ("GET", "HEAD") or len(messages.get_messages(request)):
            return view(request, *args, **kwargs)
        shared = request.user.is_authenticated
        # A logged-in reader's entry came with the catalog's version (accounts.reader_cache).
        version = noted_catalog_version(request.user) or catalog_version()
        if version is None:
            return view(request, *args, **kwargs)
        owner: tuple[str, ...] = ()
        if own:
            read_under = reader_version(request.user)
            if read_under is None:
                return view(request, *args, **kwargs)
            owner = (str(request.user.pk), str(read_under), repr(sorted(kwargs.items())))
        cache = catalog_cache()
        address = request.build_absolute_uri()
        sort = request.GET.get("sort")
        if trending or sort == "trending":
            scores = str(trending_version())
        elif sort == "votes":
            scores = f"votes:{votes_version()}"
        else:
            scores = ""
        kind = "own-page" if own else "reader-page" if shared else "page"
        language = translation.get_language() or ""
        key = cache_key(kind, version, language, address, scores, *owner)
        stored = cache.get(key)
        if stored is not None:
            content_type, body, targets = stored
            body = body.replace(CSRF_PLACEHOLDER, page_csrf_token(request))
            body = fill_slots(body, parts=reader_parts(request), targets=targets)
            return HttpResponse(body, content_type=content_type)
        if shared and not own:
            response, targets = _render_shared(view, request, *args, **kwargs)
        else:
            stand_in = OpenCounts(reader_parts(request))
            response, targets = _render_with(stand_in, view, request, *args, **kwargs), {}
        storable = response.status_code == 200 and not response.cookies
        if response.streaming:
            return response
        body = response.content.decode(response.charset)
        if storable:
            stored_body = body
            for token in set(CSRF_INPUT.findall(stored_body)):
                stored_body = stored_body.replace(token, CSRF_PLACEHOLDER)
            cache.set(
                key,
                (response["Content-Type"], stored_body, targets),
                settings.CATALOG_CACHE_SECONDS,
            )
        response.content = fill_slots(body, parts=reader_parts(request), targets=targets)
        return response

    return wrapper
