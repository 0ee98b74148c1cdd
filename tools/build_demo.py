"""Build the demo catalog, catalog/demo/papers.json, from text dumps of three
listing pages and the arXiv facts gathered for their papers.

    python -m tools.build_demo tests/data/seeds [--metadata FILE]

SEED_DIR holds the pages as text: a PyTorchKR paper list (arXiv ids, titles,
abstracts) and ChatPaperFree daily digests for one topic (titles, authors,
abstracts, arXiv comments and machine-written Chinese translations, summaries
and key takeaways). The metadata file (tests/data/demo-metadata/) gives, for
each of their papers, the public arXiv facts gathered by hand: id, version,
authors, dates, categories, code links, with the pages they were read from.
The JSON is committed, so the site needs none of these files;
`manage.py load_demo` reads it.

Only what the pages and the gathered facts say goes in, each paper with the
provenance of its facts. The one derived fact is the month a new-style arXiv
id encodes, for a paper whose first submission day was not seen; a digest's
date is the day the paper entered that listing.
"""

import argparse
import datetime
import json
import os
import re
import sys
from collections.abc import Callable, Hashable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import django
from django.core.exceptions import ValidationError

from catalog import arxiv_ids
from catalog.taxonomy import validate_category_code
from ingest.code_links import extract_code_urls, normalize_url

PROJECT = Path(__file__).resolve().parent.parent
OUTPUT = PROJECT / "catalog" / "demo" / "papers.json"
METADATA = PROJECT / "tests" / "data" / "demo-metadata" / "arxiv_metadata.json"
GATHERED_BY = "Demo data: public arXiv facts gathered by hand from stored web pages"

DIGEST_NAME = "ChatPaperFree digest"
DIGEST_LANGUAGE = "zh-hans"

TAG_DESCRIPTIONS = {
    "R1_Reasoning": (
        "Reasoning in large language models in the wake of DeepSeek-R1: long chains of "
        "thought, reinforcement learning with verifiable rewards, and what these models "
        "can and cannot do."
    ),
    "Reinforcement_Learning": (
        "Reinforcement learning for language models: RLVR, GRPO and PPO, reward design "
        "and policy optimisation."
    ),
    "Retrieval_Augmented_Generation": (
        "Retrieval-augmented generation: models that search and read external sources "
        "while they answer."
    ),
    "Multimodal": "Models that reason over images, video or sound as well as text.",
    "Agents": "Language-model agents that plan, use tools and act, alone or together.",
    "Math_Reasoning": "Mathematical reasoning: math word problems, geometry and proofs.",
    "Verifiers": (
        "Checking model outputs: verifiers, reward models and process supervision of "
        "reasoning steps."
    ),
}

# Topic tags given by keywords: a paper gets a topic when its title names it or
# its abstract does more than once, so a passing mention ("unlike math or
# coding, ...") does not tag it.
TOPIC_RULES = {
    "Reinforcement_Learning": re.compile(
        r"reinforcement[- ]learn|\bRL(?:VR|HF)?\b|\bGRPO\b|\bPPO\b|policy optimi[sz]ation",
        re.I,
    ),
    "Retrieval_Augmented_Generation": re.compile(r"retrieval[- ]augmented|\bRAG\b", re.I),
    "Multimodal": re.compile(
        r"multi-?modal|vision[- ]language|\bMLLMs?\b|\bvideos?\b|\bX-rays?\b|\bimages?\b",
        re.I,
    ),
    "Agents": re.compile(r"\bagents?\b|\bagentic\b", re.I),
    "Math_Reasoning": re.compile(
        r"\bmath(?:ematical)? (?:reasoning|problems?|questions?|benchmarks?)|\bgeometr(?:y|ic)\b",
        re.I,
    ),
    "Verifiers": re.compile(
        r"\bverifiers?\b|\bverification\b|\breward models?\b|\bPRMs?\b|\bprocess reward",
        re.I,
    ),
}
TOPIC_MENTIONS_IN_ABSTRACT = 2

CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")

# PyTorchKR list: "arXiv:2505.15034공식 코드 · Papers with Code" opens an entry;
# the id runs up to the Korean link text.
LIST_ENTRY = re.compile(r"^arXiv:(?P<id>[!-~]+?)(?=[^!-~]|$)")

# ChatPaperFree digest.
DIGEST_DATE = re.compile(r"^(?P<date>\d{4}-\d{2}-\d{2}) 更新$")
AUTHORS = re.compile(r"^Authors\s*[:\uff1a]\s*(?P<names>.*)$")
LINKS_HEADING = "论文及项目相关链接"
PDF_LINE = re.compile(r"^PDF(?:\s+(?P<comment>.*))?$")
# Most entries write "Summary" and "Key Takeaways"; some put the text on the
# heading's line after a full-width colon, one uses Chinese headings.
SUMMARY_HEADING = re.compile(r"^(?:Summary|摘要)(?:\s*[:\uff1a]\s*(?P<rest>.*))?$")
TAKEAWAYS_HEADING = re.compile(r"^(?:Key Takeaways|关键见解)\s*[:\uff1a]?$")
TAKEAWAY_MARKER = re.compile(r"^(?:\d+\s*[.、)\uff09]|[•·*-])\s*")
FOOTER_LINES = {"Cool Papers", "点此查看论文截图"}


@dataclass
class DemoTag:
    name: str
    added_at: str | None = None


@dataclass
class DemoCodeLink:
    url: str
    source: str
    kind: str = "official"


@dataclass
class DemoSummary:
    kind: str
    body: str
    written_by: str
    language: str
    backend: str = "llm"
    status: str = "published"


@dataclass
class DemoProvenance:
    """Where a paper's arXiv facts came from (catalog.models.PaperProvenance)."""

    gathered_by: str
    confidence: str
    sources: list[str]
    notes: str


@dataclass
class DemoPaper:
    title: str
    abstract: str
    arxiv_id: str | None = None
    version: int | None = None
    authors: list[str] = field(default_factory=list)
    comment: str = ""
    published_at: str | None = None
    published_precision: str | None = None
    updated_at: str | None = None
    added_at: str | None = None
    primary_category: str | None = None
    categories: list[str] = field(default_factory=list)
    tags: list[DemoTag] = field(default_factory=list)
    code_links: list[DemoCodeLink] = field(default_factory=list)
    summaries: list[DemoSummary] = field(default_factory=list)
    provenance: DemoProvenance | None = None


class PageError(ValueError):
    """A page does not have the shape the parser knows; the message says where."""


def parse_paper_list(text: str) -> list[DemoPaper]:
    """Entries of a PyTorchKR list: id line, title, abstract paragraphs."""
    entries: list[tuple[str, list[str]]] = []
    for paragraph in _paragraphs(text):
        if match := LIST_ENTRY.match(paragraph):
            entries.append((match.group("id"), []))
        elif entries:
            entries[-1][1].append(paragraph)
    return [_list_entry(raw_id, paragraphs) for raw_id, paragraphs in entries]


def _list_entry(raw_id: str, paragraphs: list[str]) -> DemoPaper:
    parsed = arxiv_ids.split_version(raw_id)
    if parsed is None:
        raise PageError(f"arXiv:{raw_id}: not an arXiv id")
    if len(paragraphs) < 2:
        raise PageError(f"arXiv:{raw_id}: an entry needs a title and an abstract")
    arxiv_id, version = parsed
    published_at = _month_of(arxiv_id)
    return DemoPaper(
        title=paragraphs[0],
        abstract="\n\n".join(paragraphs[1:]),
        arxiv_id=arxiv_id,
        version=version,
        published_at=published_at,
        published_precision="month" if published_at else None,
    )


