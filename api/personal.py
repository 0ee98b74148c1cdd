"""A reader's own lists, with their API token: the feed, saved papers, subscriptions;
and their upvotes, under the papers.

Writes go through accounts.services, as the site's save, upvote and subscribe buttons do.
"""

from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from ninja import Query, Router

from accounts import selectors, services, votes
from api import auth, schemas
from api.http import keep_private
from api.public import ERRORS, ItemFields, Paging, list_answer
from api.queries import paper_by_ref
from api.schemas import PaperFilters
from catalog.models import Author, Category, Paper, Tag

router = Router(auth=auth.ReaderToken(), tags=["me"])
# A reader's upvote of a paper, under /papers/ (added before the public
# router, whose /papers/{ref} would otherwise take these addresses).
papers_router = Router(auth=auth.ReaderToken(), tags=["me"])

WRITE_ERRORS = {**ERRORS, 404: schemas.Error}


@router.get("/feed", response={200: schemas.PaperPage, **ERRORS}, exclude_unset=True)
def feed(
    request: HttpRequest,
    response: HttpResponse,
    filters: Query[PaperFilters],
    paging: Query[Paging],
    fields: Query[ItemFields],
) -> dict[str, Any]:
    """New papers in the tags and categories the reader follows, with the list filters."""
    keep_private(response)
    papers = selectors.subscribed_papers(user=auth.reader_of(request))
    return list_answer(
        request, response, papers=papers, filters=filters, paging=paging, fields=fields
    )


@router.get("/saved", response={200: schemas.PaperPage, **ERRORS}, exclude_unset=True)
def saved(
    request: HttpRequest,
    response: HttpResponse,
    filters: Query[PaperFilters],
    paging: Query[Paging],
    fields: Query[ItemFields],
) -> dict[str, Any]:
    """The reader's saved papers, with the list filters."""
    keep_private(response)
    papers = selectors.saved_papers(user=auth.reader_of(request))
    return list_answer(
        request, response, papers=papers, filters=filters, paging=paging, fields=fields
    )


@router.put("/saved/{path:ref}", response={200: schemas.SavedState, **WRITE_ERRORS})
def save(request: HttpRequest, ref: str) -> dict[str, Any]:
    """Save a paper (by arXiv id or stable id); saving it again changes nothing."""
    paper = paper_by_ref(ref, papers=Paper.objects.visible())
    services.save_paper(user=auth.reader_of(request), paper=paper)
    return {"id": paper.pk, "arxiv_id": paper.arxiv_id, "saved": True}


@router.delete("/saved/{path:ref}", response={200: schemas.SavedState, **WRITE_ERRORS})
def unsave(request: HttpRequest, ref: str) -> dict[str, Any]:
    """Take a paper off the reader's saved papers."""
    paper = paper_by_ref(ref, papers=Paper.objects.visible())
    services.unsave_paper(user=auth.reader_of(request), paper=paper)
    return {"id": paper.pk, "arxiv_id": paper.arxiv_id, "saved": False}


@router.get("/subscriptions", response={200: schemas.Subscriptions, **ERRORS})
def subscriptions(request: HttpRequest, response: HttpResponse) -> dict[str, Any]:
    """The tags, categories and authors the reader follows."""
    keep_private(response)
    rows = selectors.user_subscriptions(user=auth.reader_of(request))
    return {
        "tags": [{"slug": row.tag.slug, "name": row.tag.name} for row in rows if row.tag],
        "categories": [
            {"code": row.category.code, "name": row.category.name} for row in rows if row.category
        ],
        "authors": [
            {"slug": row.author.slug, "name": row.author.name} for row in rows if row.author
        ],
    }


def change(
    request: HttpRequest, target: Tag | Category | Author, *, subscribe: bool
) -> dict[str, Any]:
    if subscribe:
        services.subscribe(user=auth.reader_of(request), target=target)
    else:
        services.unsubscribe(user=auth.reader_of(request), target=target)
    if isinstance(target, Category):
        return {"kind": "category", "key": target.code, "subscribed": subscribe}
    kind = "tag" if isinstance(target, Tag) else "author"
    return {"kind": kind, "key": target.slug, "subscribed": subscribe}


