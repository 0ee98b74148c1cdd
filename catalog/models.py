import datetime
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Exists, F, Func, OuterRef, Q
from django.db.models.functions import Coalesce, Now, Upper
from django.db.models.sql import Query
from django.db.models.sql.compiler import SQLCompiler
from django.urls import reverse
from django.utils import timezone
from django.utils.functional import Promise, cached_property
from django.utils.text import slugify
from django.utils.translation import gettext_lazy as _

from catalog import arxiv_ids
from catalog.names import Name, named_in_parts, normalize_name
from catalog.taxonomy import validate_category_code


class Versioned(models.Model):
    """A row with a version: `changed_at` moves on with every save(), whatever
    fields it writes. Fragments of pages are kept under it (catalog.cards), and
    what changed since a moment is found by it. Writes that bypass save()
    (QuerySet.update(), bulk_create(), raw SQL) go through catalog.changes;
    rows inserted by SQL get the database's clock."""

    changed_at = models.DateTimeField(
        "last changed", default=timezone.now, db_default=Now(), editable=False
    )

    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        self.changed_at = timezone.now()
        if kwargs.get("update_fields") is not None:
            kwargs["update_fields"] = {*kwargs["update_fields"], "changed_at"}
        super().save(*args, **kwargs)


class Category(Versioned):
    """An arXiv taxonomy category such as cs.CL."""

    code = models.CharField(max_length=32, unique=True, validators=[validate_category_code])
    name = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["code"]
        verbose_name_plural = "categories"

    def __str__(self) -> str:
        return self.code

    def get_absolute_url(self) -> str:
        return reverse("catalog:category", args=[self.code])

    @property
    def archive(self) -> str:
        return self.code.split(".")[0]


AUTHOR_SLUG_LENGTH = 320
# Room left after a slug's base for "-<number>" when two authors' bases clash.
AUTHOR_SLUG_BASE_LENGTH = 300


def author_slug_base(name: str) -> str:
    """An author's address before clashes are told apart: "José García" is
    jose-garcia, and a name in another script keeps its letters."""
    return slugify(normalize_name(name), allow_unicode=True)[:AUTHOR_SLUG_BASE_LENGTH] or "author"


class Author(models.Model):
    """A person credited on papers, one per normalised name. Curators merge two
    rows that are one person: the merged row stays, pointing at the kept one,
    so that ingest files papers under that name on the kept author."""

    name = models.CharField(max_length=300)
    normalized_name = models.CharField(max_length=300, unique=True)
    slug = models.SlugField(max_length=AUTHOR_SLUG_LENGTH, unique=True, allow_unicode=True)
    merged_into = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="aliases",
        help_text=(
            "Set when curators merged this author into another; papers under this name go there."
        ),
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def save(self, *args: Any, **kwargs: Any) -> None:
        self.normalized_name = normalize_name(self.name)
        if not self.slug:
            self.slug = free_author_slugs([self.name])[self.name]
        super().save(*args, **kwargs)

    def get_absolute_url(self) -> str:
        return reverse("catalog:author", args=[self.slug])

    @property
    def credited(self) -> "Author":
        """The author papers under this name are filed under."""
        return self.merged_into or self


def free_author_slugs(names: Sequence[str]) -> dict[str, str]:
    """A slug no author holds for each of the names (and none shared among
    them): the name's base, or the base with the first free "-2", "-3"..."""
    bases = {name: author_slug_base(name) for name in names}
    taken = set(Author.objects.filter(slug__in=set(bases.values())).values_list("slug", flat=True))
    clashing = {base for base in bases.values() if base in taken}
    for base in clashing:
        taken.update(
            Author.objects.filter(slug__startswith=f"{base}-").values_list("slug", flat=True)
        )
    slugs: dict[str, str] = {}
    for name, base in bases.items():
        slug, number = base, 1
        while slug in taken:
            number += 1
            slug = f"{base}-{number}"
        taken.add(slug)
        slugs[name] = slug
    return slugs


# An underscore between two letters or digits: a space in an identifier-like name.
WORD_JOINING_UNDERSCORE = re.compile(r"(?<=[^\W_])_(?=[^\W_])")


def tag_label(name: str) -> str:
    """A tag's name as readers see it: "R1_Reasoning" reads "R1 Reasoning"."""
    return WORD_JOINING_UNDERSCORE.sub(" ", name)