def parse_digest(text: str) -> list[DemoPaper]:
    """Entries of a ChatPaperFree digest page, each tagged with the page's topic."""
    lines = [line.strip() for line in text.splitlines()]
    topic = next(line for line in lines if line)
    date_match = next(filter(None, map(DIGEST_DATE.match, lines)), None)
    if date_match is None:
        raise PageError(f"{topic}: no 'YYYY-MM-DD 更新' line")
    listed_on = date_match.group("date")
    added_at = f"{listed_on}T00:00:00+00:00"
    written_by = f"{DIGEST_NAME}, {listed_on}"

    starts = [(index, found) for index, line in enumerate(lines) if (found := AUTHORS.match(line))]
    papers = []
    for number, (authors_index, authors) in enumerate(starts):
        title_index = _previous_nonblank(lines, authors_index)
        end = _previous_nonblank(lines, starts[number + 1][0]) if number + 1 < len(starts) else None
        paper = _parse_digest_entry(
            title=lines[title_index],
            names=authors.group("names"),
            lines=lines[authors_index + 1 : end],
            written_by=written_by,
        )
        paper.added_at = added_at
        paper.tags.append(DemoTag(name=topic, added_at=added_at))
        papers.append(paper)
    return papers


def _parse_digest_entry(*, title: str, names: str, lines: list[str], written_by: str) -> DemoPaper:
    english: list[str] = []
    chinese: list[str] = []
    comment = ""
    summary: list[str] = []
    takeaways: list[str] = []
    section = "abstract"
    for line in lines:
        if not line:
            continue
        if line in FOOTER_LINES:
            section = "footer"
        elif section == "footer":
            raise PageError(f"{title}: text after the footer: {line[:60]}")
        elif line == LINKS_HEADING:
            section = "links"
        elif section == "links" and (pdf := PDF_LINE.match(line)):
            comment = (pdf.group("comment") or "").strip()
        elif heading := SUMMARY_HEADING.match(line):
            section = "summary"
            summary.extend(filter(None, [(heading.group("rest") or "").strip()]))
        elif TAKEAWAYS_HEADING.match(line):
            section = "takeaways"
        elif section == "abstract":
            (chinese if CJK.search(line) else english).append(line)
        elif section in ("links", "summary"):
            # A summary sometimes follows the links with no heading of its own.
            section = "summary"
            summary.append(line)
        elif section == "takeaways":
            if TAKEAWAY_MARKER.match(line) or not takeaways:
                takeaways.append(TAKEAWAY_MARKER.sub("", line))
            else:
                takeaways[-1] = f"{takeaways[-1]} {line}"
    if not english:
        raise PageError(f"{title}: no English abstract")
    summaries = [
        # The digest writes in Chinese, but now and then a section comes in English.
        DemoSummary(
            kind=kind,
            body=body,
            written_by=written_by,
            language=DIGEST_LANGUAGE if CJK.search(body) else "en",
        )
        for kind, body in (
            ("translation", "\n\n".join(chinese)),
            ("summary", "\n\n".join(summary)),
            ("takeaways", "\n".join(f"{n}. {item}" for n, item in enumerate(takeaways, 1))),
        )
        if body
    ]
    return DemoPaper(
        title=title,
        abstract="\n\n".join(english),
        authors=[name.strip() for name in names.split(",") if name.strip()],
        comment=comment,
        summaries=summaries,
    )


def merge_same_papers(papers: Iterable[DemoPaper]) -> list[DemoPaper]:
    """One paper per title: what a later page adds fills what an earlier one lacked."""
    # Imported here: catalog.models needs Django set up, which main() does first.
    from catalog.models import title_key

    merged: dict[str, DemoPaper] = {}
    for paper in papers:
        key = title_key(paper.title)
        if key not in merged:
            merged[key] = paper
            continue
        kept = merged[key]
        for name in (
            "arxiv_id",
            "version",
            "abstract",
            "authors",
            "comment",
            "published_at",
            "published_precision",
        ):
            if not getattr(kept, name):
                setattr(kept, name, getattr(paper, name))
        kept.added_at = min(filter(None, [kept.added_at, paper.added_at]), default=None)
        kept.tags = _union(kept.tags + paper.tags, key=lambda tag: tag.name)
        kept.summaries = _union(kept.summaries + paper.summaries, key=_summary_key)
    return list(merged.values())


