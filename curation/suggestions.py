"""Readers suggest papers; curators approve them (added from arXiv by link) or decline them."""

import datetime

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Count, QuerySet
from django.utils import timezone

from catalog import curation, trending
from catalog.changes import catalog_changed
from catalog.models import CurationEvent, Paper, ReaderSignal, Tag
from curation.models import SuggestedPaper, Suggestion
from ingest import links, tasks
from ingest.models import LinkRequest

State = SuggestedPaper.State
SUGGEST = ReaderSignal.Kind.SUGGEST
# Reader suggestions shown on their page, newest first.
SHOWN_SUGGESTIONS = 200


def suggestions_today(*, user: User, now: datetime.datetime | None = None) -> int:
    since = (now or timezone.now()) - datetime.timedelta(days=1)
    return Suggestion.objects.filter(user=user, created_at__gte=since).count()


def reader_suggestions(*, user: User) -> list[Suggestion]:
    """The reader's suggestions, newest first, with their paper's state."""
    return list(
        Suggestion.objects.filter(user=user)
        .select_related("suggested_paper__paper", "tag")
        .order_by("-created_at", "-id")[:SHOWN_SUGGESTIONS]
    )


@transaction.atomic
def suggest(*, user: User, arxiv_id: str, link: str, tag: Tag | None, note: str) -> Suggestion:
    """Record the reader's suggestion.

    Readers suggesting one paper share its SuggestedPaper, each with a row of
    their own; a reader suggesting it again changes nothing.
    """
    now = timezone.now()
    suggested, created = SuggestedPaper.objects.get_or_create(
        arxiv_id=arxiv_id,
        defaults={"paper": Paper.objects.filter(arxiv_id=arxiv_id).first(), "created_at": now},
    )
    suggestion, new = Suggestion.objects.get_or_create(
        user=user,
        suggested_paper=suggested,
        defaults={"link": link, "tag": tag, "note": note, "created_at": now},
    )
    if new and not created:
        SuggestedPaper.objects.filter(pk=suggested.pk).update(last_suggested_at=now)
        if suggested.state == State.ADDED:  # its page counts who suggested it
            catalog_changed()
    paper_id = suggested.paper_id
    if paper_id is None and not created:  # since added another way
        paper_id = Paper.objects.filter(arxiv_id=arxiv_id).values_list("pk", flat=True).first()
    if paper_id:
        # A paper already in the catalog trends from the suggestion on; one
        # added from it, once it is added (settle_suggestions).
        trending.record_signal(paper_id=paper_id, reader_id=user.pk, kind=SUGGEST, at=now)
    return suggestion


def suggest_in_catalog(*, user: User, paper: Paper) -> None:
    """A reader suggested a paper the catalog already shows: nothing for the
    curators, but a trending signal like a suggestion of a paper added later."""
    trending.record_signal(paper_id=paper.pk, reader_id=user.pk, kind=SUGGEST)


def approve(
    *, suggested: QuerySet[SuggestedPaper], tags: list[Tag], by: User
) -> LinkRequest | None:
    """Add the suggested papers from arXiv, with the tags, as curators add by link.

    The suggestions become "added" (or "not found on arXiv") when that
    request finishes; see settle_suggestions.
    """
    chosen = dict(suggested.exclude(state=State.ADDED).values_list("pk", "arxiv_id"))
    if not chosen:
        return None
    with transaction.atomic():
        request = links.request_papers(
            text="\n".join(chosen.values()), tags=tags, note="approved reader suggestions", by=by
        )
        SuggestedPaper.objects.filter(pk__in=list(chosen)).update(
            state=State.APPROVED,
            reviewed_by=by,
            reviewed_at=timezone.now(),
            link_request=request,
            decline_reason="",
        )
        tasks.queue_link_request(request_id=request.pk)
    return request