def tag_named(slug: str) -> Tag:
    return get_object_or_404(Tag, slug=slug)


def category_named(code: str) -> Category:
    return get_object_or_404(Category, code=code)


@router.put("/subscriptions/tags/{slug}", response={200: schemas.SubscriptionState, **WRITE_ERRORS})
def subscribe_tag(request: HttpRequest, slug: str) -> dict[str, Any]:
    """Follow a tag (by slug)."""
    return change(request, tag_named(slug), subscribe=True)


@router.delete(
    "/subscriptions/tags/{slug}", response={200: schemas.SubscriptionState, **WRITE_ERRORS}
)
def unsubscribe_tag(request: HttpRequest, slug: str) -> dict[str, Any]:
    """Stop following a tag."""
    return change(request, tag_named(slug), subscribe=False)


@router.put(
    "/subscriptions/categories/{path:code}",
    response={200: schemas.SubscriptionState, **WRITE_ERRORS},
)
def subscribe_category(request: HttpRequest, code: str) -> dict[str, Any]:
    """Follow a category (by code, e.g. cs.CL)."""
    return change(request, category_named(code), subscribe=True)


@router.delete(
    "/subscriptions/categories/{path:code}",
    response={200: schemas.SubscriptionState, **WRITE_ERRORS},
)
def unsubscribe_category(request: HttpRequest, code: str) -> dict[str, Any]:
    """Stop following a category."""
    return change(request, category_named(code), subscribe=False)


def author_named(slug: str) -> Author:
    return get_object_or_404(Author, slug=slug)


@router.put(
    "/subscriptions/authors/{author}", response={200: schemas.SubscriptionState, **WRITE_ERRORS}
)
def subscribe_author(request: HttpRequest, author: str) -> dict[str, Any]:
    """Follow an author (by the slug of their page): their papers come into the
    feed, the digest and the private feed."""
    return change(request, author_named(author), subscribe=True)


@router.delete(
    "/subscriptions/authors/{author}", response={200: schemas.SubscriptionState, **WRITE_ERRORS}
)
def unsubscribe_author(request: HttpRequest, author: str) -> dict[str, Any]:
    """Stop following an author."""
    return change(request, author_named(author), subscribe=False)


def change_vote(request: HttpRequest, ref: str, *, upvoted: bool) -> dict[str, Any]:
    paper = paper_by_ref(ref, papers=Paper.objects.visible())
    user = auth.reader_of(request)
    wait = votes.retry_after(request, user=user)
    auth.note_allowances(request, ("votes", f"reader:{user.pk}", settings.VOTE_RATE_LIMIT))
    if wait is not None:
        raise auth.RateLimited(retry_after=wait)
    if upvoted:
        paper = services.upvote(user=user, paper=paper)
    else:
        paper = services.take_back_upvote(user=user, paper=paper)
    return {
        "id": paper.pk,
        "arxiv_id": paper.arxiv_id,
        "upvoted": upvoted,
        "upvotes": paper.upvote_count,
    }


@papers_router.put("/papers/{path:ref}/upvote", response={200: schemas.UpvoteState, **WRITE_ERRORS})
def upvote(request: HttpRequest, ref: str) -> dict[str, Any]:
    """Upvote a paper (by arXiv id or stable id); upvoting it again changes nothing.
    Limited per reader (VOTE_RATE_LIMIT), on the site and here together."""
    return change_vote(request, ref, upvoted=True)


@papers_router.delete(
    "/papers/{path:ref}/upvote", response={200: schemas.UpvoteState, **WRITE_ERRORS}
)
def take_back_upvote(request: HttpRequest, ref: str) -> dict[str, Any]:
    """Take back the reader's upvote of a paper; without one, nothing changes."""
    return change_vote(request, ref, upvoted=False)