def add_code_links(paper: DemoPaper) -> None:
    for source, text in (("abstract", paper.abstract), ("comment", paper.comment)):
        paper.code_links.extend(
            DemoCodeLink(url=url, source=source) for url in extract_code_urls(text)
        )
    paper.code_links = _union(paper.code_links, key=lambda link: link.url)


def add_topic_tags(paper: DemoPaper) -> None:
    paper.tags.extend(
        DemoTag(name=name)
        for name, rule in TOPIC_RULES.items()
        if rule.search(paper.title)
        or len(rule.findall(paper.abstract)) >= TOPIC_MENTIONS_IN_ABSTRACT
    )
    paper.tags = _union(paper.tags, key=lambda tag: tag.name)


def add_arxiv_facts(papers: list[DemoPaper], facts: list[dict[str, Any]]) -> None:
    """Give each paper what arXiv says of it, as gathered by hand (see
    tests/data/demo-metadata/README.md), with where it came from.

    The gathered facts win over the listings' for the id, version, authors and
    dates; the listings' title, abstract, comment and summaries stay. A fact
    not seen (null) is left out, never guessed: categories without a primary
    one leave the primary empty.
    """
    # Imported here: catalog.models needs Django set up, which main() does first.
    from catalog.models import title_key

    by_key = {title_key(paper.title): paper for paper in papers}
    for fact in facts:
        paper = by_key.pop(title_key(fact["seed_title"]), None)
        if paper is None:
            raise PageError(f"{fact['seed_title'][:60]}: gathered facts for no paper of the pages")
        paper.provenance = DemoProvenance(
            gathered_by=GATHERED_BY,
            confidence=fact["confidence"] or "",
            sources=list(fact["sources"]),
            notes=fact["notes"] or "",
        )
        if fact["arxiv_id"]:
            _take_facts(paper, fact)


def _take_facts(paper: DemoPaper, fact: dict[str, Any]) -> None:
    arxiv_id = fact["arxiv_id"]
    if arxiv_ids.split_version(arxiv_id) != (arxiv_id, None):
        raise PageError(f"{paper.title[:60]}: {arxiv_id} is not an unversioned arXiv id")
    if paper.arxiv_id and paper.arxiv_id != arxiv_id:
        raise PageError(f"{paper.title[:60]}: the page says {paper.arxiv_id}, the facts {arxiv_id}")
    paper.arxiv_id = arxiv_id
    if fact["latest_version"]:
        paper.version = int(fact["latest_version"].removeprefix("v"))
    if fact["first_submitted"]:
        paper.published_at, paper.published_precision = _day_of(fact["first_submitted"]), "day"
    elif not paper.published_at and (month := _month_of(arxiv_id)):
        paper.published_at, paper.published_precision = month, "month"
    if fact["latest_submitted"]:
        paper.updated_at = _day_of(fact["latest_submitted"])
    paper.authors = fact["authors"] or paper.authors
    paper.comment = paper.comment or fact["comments"] or ""
    paper.primary_category = fact["primary_category"]
    paper.categories = list(
        dict.fromkeys(filter(None, [fact["primary_category"], *(fact["categories"] or [])]))
    )
    for code in paper.categories:
        try:
            validate_category_code(code)
        except ValidationError as error:
            raise PageError(f"{paper.title[:60]}: {code!r} is not a category code") from error
    paper.code_links = _union(
        paper.code_links
        + [
            DemoCodeLink(url=url, source="other")
            for url in map(normalize_url, fact["code_urls"])
            if url
        ],
        key=lambda link: link.url,
    )