class Tag(Versioned):
    """A curated topic, e.g. R1_Reasoning."""

    name = models.CharField(max_length=100, unique=True)
    slug = models.SlugField(max_length=100, unique=True)
    description = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    # Staff who may put this tag on papers, take it off and edit its
    # description, without being curators.
    editors = models.ManyToManyField(
        settings.AUTH_USER_MODEL,
        blank=True,
        related_name="edited_tags",
        help_text="Staff users who may add and remove this tag and edit its description.",
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self.slug:
            self.slug = slugify(self.name)
        super().save(*args, **kwargs)

    def get_absolute_url(self) -> str:
        return reverse("catalog:tag", args=[self.slug])


class SearchDocument(Func):
    """A tsvector of PostgreSQL's, which each kind says in as_postgresql. It
    must compile on every backend (a stored generated column's expression, an
    update's value): SQLite has no tsvector, so there it is NULL, and FTS5
    tables index the same text (catalog.search)."""

    output_field = SearchVectorField()

    def as_sql(
        self,
        compiler: SQLCompiler,
        connection: BaseDatabaseWrapper,
        function: str | None = None,
        template: str | None = None,
        arg_joiner: str | None = None,
        **extra_context: Any,
    ) -> tuple[str, tuple[str | int, ...]]:
        return "NULL", ()


class PaperSearchDocument(SearchDocument):
    """The weighted text a paper is searched by: title (A), authors (B), abstract (C)."""

    def as_postgresql(
        self, compiler: SQLCompiler, connection: BaseDatabaseWrapper, **extra_context: Any
    ) -> tuple[str, tuple[str | int, ...]]:
        return (
            "setweight(to_tsvector('english'::regconfig, coalesce(title, '')), 'A')"
            " || setweight(to_tsvector('english'::regconfig, coalesce(author_names, '')), 'B')"
            " || setweight(to_tsvector('english'::regconfig, coalesce(abstract, '')), 'C')",
            (),
        )


# The papers anyone may see: shown, and not merged into another paper. Lists,
# the partial indexes behind them and the count triggers (visible_sql) take
# the rule from here.
VISIBLE = Q(is_visible=True, merged_into__isnull=True)


class PaperQuerySet(models.QuerySet["Paper"]):
    def visible(self) -> "PaperQuerySet":
        return self.filter(VISIBLE)

    def newest_first(self) -> "PaperQuerySet":
        return self.order_by(*NEWEST_FIRST)

    def with_code(self) -> "PaperQuerySet":
        code = CodeLink.objects.filter(paper=OuterRef("pk"), kind__in=CodeLink.CODE_KINDS)
        return self.filter(Exists(code))


NEWEST_FIRST = (F("listed_at").desc(), F("id").desc())


class Paper(Versioned):
    """A paper; its changed_at is the last change to anything its pages show:
    its own fields, its tags, authors, categories, code links, summaries and
    images, and a listing merged into it (catalog.changes)."""

    class DatePrecision(models.TextChoices):
        DAY = "day", "day"
        # A new-style arXiv id alone tells the year and month, not the day.
        MONTH = "month", "month"
        # Some venues' metadata (a proceedings' year) tells only the year.
        YEAR = "year", "year"

    class Review(models.TextChoices):
        PUBLISHED = "published", "published"
        # Brought by a source that needs review: stored, not public until published.
        PENDING = "pending", "waiting for review"
        # Turned down in review: kept hidden, and ingest never brings it back.
        REJECTED = "rejected", "rejected"

    # Papers listed without an id (some digests give none) keep NULL, which
    # the unique constraint allows any number of times.
    arxiv_id = models.CharField("arXiv id", max_length=64, unique=True, null=True, blank=True)
    version = models.PositiveSmallIntegerField(null=True, blank=True)
    title = models.TextField()
    # Matches an id-less paper to its arXiv record when ingest meets the same title.
    title_key = models.CharField(max_length=300, editable=False)
    abstract = models.TextField(blank=True)
    authors = models.ManyToManyField(Author, through="PaperAuthor", related_name="papers")
    # The ordered author names, as one string for search and as a list for
    # pages (which then need no query for authors), kept in step with authors
    # by catalog.services.set_authors() and ingest.
    author_names = models.TextField(blank=True, editable=False)
    author_list = models.JSONField(default=list, db_default=[], blank=True, editable=False)
    # Each listed author's slug, in the same order, so that names link to
    # author pages without a query.
    author_slugs = models.JSONField(default=list, db_default=[], blank=True, editable=False)
    # Each listed author's name in the parts its source gave, in the same order:
    # [family, given, suffix], or [] where the source gave the name whole (the
    # metadata snapshot and OAI-PMH give parts; the API and the listings do not).
    author_parts = models.JSONField(default=list, db_default=[], blank=True, editable=False)
    primary_category = models.ForeignKey(
        Category, null=True, blank=True, on_delete=models.SET_NULL, related_name="primary_papers"
    )
    categories = models.ManyToManyField(Category, blank=True, related_name="papers")
    tags = models.ManyToManyField(Tag, through="PaperTag", blank=True, related_name="papers")
    comment = models.TextField(blank=True)
    journal_ref = models.TextField("journal reference", blank=True)
    doi = models.CharField("DOI", max_length=200, blank=True)
    # A paper read from a source other than arXiv: "doi:<DOI>" (Crossref),
    # "openreview:<note id>" or "acl:<Anthology id>", which adding it again
    # finds it by, and its page there. NULL for papers no such source gave.
    source_key = models.CharField(
        "source id", max_length=300, unique=True, null=True, blank=True, editable=False
    )
    source_url = models.URLField(
        "page at its source", max_length=500, blank=True, default="", db_default=""
    )
    # Four dates, each shown under its own name: when version 1 was submitted
    # (arXiv's "published"), when this version was, when arXiv first announced
    # the paper (known when a listing feed named it), and when it came here.
    published_at = models.DateTimeField("first published (v1)", null=True, blank=True)
    published_precision = models.CharField(
        max_length=8, choices=DatePrecision.choices, default=DatePrecision.DAY
    )
    updated_at = models.DateTimeField("this version's date", null=True, blank=True)
    announced_at = models.DateTimeField("announced on arXiv", null=True, blank=True)
    added_at = models.DateTimeField("added here", default=timezone.now)
    # The date lists sort and filter by: first published on arXiv, or for a
    # listing with no arXiv data, the day it entered the catalog.
    # The plugin types a GeneratedField as Any; this one is its output field's.
    listed_at: "models.Field[datetime.datetime, datetime.datetime]" = models.GeneratedField(
        expression=Coalesce("published_at", "added_at"),
        output_field=models.DateTimeField(),
        db_persist=True,
    )
    # The day a paper belongs to in the daily editions: the day arXiv announced
    # it, or for a paper no listing named, the day it entered the catalog.
    announced_or_added_at: "models.Field[datetime.datetime, datetime.datetime]" = (
        models.GeneratedField(
            expression=Coalesce("announced_at", "added_at"),
            output_field=models.DateTimeField(),
            db_persist=True,
        )
    )
    is_visible = models.BooleanField("visible", default=True)
    review = models.CharField(
        max_length=16,
        choices=Review.choices,
        default=Review.PUBLISHED,
        db_default=Review.PUBLISHED,
    )
    merged_into = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="merged_papers",
        help_text="Set when this id-less listing was matched to another paper's arXiv record.",
    )
    search_document = models.GeneratedField(
        expression=PaperSearchDocument(), output_field=SearchVectorField(), db_persist=True
    )
    # Trending scores over each window (catalog.trending), written by the
    # periodic refresh alone; NULL for a paper no reader signalled in the
    # window. Kept on the paper so that `sort=trending` walks an index like the
    # newest-first sort does, rather than sorting every paper of a list.
    trending_24h = models.FloatField(null=True, blank=True, editable=False)
    trending_7d = models.FloatField(null=True, blank=True, editable=False)
    trending_30d = models.FloatField(null=True, blank=True, editable=False)
    # What readers gave the paper, kept on the row so that a card reads it
    # with the rest: its upvotes from accounts that count (accounts.votes),
    # those over each window, which lists sort by, and its shown comments
    # (discussion). Written by those apps alone.
    upvote_count = models.IntegerField(default=0, db_default=0, editable=False)
    votes_24h = models.IntegerField(default=0, db_default=0, editable=False)
    votes_7d = models.IntegerField(default=0, db_default=0, editable=False)
    votes_30d = models.IntegerField(default=0, db_default=0, editable=False)
    comment_count = models.IntegerField(default=0, db_default=0, editable=False)

    objects = PaperQuerySet.as_manager()

    class Meta:
        indexes = [
            models.Index(*NEWEST_FIRST, name="paper_newest_first"),
            # Every public list: visible, unmerged papers newest first. Deep
            # pages walk it index-only to skip their offset.
            models.Index(*NEWEST_FIRST, name="paper_listed_newest", condition=VISIBLE),
            # Every public list by trending score has an index too, those
            # without a score after, newest first: "DESC NULLS LAST", which
            # SQLite cannot write in an index, so migration 0011 makes them.
            # The papers holding a score, which the refresh clears or rewrites
            # (a signal within 24 hours or 7 days is one within 30 days).
            models.Index(
                fields=["id"], name="paper_trending", condition=Q(trending_30d__isnull=False)
            ),
            # Every public list by upvotes over a window, then newest first
            # (sort=votes); the counts are never NULL.
            *(
                models.Index(
                    F(column).desc(),
                    *NEWEST_FIRST,
                    name=f"paper_listed_{column}",
                    condition=VISIBLE,
                )
                for column in ("votes_24h", "votes_7d", "votes_30d")
            ),
            models.Index(fields=["added_at"], name="paper_added_at"),
            # A day's papers, the days next to it and a month's counts (editions).
            models.Index(
                F("announced_or_added_at").desc(),
                F("id").desc(),
                name="paper_announced_newest",
                condition=VISIBLE,
            ),
            # What changed since a moment.
            models.Index(fields=["changed_at"], name="paper_changed_at"),
            models.Index(fields=["title_key"], name="paper_title_key"),
            # A paper by its DOI (the API's lookups), which compares case-blind.
            models.Index(Upper("doi"), name="paper_doi_upper"),
            # The review inbox, newest first.
            models.Index(
                F("added_at").desc(),
                name="paper_waiting_for_review",
                condition=Q(review="pending"),
            ),
        ]

    def __str__(self) -> str:
        return self.title

    def save(self, *args: Any, **kwargs: Any) -> None:
        self.title_key = title_key(self.title)
        super().save(*args, **kwargs)

    def get_absolute_url(self) -> str:
        if self.arxiv_id:
            return reverse("catalog:paper", args=[self.arxiv_id])
        return reverse("catalog:paper_by_pk", args=[self.pk])

    @property
    def credited_authors(self) -> list[tuple[str, str]]:
        """(name, slug) of each listed author; a slug is empty where the stored
        slugs are not in step with the names (rows written before they were kept)."""
        slugs = self.author_slugs if len(self.author_slugs) == len(self.author_list) else []
        return [(name, slugs[i] if slugs else "") for i, name in enumerate(self.author_list)]

    @cached_property
    def parsed_authors(self) -> list[Name]:
        """Each listed author's name in its parts (catalog.names.named_in_parts)."""
        return named_in_parts(self.author_list, self.author_parts)

    @property
    def versioned_id(self) -> str:
        return f"{self.arxiv_id}v{self.version}" if self.version else self.arxiv_id or ""

    @property
    def citation_doi(self) -> str:
        """The DOI to cite: the published version's, else the one arXiv registers
        for every paper with DataCite (10.48550/arXiv.<id>)."""
        if self.doi:
            return self.doi
        return f"10.48550/arXiv.{self.arxiv_id}" if self.arxiv_id else ""

    @property
    def abs_url(self) -> str:
        return arxiv_ids.abs_url(self.arxiv_id) if self.arxiv_id else ""

    @property
    def pdf_url(self) -> str:
        return arxiv_ids.pdf_url(self.arxiv_id) if self.arxiv_id else ""

    @property
    def community_url(self) -> str:
        return arxiv_ids.community_url(self.arxiv_id) if self.arxiv_id else ""

    @property
    def source_label(self) -> str:
        """What the link to the paper's page at its source is called: the source's
        name, or for a page a curator gave, its site."""
        kind = (self.source_key or "").partition(":")[0]
        return SOURCE_NAMES.get(kind) or urlsplit(self.source_url).hostname or ""

    @property
    def community_label(self) -> str:
        return arxiv_ids.community_label()

    @property
    def published_label(self) -> str:
        if not self.published_at:
            return ""
        fmt = {self.DatePrecision.MONTH: "%Y-%m", self.DatePrecision.YEAR: "%Y"}.get(
            self.DatePrecision(self.published_precision), "%Y-%m-%d"
        )
        return self.published_at.strftime(fmt)

    @property
    def list_date(self) -> "ShownDate":
        """The date lists sort by (listed_at), named: the card and the paper page show this."""
        if self.published_at:
            return ShownDate(_("First published"), self.published_at, self.published_label)
        return ShownDate(_("Added here"), self.added_at, _utc_day(self.added_at))

    @property
    def cited_date(self) -> "CitedDate":
        """The date exports cite, the one the citation tags give: first published
        (to the day, the month or only the year), or for a paper known only from
        here the day it was added."""
        if self.published_at:
            precision = self.DatePrecision(self.published_precision)
            return CitedDate(
                self.published_at.astimezone(datetime.UTC),
                by_month=precision != self.DatePrecision.YEAR,
                by_day=precision == self.DatePrecision.DAY,
            )
        return CitedDate(self.added_at.astimezone(datetime.UTC), by_month=True, by_day=True)

    @property
    def citation_date(self) -> str:
        """The list's date as reference managers read it (Highwire's Y/M/D, or Y/M
        for a paper known to the month): a paper known only from here has the day
        it was added."""
        return self.list_date.text.replace("-", "/")

    @property
    def version_date(self) -> "ShownDate | None":
        """The current version's date, beside the first published one on cards,
        when it is a later version of another day."""
        if not (self.published_at and self.updated_at and self.version and self.version > 1):
            return None
        day = _utc_day(self.updated_at)
        if day == _utc_day(self.published_at):
            return None
        return ShownDate(f"v{self.version}", self.updated_at, day)

    @property
    def other_dates(self) -> list["ShownDate"]:
        """The paper's other known dates, for its page."""
        dates = []
        if (
            self.published_at
            and self.updated_at
            and _utc_day(self.updated_at) != _utc_day(self.published_at)
        ):
            label = (
                _("This version (v%(version)s)") % {"version": self.version}
                if self.version
                else _("This version")
            )
            dates.append(ShownDate(label, self.updated_at, _utc_day(self.updated_at)))
        if self.announced_at:
            dates.append(ShownDate(_("Announced"), self.announced_at, _utc_day(self.announced_at)))
        if self.published_at:
            dates.append(ShownDate(_("Added here"), self.added_at, _utc_day(self.added_at)))
        return dates


