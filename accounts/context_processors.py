"""What a page needs to know about the reader, fetched only if a template asks."""

from dataclasses import dataclass, field

from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from accounts import selectors
from accounts.toggles import ReaderCardSlots


@dataclass(frozen=True)
class ReaderState:
    tag_ids: frozenset[int] = field(default_factory=frozenset)
    category_ids: frozenset[int] = field(default_factory=frozenset)


def reader(request: HttpRequest) -> dict:
    # Error pages can be rendered before authentication has run (a request
    # with a foreign Host is refused by the first middleware): no reader then.
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        state = {"subscribed": ReaderState(), "saved_paper_ids": frozenset()}
    else:
        # Both come from one query, made when a template first asks for either.
        ids = SimpleLazyObject(lambda: selectors.reader_ids(user=user))
        state = {
            "subscribed": SimpleLazyObject(
                lambda: ReaderState(tag_ids=ids["tag_ids"], category_ids=ids["category_ids"])
            ),
            "saved_paper_ids": SimpleLazyObject(lambda: ids["saved_paper_ids"]),
        }
    if user is not None:
        state["card_slots"] = ReaderCardSlots(request=request, **state)
    return state