def build(seed_dir: Path, *, metadata: list[dict[str, Any]]) -> dict[str, Any]:
    """The demo catalog from every page in seed_dir and the facts gathered for
    their papers: digests oldest first, so a paper listed twice keeps the day
    it was first listed and its first summaries."""
    lists, digests = [], []
    for path in sorted(seed_dir.glob("*.txt")):
        text = path.read_text(encoding="utf-8")
        if any(map(LIST_ENTRY.match, text.splitlines())):
            lists.extend(parse_paper_list(text))
        elif any(map(DIGEST_DATE.match, text.splitlines())):
            digests.append(parse_digest(text))
        else:
            raise PageError(f"{path.name}: neither a paper list nor a digest")
    # Every paper of a digest has the digest's day (parse_digest).
    digests.sort(key=lambda papers: (papers[0].added_at or "") if papers else "")
    papers = merge_same_papers([*lists, *(paper for page in digests for paper in page)])
    for paper in papers:
        add_code_links(paper)
        add_topic_tags(paper)
    add_arxiv_facts(papers, metadata)
    tag_names = sorted({tag.name for paper in papers for tag in paper.tags})
    if undescribed := set(tag_names) - set(TAG_DESCRIPTIONS):
        raise PageError(f"tags without a description in TAG_DESCRIPTIONS: {sorted(undescribed)}")
    return {
        "tags": [
            {"name": name, "slug": _slug(name), "description": TAG_DESCRIPTIONS[name]}
            for name in tag_names
        ],
        "papers": [asdict(paper) for paper in papers],
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("seed_dir", type=Path, help="directory with the pages as .txt files")
    parser.add_argument(
        "--metadata", type=Path, default=METADATA, help="the arXiv facts gathered for the papers"
    )
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    if not args.seed_dir.is_dir():
        parser.error(f"{args.seed_dir} is not a directory")

    django.setup()
    try:
        metadata = json.loads(args.metadata.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        sys.exit(f"Cannot read {args.metadata}: {error}")
    try:
        catalog = build(args.seed_dir, metadata=metadata)
    except PageError as error:
        sys.exit(f"Cannot read the pages: {error}")
    args.output.write_text(json.dumps(catalog, ensure_ascii=False, indent=1) + "\n", "utf-8")
    print(f"Wrote {len(catalog['papers'])} papers, {len(catalog['tags'])} tags to {args.output}")


def _paragraphs(text: str) -> list[str]:
    return [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]


def _previous_nonblank(lines: list[str], index: int) -> int:
    index -= 1
    while index >= 0 and not lines[index]:
        index -= 1
    return index


def _month_of(arxiv_id: str) -> str | None:
    """First day of the month a new-style id (YYMM.NNNNN) was issued in, UTC."""
    if not arxiv_ids.NEW_STYLE.fullmatch(arxiv_id):
        return None
    year, month = 2000 + int(arxiv_id[:2]), int(arxiv_id[2:4])
    return datetime.datetime(year, month, 1, tzinfo=datetime.UTC).isoformat()


def _day_of(date: str) -> str:
    """A day (YYYY-MM-DD) as the moment it starts, UTC."""
    day = datetime.date.fromisoformat(date)
    return datetime.datetime(day.year, day.month, day.day, tzinfo=datetime.UTC).isoformat()


def _slug(tag_name: str) -> str:
    return tag_name.lower().replace("_", "-")


def _summary_key(summary: DemoSummary) -> tuple[str, str]:
    return summary.language, summary.kind


T = TypeVar("T")


def _union(items: Iterable[T], *, key: Callable[[T], Hashable]) -> list[T]:
    seen: set[Hashable] = set()
    kept: list[T] = []
    for item in items:
        if key(item) not in seen:
            seen.add(key(item))
            kept.append(item)
    return kept


if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    main()