def visible_sql(*, alias: str, connection: BaseDatabaseWrapper) -> str:
    """VISIBLE as an SQL condition on the catalog_paper row named alias (a table
    alias, or a trigger's NEW or OLD), for the SQL the ORM does not write."""
    # build_where refuses a condition that would need a join.
    query = Query(Paper)
    where = query.build_where(VISIBLE)
    sql, params = where.as_sql(query.get_compiler(connection=connection), connection)
    editor = connection.schema_editor()
    sql %= tuple(editor.quote_value(param) for param in params)
    return sql.replace(f"{connection.ops.quote_name(Paper._meta.db_table)}.", f"{alias}.")


@dataclass(frozen=True)
class ShownDate:
    label: str | Promise  # lazily translated
    moment: datetime.datetime
    text: str


@dataclass(frozen=True)
class CitedDate:
    moment: datetime.datetime  # in UTC
    by_month: bool  # else known to the year
    by_day: bool


def _utc_day(moment: datetime.datetime) -> str:
    return moment.astimezone(datetime.UTC).strftime("%Y-%m-%d")


# The sources other than arXiv a paper may come from, by their source_key's prefix.
SOURCE_NAMES = {"doi": "DOI", "openreview": "OpenReview", "acl": "ACL Anthology"}


def title_key(title: str) -> str:
    """Title folded to lowercase letters and digits, so spacing, case and
    punctuation differences between listings still match."""
    return "".join(ch for ch in title.casefold() if ch.isalnum())[:300]