@transaction.atomic
def decline(*, suggested: QuerySet[SuggestedPaper], reason: str, by: User) -> int:
    """Decline the suggestions with the reason their readers will see."""
    chosen = list(
        suggested.exclude(state=State.ADDED)
        .annotate(readers=Count("suggestions"))
        .values_list("pk", "arxiv_id", "readers")
    )
    SuggestedPaper.objects.filter(pk__in=[pk for pk, _, _ in chosen]).update(
        state=State.DECLINED, decline_reason=reason, reviewed_by=by, reviewed_at=timezone.now()
    )
    readers = {arxiv_id: count for _, arxiv_id, count in chosen}
    in_catalog = dict(
        Paper.objects.filter(arxiv_id__in=list(readers)).values_list("arxiv_id", "pk")
    )
    declined = CurationEvent.Action.SUGGESTION_DECLINED
    curation.record_each(
        {
            pk: f"{_readers(readers[arxiv_id])}: {reason}"
            for arxiv_id, pk in in_catalog.items()
            if arxiv_id is not None  # found by its arXiv id
        },
        declined,
        by=by,
    )
    # A paper the catalog does not have is logged by the id it was suggested as.
    curation.record_about(
        {
            f"arXiv:{arxiv_id}": f"{_readers(count)}: {reason}"
            for arxiv_id, count in readers.items()
            if arxiv_id not in in_catalog
        },
        declined,
        by=by,
    )
    return len(chosen)


def _readers(count: int) -> str:
    return f"suggested by {count} reader" + ("s" if count != 1 else "")


@transaction.atomic
def settle_suggestions(*, request: LinkRequest) -> None:
    """After adding by link: suggestions of the papers now in the catalog are added;
    those approved into this request that arXiv did not have are not found, and
    those it could not store wait for a curator again."""
    lines = {
        line.arxiv_id: line
        for line in map(links.Line.from_json, request.lines)
        if line.arxiv_id and line.result != links.Result.REPEATED
    }
    open_suggestions = list(
        SuggestedPaper.objects.select_for_update().filter(
            arxiv_id__in=list(lines), state__in=[State.PENDING, State.APPROVED]
        )
    )
    readers = dict(
        Suggestion.objects.filter(suggested_paper__in=open_suggestions)
        .values("suggested_paper")
        .annotate(count=Count("id"))
        .values_list("suggested_paper", "count")
    )
    now = timezone.now()
    approved: dict[int, str] = {}
    not_on_arxiv: dict[str, str] = {}
    settled: list[SuggestedPaper] = []
    for suggested in open_suggestions:
        line = lines[suggested.arxiv_id]
        ours = suggested.link_request_id == request.pk
        if line.result in links.IN_CATALOG:
            suggested.state, suggested.paper_id = State.ADDED, line.paper_id
            if not ours:  # added by a curator who did not start from the suggestion
                suggested.reviewed_by, suggested.reviewed_at = request.requested_by, now
            if line.paper_id is not None:  # a line in the catalog names its paper
                approved[line.paper_id] = _readers(readers.get(suggested.pk, 0))
        elif ours and line.result in (links.Result.NOT_FOUND, links.Result.UNREADABLE):
            suggested.state = State.NOT_FOUND
            not_on_arxiv[f"arXiv:{suggested.arxiv_id}"] = (
                f"{_readers(readers.get(suggested.pk, 0))}: {line.result.label}"
            )
        elif ours:
            suggested.state = State.PENDING
        else:
            continue
        settled.append(suggested)
    SuggestedPaper.objects.bulk_update(
        settled, ["state", "paper", "reviewed_by", "reviewed_at"], batch_size=500
    )
    # Each reader who suggested a paper now added signals it, as of now: it
    # could not trend before it was here.
    added = {
        each.pk: each.paper_id
        for each in settled
        if each.state == State.ADDED and each.paper_id is not None
    }
    readers_of = Suggestion.objects.filter(suggested_paper__in=list(added)).values_list(
        "suggested_paper", "user"
    )
    trending.record_signals(
        pairs=[(added[suggested_id], user_id) for suggested_id, user_id in readers_of],
        kind=SUGGEST,
        at=now,
    )
    by = request.requested_by or request.actor or "unknown"
    curation.record_each(approved, CurationEvent.Action.SUGGESTION_APPROVED, by=by)
    curation.record_about(not_on_arxiv, CurationEvent.Action.SUGGESTION_APPROVED, by=by)
    if added:  # the papers' pages credit their suggesters now
        catalog_changed()
