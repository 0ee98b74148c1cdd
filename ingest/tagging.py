"""Automatic tagging: TagRules applied to papers as they arrive or to the whole catalog."""

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import islice

from django.db.models import F
from django.utils import timezone

from catalog.changes import papers_changed
from catalog.models import Paper, PaperTag
from ingest.models import TagRule

BATCH_SIZE = 2000
PaperCategory = Paper.categories.through


@dataclass(frozen=True)
class CompiledRule:
    tag_id: int
    keywords: re.Pattern[str] | None
    categories: frozenset[str]

    def matches(self, *, text: str, categories: set[str]) -> bool:
        if self.categories and not self.categories & categories:
            return False
        if self.keywords is None:
            return bool(self.categories)
        return self.keywords.search(text) is not None


def compile_rule(rule: TagRule) -> CompiledRule:
    phrases = [line.strip() for line in rule.keywords.splitlines() if line.strip()]
    keywords = None
    if phrases:
        # Word boundaries by lookaround, since \b fails next to symbols ("C++");
        # spaces in a phrase match any run of whitespace, as abstracts wrap.
        alternatives = "|".join(r"\s+".join(map(re.escape, p.split())) for p in phrases)
        keywords = re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", re.IGNORECASE)
    return CompiledRule(
        tag_id=rule.tag_id, keywords=keywords, categories=frozenset(rule.categories.split())
    )


def apply_tag_rules(
    *, paper_ids: Iterable[int] | None = None, rule_ids: Iterable[int] | None = None
) -> int:
    """Give papers the tags of the enabled rules they match; return how many tags were added.

    paper_ids None means the whole catalog, read in batches so memory stays
    flat; rule_ids limits it to those rules. Tags are only ever added: a paper
    that stops matching keeps what curators may have come to rely on.
    """
    rules = TagRule.objects.filter(enabled=True)
    if rule_ids is not None:
        rules = rules.filter(pk__in=list(rule_ids))
    compiled = [compile_rule(rule) for rule in rules]
    if not compiled:
        return 0
    batches = _catalog_batches() if paper_ids is None else _chunks(paper_ids)
    return sum(_tag_batch(ids, compiled) for ids in batches)


def _catalog_batches() -> Iterator[list[int]]:
    last_id = 0
    while True:
        ids = list(
            Paper.objects.filter(pk__gt=last_id)
            .order_by("pk")
            .values_list("pk", flat=True)[:BATCH_SIZE]
        )
        if not ids:
            return
        yield ids
        last_id = ids[-1]


def _chunks(paper_ids: Iterable[int]) -> Iterator[list[int]]:
    iterator = iter(paper_ids)
    while chunk := list(islice(iterator, BATCH_SIZE)):
        yield chunk


def _tag_batch(paper_ids: list[int], rules: list[CompiledRule]) -> int:
    categories: dict[int, set[str]] = {}
    for paper_id, code in PaperCategory.objects.filter(paper_id__in=paper_ids).values_list(
        "paper_id", "category__code"
    ):
        categories.setdefault(paper_id, set()).add(code)
    papers = Paper.objects.filter(pk__in=paper_ids).values_list(
        "pk", "title", "abstract", F("primary_category__code")
    )
    wanted: set[tuple[int, int]] = set()
    for paper_id, title, abstract, primary in papers:
        codes = categories.get(paper_id, set()) | ({primary} if primary else set())
        text = f"{title}\n{abstract}"
        wanted.update(
            (paper_id, rule.tag_id) for rule in rules if rule.matches(text=text, categories=codes)
        )
    if not wanted:
        return 0
    held = set(
        PaperTag.objects.filter(
            paper_id__in=paper_ids, tag_id__in={tag_id for _, tag_id in wanted}
        ).values_list("paper_id", "tag_id")
    )
    now = timezone.now()
    new = [
        PaperTag(paper_id=paper_id, tag_id=tag_id, added_at=now)
        for paper_id, tag_id in sorted(wanted - held)
    ]
    PaperTag.objects.bulk_create(new, ignore_conflicts=True)
    # bulk_create sends no post_save: tag pages would stay stale without it.
    papers_changed(row.paper_id for row in new)
    return len(new)