class PaperProvenance(models.Model):
    """Where a paper's arXiv facts came from when they were not read from arXiv:
    the demo's, gathered by hand from public pages. Curators see it in admin;
    readers see the facts alone. A later arXiv lookup replaces the facts, and
    replaced_at says when."""

    paper = models.OneToOneField(
        Paper, on_delete=models.CASCADE, primary_key=True, related_name="provenance"
    )
    gathered_by = models.CharField(
        max_length=200, help_text="Who gathered the facts, and for what."
    )
    # How sure: "abs page" (from arXiv's abstract page) or "other page".
    confidence = models.CharField(max_length=32, blank=True)
    sources = models.JSONField(default=list, blank=True, help_text="The pages read.")
    notes = models.TextField(blank=True, help_text="Where each fact came from; disagreements.")
    recorded_at = models.DateTimeField(default=timezone.now)
    replaced_at = models.DateTimeField(
        "replaced by arXiv's data", null=True, blank=True, help_text="When arXiv was read for it."
    )

    class Meta:
        verbose_name = "provenance of the metadata"
        verbose_name_plural = "provenance of the metadata"

    def __str__(self) -> str:
        return f"{self.paper_id}: {self.gathered_by}"


class PaperAuthor(models.Model):
    paper = models.ForeignKey(Paper, on_delete=models.CASCADE)
    author = models.ForeignKey(Author, on_delete=models.CASCADE)
    position = models.PositiveSmallIntegerField()
    # The paper's listed_at and whether it is visible, copied onto its links by
    # the database (catalog/sql/author_links.*.sql) whatever writes the paper,
    # so that an author's papers are read newest first off the links' own
    # index: sorting a prolific author's papers read each one's row.
    listed_at = models.DateTimeField(null=True, editable=False)
    # A database default too: a row written by SQL that names no value (an
    # older migration's model) is still whole before the trigger fills it.
    visible = models.BooleanField(default=False, db_default=False, editable=False)

    class Meta:
        ordering = ["position"]
        constraints = [
            models.UniqueConstraint(fields=["paper", "author"], name="paper_author_once"),
        ]
        indexes = [
            # An author's papers (readers' feeds), met from the index.
            models.Index(fields=["author", "paper"], name="paper_author_by_author"),
            # An author's visible papers newest first (their page, feed and
            # counts), the order of NEWEST_FIRST.
            models.Index(
                fields=["author", "-listed_at", "-paper"],
                name="paper_author_newest",
                condition=Q(visible=True),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.paper_id}#{self.position}: {self.author_id}"


class PaperTagQuerySet(models.QuerySet["PaperTag"]):
    def give(self, paper_ids: Sequence[int], tags: Sequence["Tag"]) -> list["PaperTag"]:
        """Give the papers the tags they lack, now; a paper already carrying a tag
        keeps the date it got it. Returns the rows added."""
        held = set(
            self.filter(paper_id__in=paper_ids, tag__in=tags).values_list("paper_id", "tag_id")
        )
        now = timezone.now()
        new = [
            PaperTag(paper_id=pk, tag=tag, added_at=now)
            for pk in paper_ids
            for tag in tags
            if (pk, tag.pk) not in held
        ]
        # A concurrent writer may have given one meanwhile: it keeps its row.
        self.bulk_create(new, ignore_conflicts=True)
        return new


class PaperTag(models.Model):
    """A tag on a paper, with when it was given: digests send what entered a tag since."""

    paper = models.ForeignKey(Paper, on_delete=models.CASCADE)
    tag = models.ForeignKey(Tag, on_delete=models.CASCADE)
    added_at = models.DateTimeField(default=timezone.now)

    objects = PaperTagQuerySet.as_manager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["paper", "tag"], name="paper_tag_once")]
        indexes = [
            models.Index(fields=["tag", "added_at"], name="papertag_tag_added"),
            # A tag's papers without reading the table (the tag filter, counts).
            models.Index(fields=["tag", "paper"], name="papertag_tag_paper"),
        ]

    def __str__(self) -> str:
        return f"{self.paper_id}: {self.tag_id}"


