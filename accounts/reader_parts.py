"""The reader's own parts of a page (catalog.page_cache.ReaderParts): save
and upvote toggles, follow chips and subscribe buttons, the account menu and, on For
you, why a paper is there and the button that drops it.

`reader_parts` is the factory settings.READER_PARTS names: the catalog asks
it once a request, for pages it renders or fills from the cache.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from django.contrib.auth.models import AnonymousUser, User
from django.http import HttpRequest
from django.template.loader import get_template
from django.utils import translation
from django.utils.functional import SimpleLazyObject, cached_property
from django.utils.html import conditional_escape

from accounts import selectors, toggles
from catalog.models import Author, Category, Paper, Tag
from core.fragments import Fragments, address_parts, digest, template_digest
from core.http import page_csrf_token

if TYPE_CHECKING:
    from core.typing import WithAnnotations

ACCOUNT_MENU_TEMPLATE = "accounts/account_menu.html"
DISMISS_TEMPLATE = "accounts/toggles/dismiss.html"
BECAUSE_TEMPLATE = "accounts/_because.html"

# Toggle variants every process keeps rendered, with stand-ins for the
# reader's CSRF token and the page's address (core/fragments.py).
_variants = Fragments("READER_PARTS_CACHE_SIZE")
# Reasons on For you: many cards share one (a saved paper, a followed tag).
_reasons = Fragments("FOR_YOU_REASONS_CACHE_SIZE")


@dataclass(frozen=True)
class ReaderState:
    tag_ids: frozenset[int] = field(default_factory=frozenset)
    category_ids: frozenset[int] = field(default_factory=frozenset)
    author_ids: frozenset[int] = field(default_factory=frozenset)

    def follows(self, kind: str, pk: int) -> bool:
        ids = {"tag": self.tag_ids, "category": self.category_ids, "author": self.author_ids}
        return pk in ids[kind]


class AccountReaderParts:
    """A reader's parts of a page, each variant rendered once per process.

    A save toggle differs between papers only by its address, so each state is
    rendered once with a stand-in for the address; a tag's chip is rendered
    once however many cards carry the tag. The CSRF token and the page's own
    address (`next`) are stand-ins too, filled per page.
    """

    # Neither an address, a token nor the escaped `next` path can hold a NUL.
    STAND_IN = "\x00action\x00"
    COUNT_STAND_IN = "\x00count\x00"
    CSRF_STAND_IN = "\x00csrf\x00"
    NEXT_STAND_IN = "\x00next\x00"

    def __init__(
        self,
        *,
        request: HttpRequest,
        saved_paper_ids: "frozenset[int] | SimpleLazyObject[frozenset[int]]",
        subscribed: "ReaderState | SimpleLazyObject[ReaderState]",
        upvoted_paper_ids: "frozenset[int] | SimpleLazyObject[frozenset[int]]" = frozenset(),
    ) -> None:
        self.request = request
        # Error pages can be rendered before authentication has run (a request
        # with a foreign Host is refused by the first middleware): no reader then.
        self.user: User | AnonymousUser = getattr(request, "user", None) or AnonymousUser()
        self.saved_paper_ids = saved_paper_ids
        self.upvoted_paper_ids = upvoted_paper_ids
        self.subscribed = subscribed
        # By variant (see _render), or by name for the parts with a single one.
        self.rendered: dict[tuple[object, ...] | str, str] = {}
        self.addresses: dict[str, tuple[str, str]] = {}

    @property
    def csrf_token(self) -> str:
        return page_csrf_token(self.request)

    @cached_property
    def log_in_address(self) -> str:
        # An anonymous reader's upvote toggles all lead to log in and back here.
        return conditional_escape(toggles.log_in_to_upvote_url(self.request))

    def _render(
        self, template: str, values: Callable[[], dict[str, Any]], *, variant: tuple[object, ...]
    ) -> str:
        """The part for this page; variant names everything else it shows, and
        values() gives the template's context when the process has no copy."""
        authenticated = self.user.is_authenticated

        def render() -> str:
            context = {
                **values(),
                "user": self.user,
                "csrf_token": self.CSRF_STAND_IN,
                "next": self.NEXT_STAND_IN,
            }
            return get_template(template).render(context)

        shared = _variants.get_or_render(
            digest(template_digest(template), variant, authenticated, translation.get_language()),
            render,
        )
        return shared.replace(self.CSRF_STAND_IN, self.csrf_token).replace(
            self.NEXT_STAND_IN, conditional_escape(toggles.next_path(self.request))
        )

    def _address(self, name: str, pk: int) -> str:
        # One reverse() per address name and page, not one per card.
        if name not in self.addresses:
            self.addresses[name] = address_parts(name)
        prefix, suffix = self.addresses[name]
        return f"{prefix}{pk}{suffix}"

    def save_toggle(self, paper_id: int) -> str:
        is_saved = paper_id in self.saved_paper_ids
        key = ("save", is_saved)
        if key not in self.rendered:
            self.rendered[key] = self._render(
                toggles.SAVE_TEMPLATE,
                lambda: {
                    **toggles.save_context(
                        request=self.request, paper_id=paper_id, is_saved=is_saved
                    ),
                    "action_url": self.STAND_IN,
                },
                variant=key,
            )
        action = "unsave" if is_saved else "save"
        return self.rendered[key].replace(
            self.STAND_IN, self._address(f"accounts:paper-{action}", paper_id)
        )

    def upvote_toggle(self, paper_id: int, count: int) -> str:
        is_upvoted = paper_id in self.upvoted_paper_ids
        key = ("upvote", is_upvoted)
        if key not in self.rendered:
            self.rendered[key] = self._render(
                toggles.UPVOTE_TEMPLATE,
                lambda: {
                    **toggles.upvote_context(
                        request=self.request, paper_id=paper_id, is_upvoted=is_upvoted, count=0
                    ),
                    "action_url": self.STAND_IN,
                    "count": self.COUNT_STAND_IN,
                },
                variant=key,
            )
        if self.user.is_authenticated:
            action = "take-back" if is_upvoted else "upvote"
            address = self._address(f"accounts:paper-{action}", paper_id)
        else:
            address = self.log_in_address
        html = self.rendered[key].replace(self.COUNT_STAND_IN, str(count))
        return html.replace(self.STAND_IN, address)

    def subscribe_toggle(self, target: Tag | Category | Author, look: str = "button") -> str:
        kind, address = toggles.subscription_address(target)
        key = (kind, target.pk, look)
        if key not in self.rendered:
            is_on = self.subscribed.follows(kind, target.pk)
            self.rendered[key] = self._render(
                toggles.SUBSCRIBE_TEMPLATE,
                lambda: toggles.subscribe_context(
                    request=self.request, target=target, is_subscribed=is_on, look=look
                ),
                variant=(kind, target.pk, target.name, address, is_on, look),
            )
        return self.rendered[key]

    def follow_chip(self, tag: Tag) -> str:
        return self.subscribe_toggle(tag, "chip") if self.user.is_authenticated else ""

    def because(self, paper: Paper) -> str:
        # Asked only on For you, whose papers come from selectors.for_you_papers.
        paper = cast("WithAnnotations[Paper, selectors.Because]", paper)
        reason = (
            paper.because_paper_pk,
            paper.because_paper_title,
            paper.because_paper_arxiv_id,
            paper.because_tag_name,
            paper.because_tag_slug,
        )
        return _reasons.get_or_render(
            digest(template_digest(BECAUSE_TEMPLATE), reason, translation.get_language()),
            lambda: get_template(BECAUSE_TEMPLATE).render({"paper": paper}),
        )

    def account_menu(self) -> str:
        if not self.user.is_authenticated:  # it links to log in and back to this page
            context = {"user": self.user, "request": self.request, "csrf_token": self.csrf_token}
            return get_template(ACCOUNT_MENU_TEMPLATE).render(context)
        # Each reader's menu names their address.
        return self._render(ACCOUNT_MENU_TEMPLATE, dict, variant=(self.user.email,))

    def dismiss_button(self, paper: Paper) -> str:
        if "dismiss" not in self.rendered:
            values = {"action_url": self.STAND_IN}
            self.rendered["dismiss"] = self._render(DISMISS_TEMPLATE, lambda: values, variant=())
        return self.rendered["dismiss"].replace(
            self.STAND_IN, self._address("accounts:for-you-dismiss", paper.pk)
        )


def reader_parts(request: HttpRequest) -> AccountReaderParts:
    """The request's reader's parts (settings.READER_PARTS), their state read
    (in one query) only when a part needs it."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return AccountReaderParts(
            request=request,
            subscribed=ReaderState(),
            saved_paper_ids=frozenset(),
            upvoted_paper_ids=frozenset(),
        )
    ids = SimpleLazyObject(lambda: selectors.reader_ids(user=user))
    return AccountReaderParts(
        request=request,
        subscribed=SimpleLazyObject(
            lambda: ReaderState(
                tag_ids=ids["tag_ids"],
                category_ids=ids["category_ids"],
                author_ids=ids["author_ids"],
            )
        ),
        saved_paper_ids=SimpleLazyObject(lambda: ids["saved_paper_ids"]),
        upvoted_paper_ids=SimpleLazyObject(lambda: ids["upvoted_paper_ids"]),
    )
