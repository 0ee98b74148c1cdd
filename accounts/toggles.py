"""The reader's two toggles, saving a paper and subscribing to a tag or category.

Each is one template (accounts/toggles/) rendered in place on a page and, after
a change, alone as the HTMX swap; both get their context from here.
"""

from django.conf import settings
from django.http import HttpRequest
from django.middleware.csrf import get_token
from django.template.loader import get_template
from django.urls import reverse
from django.utils import translation
from django.utils.functional import cached_property
from django.utils.html import conditional_escape

from catalog.fragments import Fragments, digest
from catalog.models import Category, Paper, Tag

SAVE_TEMPLATE = "accounts/toggles/save.html"
DISMISS_TEMPLATE = "accounts/toggles/dismiss.html"
BECAUSE_TEMPLATE = "accounts/_because.html"
SUBSCRIBE_TEMPLATE = "accounts/toggles/subscribe.html"
# "button" on a tag's or category's own page, "chip" beside a tag on a paper.
SUBSCRIBE_LOOKS = ("button", "chip")


def next_path(request: HttpRequest) -> str:
    # Re-rendered in answer to a POST, the toggle keeps the page it was on.
    return request.POST.get("next") or request.get_full_path()


def save_context(*, request: HttpRequest, paper: Paper, is_saved: bool) -> dict:
    action = "unsave" if is_saved else "save"
    return {
        "paper": paper,
        "is_on": is_saved,
        "next": next_path(request),
        "action_url": reverse(f"accounts:paper-{action}", args=[paper.pk]),
    }


def subscribe_context(
    *, request: HttpRequest, target: Tag | Category, is_subscribed: bool, look: str = "button"
) -> dict:
    kind = "tag" if isinstance(target, Tag) else "category"
    key = target.slug if kind == "tag" else target.code
    action = "unsubscribe" if is_subscribed else "subscribe"
    return {
        "target": target,
        "kind": kind,
        "is_on": is_subscribed,
        "look": look if look in SUBSCRIBE_LOOKS else "button",
        "next": next_path(request),
        "action_url": reverse(f"accounts:{kind}-{action}", args=[key]),
    }


# Toggle variants every process keeps rendered, with stand-ins for the
# reader's CSRF token and the page's address (catalog/fragments.py).
_variants = Fragments()


class ReaderCardSlots:
    """A reader's save toggles and follow chips on a list's shared cards
    (catalog.cards.CardSlots), each variant rendered once per process.

    A save toggle differs between papers only by its address, so each state is
    rendered once with a stand-in for the address; a tag's chip is rendered
    once however many cards carry the tag. The CSRF token and the page's own
    address (`next`) are stand-ins too, filled per page.
    """

    # Neither an address, a token nor the escaped `next` path can hold a NUL.
    STAND_IN = "\x00action\x00"
    CSRF_STAND_IN = "\x00csrf\x00"
    NEXT_STAND_IN = "\x00next\x00"

    def __init__(self, *, request: HttpRequest, saved_paper_ids, subscribed) -> None:
        self.request = request
        self.saved_paper_ids = saved_paper_ids
        self.subscribed = subscribed
        self.rendered: dict[tuple, str] = {}
        self.addresses: dict[str, tuple[str, str]] = {}

    @cached_property
    def csrf_token(self) -> str:
        # One masked token for the page's forms: masking draws 32 random characters.
        return get_token(self.request)

    def _render(self, template: str, values: dict, *, variant: tuple) -> str:
        """The toggle for this page; variant names everything else it shows."""
        authenticated = self.request.user.is_authenticated
        context = {
            **values,
            "user": self.request.user,
            "csrf_token": self.CSRF_STAND_IN,
            "next": self.NEXT_STAND_IN,
        }
        shared = _variants.get_or_render(
            digest(template, variant, authenticated, translation.get_language()),
            lambda: get_template(template).render(context),
            size=settings.PAPER_CARD_CACHE_SIZE,
        )
        return shared.replace(self.CSRF_STAND_IN, self.csrf_token).replace(
            self.NEXT_STAND_IN, conditional_escape(next_path(self.request))
        )

    def _address(self, name: str, pk: int) -> str:
        # One reverse() per address name and page, not one per card.
        if name not in self.addresses:
            prefix, _, suffix = reverse(name, args=[1]).rpartition("/1/")
            self.addresses[name] = (f"{prefix}/", f"/{suffix}")
        prefix, suffix = self.addresses[name]
        return f"{prefix}{pk}{suffix}"

    def save_toggle(self, paper: Paper) -> str:
        is_saved = paper.pk in self.saved_paper_ids
        key = ("save", is_saved)
        if key not in self.rendered:
            values = save_context(request=self.request, paper=paper, is_saved=is_saved)
            self.rendered[key] = self._render(
                SAVE_TEMPLATE, {**values, "action_url": self.STAND_IN}, variant=key
            )
        action = "unsave" if is_saved else "save"
        return self.rendered[key].replace(
            self.STAND_IN, self._address(f"accounts:paper-{action}", paper.pk)
        )

    def follow_chip(self, tag: Tag) -> str:
        if not self.request.user.is_authenticated:
            return ""
        key = ("chip", tag.pk)
        if key not in self.rendered:
            values = subscribe_context(
                request=self.request,
                target=tag,
                is_subscribed=tag.pk in self.subscribed.tag_ids,
                look="chip",
            )
            self.rendered[key] = self._render(
                SUBSCRIBE_TEMPLATE,
                values,
                variant=(tag.pk, tag.name, tag.slug, values["is_on"], values["action_url"]),
            )
        return self.rendered[key]

    def because(self, paper: Paper) -> str:
        # Each paper's own reason: rendered per card, on For you only.
        return get_template(BECAUSE_TEMPLATE).render({"paper": paper})

    def dismiss_button(self, paper: Paper) -> str:
        if "dismiss" not in self.rendered:
            values = {"next": next_path(self.request), "action_url": self.STAND_IN}
            self.rendered["dismiss"] = self._render(DISMISS_TEMPLATE, values, variant=())
        return self.rendered["dismiss"].replace(
            self.STAND_IN, self._address("accounts:for-you-dismiss", paper.pk)
        )