class PaperChange(models.Model):
    """A paper inserted, changed, hidden, merged or deleted: a row a database
    trigger writes in the writing transaction (catalog/sql), whatever wrote.
    `sequence` is NULL until catalog.sync.seal numbers it, after its commit,
    so sequences follow commit order. No foreign key: a deleted paper's rows
    say that it went."""

    paper_id = models.BigIntegerField()
    sequence = models.BigIntegerField(null=True)

    class Meta:
        indexes = [
            models.Index(fields=["sequence"], name="paper_change_sequence"),
            models.Index(fields=["paper_id", "sequence"], name="paper_change_paper"),
            models.Index(fields=["id"], name="paper_change_unsealed", condition=Q(sequence=None)),
        ]

    def __str__(self) -> str:
        return f"{self.paper_id} #{self.sequence}"


class TagCount(models.Model):
    """A part of a tag's number of visible papers: the count is the sum of its parts.

    Database triggers (migration 0010) add a part whenever a tag is put on or
    taken off papers or a tagged paper is hidden, shown or merged, so the index
    pages read counts instead of counting a million links, and concurrent writers
    append rows instead of waiting on one counter row. `catalog.counts.fold`
    folds the parts into one row per tag on a schedule. No foreign key: parts
    of a deleted tag are dropped by the next fold.
    """

    tag = models.ForeignKey(
        Tag, on_delete=models.DO_NOTHING, db_constraint=False, related_name="count_parts"
    )
    papers = models.IntegerField()

    def __str__(self) -> str:
        return f"{self.tag_id}: {self.papers:+}"


