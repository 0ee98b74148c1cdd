"""Who found a paper: the readers who suggested it and the curator who added it,
named on its page only if they chose a public name (accounts.Profile).

`with_credits` is the function settings.PAPER_CREDITS names: the catalog's
paper page query calls it (catalog.selectors.paper_for_page), so the credit
comes as three columns of the paper's own row, not a query of its own. The
`{% paper_credits %}` tag (curation/templatetags/credits.py) writes them out.
"""

from dataclasses import dataclass

from django.db.models import Count, IntegerField, OuterRef, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from accounts.models import Profile
from catalog.models import CurationEvent, Paper
from curation.models import SuggestedPaper, Suggestion

ADDED = SuggestedPaper.State.ADDED


def _public(profiles: QuerySet[Profile]) -> QuerySet[Profile]:
    return profiles.filter(public_profile=True, user__is_active=True).exclude(display_name="")


def accepted_suggestions() -> QuerySet[Suggestion]:
    """Suggestions of papers the curators took in."""
    return Suggestion.objects.filter(suggested_paper__state=ADDED)


def with_credits(papers: QuerySet[Paper]) -> QuerySet[Paper]:
    """The papers with `credit_suggester` (the first public reader who suggested
    the paper, by date), `credit_suggesters` (how many readers suggested it) and
    `credit_curator` (the public name of the curator who added it by link, if
    they have one)."""
    suggestions = accepted_suggestions().filter(suggested_paper__paper=OuterRef("pk"))
    # The suggestion_paper_created index orders the paper's suggestions.
    first_suggester = (
        suggestions.filter(user__is_active=True, user__profile__public_profile=True)
        .exclude(user__profile__display_name="")
        .order_by("created_at", "id")
        .values("user__profile__display_name")[:1]
    )
    suggesters = suggestions.order_by().values("suggested_paper").annotate(n=Count("id"))
    adder = (
        CurationEvent.objects.filter(
            paper=OuterRef(OuterRef("pk")),
            action=CurationEvent.Action.ADDED,
            user__isnull=False,
        )
        .order_by("created_at", "id")
        .values("user")[:1]
    )
    curator = _public(Profile.objects.filter(user=Subquery(adder))).values("display_name")[:1]
    return papers.annotate(
        credit_suggester=Subquery(first_suggester),
        credit_suggesters=Coalesce(
            Subquery(suggesters.values("n"), output_field=IntegerField()), Value(0)
        ),
        credit_curator=Subquery(curator),
    )


@dataclass(frozen=True)
class Credit:
    """What a paper's page says of who found it."""

    suggester: str | None
    others: int
    curator: str | None

    @classmethod
    def of(cls, paper: Paper) -> "Credit":
        suggester: str | None = getattr(paper, "credit_suggester", None)
        suggesters: int = getattr(paper, "credit_suggesters", 0) or 0
        curator: str | None = getattr(paper, "credit_curator", None)
        return cls(
            suggester=suggester,
            others=max(suggesters - 1, 0) if suggester else 0,
            curator=curator,
        )

    def __bool__(self) -> bool:
        return bool(self.suggester or self.curator)
