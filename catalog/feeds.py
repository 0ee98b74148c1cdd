"""Public RSS 2.0 and Atom feeds of paper lists; each class serves both formats."""

import datetime
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from django.conf import settings
from django.contrib.syndication.views import Feed
from django.core.exceptions import BadRequest
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import URLPattern, path, reverse
from django.utils.decorators import method_decorator
from django.utils.feedgenerator import Atom1Feed, Rss201rev2Feed, SyndicationFeed
from django.utils.html import escape
from django.views.decorators.http import conditional_page

from catalog.filters import AUTHOR_NEWEST_FIRST, PaperFilter, authored_by
from catalog.latex import latex_to_text
from catalog.models import Author, Category, Paper, Tag
from catalog.selectors import feed_items, filter_papers
from core.http import safe_methods
from core.limits import limit_feeds

# What a feed lists the papers of: nothing (the newest), a tag, a category, a search.
Listed = TypeVar("Listed")


if TYPE_CHECKING:
    # Generic in the stubs alone: at run time Feed takes no type arguments.
    FeedOfPapers = Feed[Paper, Any]
else:
    FeedOfPapers = Feed


class PaperFeed(FeedOfPapers, Generic[Listed]):
    def __init__(self, feed_type: type[SyndicationFeed] = Rss201rev2Feed) -> None:
        super().__init__()
        self.feed_type = feed_type

    def papers(self, obj: Listed) -> QuerySet[Paper]:
        return Paper.objects.visible().newest_first()

    # Feed readers poll: each address may ask FEED_RATE_LIMIT times, and one
    # that sends back the ETag or Last-Modified it got is told 304 while the
    # feed is unchanged.
    @method_decorator(safe_methods)
    @method_decorator(limit_feeds)
    @method_decorator(conditional_page)
    def __call__(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        return super().__call__(request, *args, **kwargs)

    def items(self, obj: Listed) -> list[Paper]:
        return feed_items(papers=self.papers(obj))

    def about(self, obj: Listed) -> str:
        """What the feed is, as plain text."""
        raise NotImplementedError

    def description(self, obj: Listed) -> str:
        # Readers may show RSS's channel description as HTML, as they do the
        # items': escaped, it shows as written.
        return escape(self.about(obj))

    def subtitle(self, obj: Listed) -> str:
        # Atom's subtitle is a text construct (no type attribute): the XML
        # escaping is all it needs.
        return self.about(obj)

    def item_title(self, paper: Paper) -> str:
        return latex_to_text(paper.title)

    def item_description(self, paper: Paper) -> str:
        # Feed readers show the description as HTML; the abstract is plain text,
        # its LaTeX made readable (feed readers run no KaTeX).
        return escape(latex_to_text(paper.abstract))

    def item_link(self, paper: Paper) -> str:
        return paper.get_absolute_url()

    def item_pubdate(self, paper: Paper) -> datetime.datetime:
        return paper.listed_at

    def item_updateddate(self, paper: Paper) -> datetime.datetime:
        return paper.updated_at or paper.listed_at

    def item_author_name(self, paper: Paper) -> str | None:
        return paper.author_names or None

    def item_categories(self, paper: Paper) -> list[str]:
        return [tag.name for tag in paper.tags.all()]


class LatestFeed(PaperFeed[None]):
    def title(self, obj: None) -> str:
        return f"{settings.SITE_NAME}: newest papers"

    def link(self, obj: None) -> str:
        return reverse("catalog:paper_list")

    def about(self, obj: None) -> str:
        return f"The newest papers in the {settings.SITE_NAME} catalog."


class TagFeed(PaperFeed[Tag]):
    def get_object(self, request: HttpRequest, slug: str) -> Tag:
        return get_object_or_404(Tag, slug=slug)

    def papers(self, tag: Tag) -> QuerySet[Paper]:
        return super().papers(tag).filter(tags=tag)

    def title(self, tag: Tag) -> str:
        return f"{settings.SITE_NAME}: {tag.name}"

    def link(self, tag: Tag) -> str:
        return tag.get_absolute_url()

    def about(self, tag: Tag) -> str:
        return tag.description or f"The newest papers tagged {tag.name}."


class AuthorFeed(PaperFeed[Author]):
    def get_object(self, request: HttpRequest, slug: str) -> Author:
        return get_object_or_404(Author, slug=slug, merged_into=None)

    def papers(self, author: Author) -> QuerySet[Paper]:
        return authored_by(Paper.objects.visible(), author).order_by(*AUTHOR_NEWEST_FIRST)

    def title(self, author: Author) -> str:
        return f"{settings.SITE_NAME}: {author.name}"

    def link(self, author: Author) -> str:
        return author.get_absolute_url()

    def about(self, author: Author) -> str:
        return f"The newest papers by {author.name}."


class CategoryFeed(PaperFeed[Category]):
    def get_object(self, request: HttpRequest, code: str) -> Category:
        return get_object_or_404(Category, code=code)

    def papers(self, category: Category) -> QuerySet[Paper]:
        return super().papers(category).filter(categories=category)

    def title(self, category: Category) -> str:
        return f"{settings.SITE_NAME}: {category.code}"

    def link(self, category: Category) -> str:
        return category.get_absolute_url()

    def about(self, category: Category) -> str:
        return f"The newest papers in {category.name or category.code}."


class SearchFeed(PaperFeed[PaperFilter]):
    """Any filtered list: the same parameters as the list page."""

    def get_object(self, request: HttpRequest) -> PaperFilter:
        paper_filter = filter_papers(request.GET)
        if not paper_filter.is_valid():
            problems = "; ".join(
                f"{field}: {' '.join(errors)}" for field, errors in paper_filter.errors.items()
            )
            raise BadRequest(f"These feed parameters are not valid: {problems}")
        return paper_filter

    def papers(self, paper_filter: PaperFilter) -> QuerySet[Paper]:
        return paper_filter.qs

    def title(self, paper_filter: PaperFilter) -> str:
        return f"{settings.SITE_NAME}: search"

    def link(self, paper_filter: PaperFilter) -> str:
        query = paper_filter.data.urlencode()
        return reverse("catalog:paper_list") + (f"?{query}" if query else "")

    def about(self, paper_filter: PaperFilter) -> str:
        return f"Papers in {settings.SITE_NAME} matching a search."


def feed_paths(route: str, feed_class: type[PaperFeed[Any]], name: str) -> list[URLPattern]:
    """The RSS 2.0 (.rss) and Atom (.atom) address of one feed."""
    return [
        path(f"{route}.rss", feed_class(), name=f"{name}-rss"),
        path(f"{route}.atom", feed_class(feed_type=Atom1Feed), name=f"{name}-atom"),
    ]