class CategoryCount(models.Model):
    """A part of a category's number of visible papers, kept as TagCount is."""

    category = models.ForeignKey(
        Category, on_delete=models.DO_NOTHING, db_constraint=False, related_name="count_parts"
    )
    papers = models.IntegerField()

    def __str__(self) -> str:
        return f"{self.category_id}: {self.papers:+}"


class CodeLink(models.Model):
    class Kind(models.TextChoices):
        OFFICIAL = "official", _("official")
        COMMUNITY = "community", _("community")
        # Found in the abstract or comment but not presented as the paper's own
        # code: a dataset used, a leaderboard, a demo video.
        MENTIONED = "mentioned", _("mentioned in the text")

    # The kinds that are code for the paper: what "with code" means.
    CODE_KINDS = (Kind.OFFICIAL, Kind.COMMUNITY)

    class Source(models.TextChoices):
        ABSTRACT = "abstract", "abstract"
        COMMENT = "comment", "comment"
        CURATOR = "curator", "curator"
        OTHER = "other", "other"

    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="code_links")
    url = models.URLField(max_length=500)
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.OFFICIAL)
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.CURATOR)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["kind", "id"]
        constraints = [models.UniqueConstraint(fields=["paper", "url"], name="code_link_once")]

    def __str__(self) -> str:
        return self.url

    @property
    def host_label(self) -> str | Promise:
        for host, label in (
            ("github.com", "GitHub"),
            ("gitlab.com", "GitLab"),
            ("huggingface.co", "Hugging Face"),
        ):
            if f"//{host}/" in self.url or f".{host}/" in self.url:
                return label
        return _("Project page")


class Summary(models.Model):
    class Kind(models.TextChoices):
        SUMMARY = "summary", _("summary")
        TRANSLATION = "translation", _("translation of the abstract")
        TAKEAWAYS = "takeaways", _("key takeaways")

    class Backend(models.TextChoices):
        CURATOR = "curator", "written by a curator"
        EXTRACTIVE = "extractive", "extracted from the abstract"
        LLM = "llm", "language model"

    class Status(models.TextChoices):
        DRAFT = "draft", "draft"
        PUBLISHED = "published", "published"

    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="summaries")
    language = models.CharField(max_length=16, help_text="BCP 47 code, e.g. en, ko, zh-hans")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    body = models.TextField(
        help_text="Markdown. Key takeaways are a numbered list, one takeaway per item."
    )
    backend = models.CharField(max_length=16, choices=Backend.choices, default=Backend.CURATOR)
    written_by = models.CharField(
        max_length=200, blank=True, help_text="The person, model or listing it came from."
    )
    model_name = models.CharField(max_length=200, blank=True)
    prompt_version = models.CharField(max_length=32, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PUBLISHED)
    curator_edited = models.BooleanField(
        default=False, help_text="A curator changed it: regeneration leaves it alone."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["language", "kind"]
        verbose_name_plural = "summaries"
        constraints = [
            models.UniqueConstraint(
                fields=["paper", "language", "kind"], name="summary_once_per_language_kind"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} ({self.language})"

    @property
    def is_machine_written(self) -> bool:
        return self.backend != self.Backend.CURATOR


def preview_upload_to(instance: "PaperImage", filename: str) -> str:
    return f"previews/{instance.paper_id}/{filename}"


class PaperImage(models.Model):
    """A picture of the paper: its first page or one of its figures."""

    class Kind(models.TextChoices):
        FIRST_PAGE = "page", "first page"
        FIGURE = "figure", "figure"

    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="images")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    position = models.PositiveSmallIntegerField(default=0)
    image = models.FileField(upload_to=preview_upload_to, max_length=300)
    width = models.PositiveIntegerField(default=0)
    height = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["kind", "position"]
        constraints = [
            models.UniqueConstraint(fields=["paper", "kind", "position"], name="paper_image_once"),
        ]

    def __str__(self) -> str:
        return f"{self.paper_id} {self.kind} {self.position}"


class CurationEvent(models.Model):
    """One thing a curator did, to a paper (shown on its admin history page) or to
    what is no paper of the catalog: a suggestion declined, an add that failed.

    Edits made in the paper's own admin form are Django's LogEntry rows; the
    actions on many papers at once, adding by link, review and suggestions
    are recorded here, by a person or, from the command line, a named actor.
    """

    class Action(models.TextChoices):
        ADDED = "added", "added"
        TAGGED = "tagged", "tagged"
        UNTAGGED = "untagged", "untagged"
        HIDDEN = "hidden", "hidden"
        SHOWN = "shown", "shown"
        PUBLISHED = "published", "published"
        REJECTED = "rejected", "rejected"
        MERGED = "merged", "merged"
        SUMMARIES_PUBLISHED = "summaries_published", "summaries published"
        SUGGESTION_APPROVED = "suggestion_approved", "suggestion approved"
        SUGGESTION_DECLINED = "suggestion_declined", "suggestion declined"
        ADD_FAILED = "add_failed", "adding by link failed"
        SUMMARIES_REQUESTED = "summaries_requested", "summaries requested"
        EDITION_PUBLISHED = "edition_published", "daily edition published"
        EDITION_UNPUBLISHED = "edition_unpublished", "daily edition returned to draft"
        COMMENT_HIDDEN = "comment_hidden", "comment hidden"
        COMMENT_SHOWN = "comment_shown", "comment shown again"
        THREAD_LOCKED = "thread_locked", "discussion locked"
        THREAD_UNLOCKED = "thread_unlocked", "discussion unlocked"
        COMMENTER_STOPPED = "commenter_stopped", "reader stopped from commenting"
        COMMENTER_ALLOWED = "commenter_allowed", "reader allowed to comment again"
        REPORTS_DISMISSED = "reports_dismissed", "reports of a comment dismissed"
        AUTHORS_MERGED = "authors_merged", "authors merged"
        AUTHOR_SPLIT = "author_split", "author split"

    paper = models.ForeignKey(
        Paper, null=True, blank=True, on_delete=models.CASCADE, related_name="curation_events"
    )
    # What the event is about when it is no paper of the catalog: "arXiv:2505.15034",
    # "papers by link #12".
    subject = models.CharField(max_length=200, blank=True)
    action = models.CharField(max_length=32, choices=Action.choices)
    detail = models.TextField(blank=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="curation_events",
    )
    # Who acted when no user did: "add_papers command".
    actor = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["paper", "created_at"], name="curation_paper_created")]

    def __str__(self) -> str:
        return f"{self.get_action_display()} by {self.who}"

    @property
    def about(self) -> str:
        return str(self.paper) if self.paper is not None else self.subject

    @property
    def who(self) -> str:
        return self.user.get_username() if self.user is not None else self.actor or "unknown"


class ReaderSignal(models.Model):
    """A reader showed interest in a paper: the evidence trending is scored from.

    One row per paper, reader and kind: a reader saving a paper twice, or
    saving, unsaving and saving it again, is one signal, dated the first time.
    Rows are written by the apps above the catalog through catalog.trending.
    """

    class Kind(models.TextChoices):
        SAVE = "save", "saved"
        SUGGEST = "suggest", "suggested"
        CLICK = "click", "opened from the personal feed"
        UPVOTE = "upvote", "upvoted"

    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="reader_signals")
    # Deleting an account deletes its signals.
    reader = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["paper", "reader", "kind"], name="reader_signal_once_per_kind"
            ),
        ]
        # The refresh reads the last 30 days of signals.
        indexes = [models.Index(fields=["created_at"], name="reader_signal_created")]

    def __str__(self) -> str:
        return f"{self.paper_id} {self.kind} by {self.reader_id}"


class SimilarPaper(models.Model):
    """One of a paper's nearest neighbours by text, precomputed by enrichment so
    the paper page reads them in one query and the web holds no vectors."""

    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="similar_rows")
    similar = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="+")
    rank = models.PositiveSmallIntegerField()
    # Cosine similarity of the two papers' vectors.
    score = models.FloatField()
    # The words both papers weigh most, for the "why" when they share no tag.
    terms = models.JSONField(default=list, blank=True)
    computed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["paper", "rank"]
        constraints = [
            models.UniqueConstraint(fields=["paper", "rank"], name="similar_paper_rank_once"),
        ]
        indexes = [
            # Reverse lookups: which papers count this one among their neighbours
            # (recommendations, and dropping rows of a paper that left).
            models.Index(fields=["similar"], name="similar_paper_similar"),
        ]

    def __str__(self) -> str:
        return f"{self.paper_id} ~ {self.similar_id} (#{self.rank})"


class FullText(models.Model):
    """What was read of a paper's text, for one of its versions: arXiv's HTML
    rendering, or the PDF's text where arXiv has none (enrichment/fulltext.py).

    A stored text has its sections and figures; a failed one has none, and says
    why. A paper whose version moves past `version` is read again.
    """

    class Source(models.TextChoices):
        HTML = "html", "arXiv's HTML rendering"
        PDF = "pdf", "the PDF's text"

    class Status(models.TextChoices):
        STORED = "stored", "stored"
        FAILED = "failed", "failed"

    paper = models.OneToOneField(Paper, on_delete=models.CASCADE, related_name="fulltext")
    # The paper's version read (NULL for a paper arXiv gave no version).
    version = models.PositiveSmallIntegerField(null=True, blank=True)
    source = models.CharField(max_length=8, choices=Source.choices, blank=True)
    status = models.CharField(max_length=8, choices=Status.choices)
    error = models.TextField(blank=True)
    # The text's length in characters, for the costs (BENCHMARKS.md) and admin.
    characters = models.PositiveIntegerField(default=0)
    fetched_at = models.DateTimeField(default=timezone.now)
    # The words of the whole text, which `q` with `in=fulltext` matches (GIN
    # index, migration 0034): written with the sections (catalog.search.index_texts),
    # NULL on SQLite and for a failed read.
    search_document = SearchVectorField(null=True, blank=True, editable=False)

    class Meta:
        verbose_name = "full text"
        indexes = [
            # Failed reads, for the report and `fetch_fulltext --failed`.
            models.Index(fields=["paper"], name="fulltext_failed", condition=Q(status="failed")),
        ]

    def __str__(self) -> str:
        return f"{self.paper_id} v{self.version or '?'} {self.status}"


class SectionSearchDocument(SearchDocument):
    """The weighted text a section is searched by, which ranks the sections for
    a full-text search's passage: its heading (A) and its paragraphs (D)."""

    def as_postgresql(
        self, compiler: SQLCompiler, connection: BaseDatabaseWrapper, **extra_context: Any
    ) -> tuple[str, tuple[str | int, ...]]:
        return (
            "setweight(to_tsvector('english'::regconfig, coalesce(heading, '')), 'A')"
            " || setweight(to_tsvector('english'::regconfig, coalesce(text, '')), 'D')",
            (),
        )


class TextSearchDocument(SearchDocument):
    """The words of a paper's whole stored text, its sections' headings and
    paragraphs in order, parsed from at most `characters` of it (all when None):
    what FullText.search_document holds. On SQLite the sections' FTS5 table is
    asked word by word instead (catalog.search)."""

    def __init__(self, *, characters: int | None = None) -> None:
        super().__init__()
        self.characters = characters

    def as_postgresql(
        self, compiler: SQLCompiler, connection: BaseDatabaseWrapper, **extra_context: Any
    ) -> tuple[str, tuple[str | int, ...]]:
        text = "string_agg(heading || E'\\n\\n' || text, E'\\n\\n' ORDER BY position)"
        params: tuple[str | int, ...] = ()
        if self.characters is not None:
            text, params = f"left({text}, %s)", (self.characters,)
        # The text is one of the two expressions above; the length is a parameter.
        return (
            f"(SELECT to_tsvector('english'::regconfig, coalesce({text}, ''))"  # noqa: S608
            " FROM catalog_fulltextsection"
            " WHERE catalog_fulltextsection.paper_id = catalog_fulltext.paper_id)",
            params,
        )


class FullTextSection(models.Model):
    """One section of a paper's stored text: its heading and its paragraphs, math
    kept as TeX between $ signs, paragraphs apart by a blank line."""

    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="sections")
    position = models.PositiveSmallIntegerField()
    heading = models.TextField()
    # 1 for a section, 2 for a subsection, 3 below.
    level = models.PositiveSmallIntegerField(default=1)
    text = models.TextField()
    # Searched by `q` with `in=fulltext` (GIN index, migration 0029).
    search_document = models.GeneratedField(
        expression=SectionSearchDocument(), output_field=SearchVectorField(), db_persist=True
    )

    class Meta:
        ordering = ["paper", "position"]
        constraints = [
            models.UniqueConstraint(fields=["paper", "position"], name="fulltext_section_once"),
        ]

    def __str__(self) -> str:
        return f"{self.paper_id} §{self.position} {self.heading}"

    @property
    def paragraphs(self) -> list[str]:
        return self.text.split("\n\n") if self.text else []


def figure_upload_to(instance: "FullTextFigure", filename: str) -> str:
    return f"figures/{instance.paper_id}/{filename}"


class FullTextFigure(models.Model):
    """A figure of a paper's stored text, in place: after `after_paragraph`
    paragraphs of the section at `section_position`."""

    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="figures")
    position = models.PositiveSmallIntegerField()
    section_position = models.PositiveSmallIntegerField()
    after_paragraph = models.PositiveSmallIntegerField(default=0)
    caption = models.TextField(blank=True)
    # Empty when the figure's picture could not be read (a format no browser
    # shows, too large): the caption stays.
    image = models.FileField(upload_to=figure_upload_to, max_length=300, blank=True)
    width = models.PositiveIntegerField(default=0)
    height = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["paper", "position"]
        constraints = [
            models.UniqueConstraint(fields=["paper", "position"], name="fulltext_figure_once"),
        ]

    def __str__(self) -> str:
        return f"{self.paper_id} figure {self.position}"


class SearchTerm(models.Model):
    """A name a search may mean: a tag's, a category's code or name, or an
    author's. A database view over those tables (migration 0031), so it is
    never out of step with them: the search box offers its terms as a reader
    types, and a search that misspells one is asked "did you mean" it
    (catalog.vocabulary). `normalized` is folded as normalize_name folds an
    author's name, with a tag's underscores read as spaces; PostgreSQL has a
    trigram index on each table's column behind it."""

    class Kind(models.TextChoices):
        TAG = "tag", _("Tag")
        CATEGORY = "category", _("Category")
        AUTHOR = "author", _("Author")

    id = models.CharField(primary_key=True, max_length=340)
    kind = models.CharField(max_length=10, choices=Kind.choices)
    # Tags first, then categories, then authors, where several match.
    kind_order = models.PositiveSmallIntegerField()
    key = models.CharField(max_length=AUTHOR_SLUG_LENGTH)  # the slug, or a category's code
    label = models.CharField(max_length=300)
    normalized = models.CharField(max_length=300)

    class Meta:
        managed = False
        db_table = "catalog_searchterm"

    def __str__(self) -> str:
        return f"{self.kind} {self.label}"

    def get_absolute_url(self) -> str:
        return reverse(f"catalog:{self.kind}", args=[self.key])

    @property
    def shown(self) -> str:
        return tag_label(self.label) if self.kind == self.Kind.TAG else self.label
