"""How topical the similar papers and For you are, on real abstracts judged by hand.

    python -m bench.similar_quality [--show] [--unjudged] [--stale]

Loads a scratch SQLite database with the pool, 397 real abstracts: the recorded
arXiv answers under tests/data/arxiv-api (stored through the ingest pipeline,
as a harvest stores them), the 235 papers of arXiv's daily listings in the
code-link set (tests/data/code_links/labelled.jsonl: every field of arXiv, a
few days of 2026; the set has no titles, so they are stored with their
abstract alone) and the demo (`load_demo`, which builds the vectors and
similar papers as `make run` does, fitted on every paper loaded).

Similar papers: for each judged paper (every `paper` of
bench/similar_judgments.jsonl), its first five similar papers as the paper
page shows them are looked up in the judgments. A pair was graded by reading
both titles and abstracts: 2 on the same problem or method, 1 worth a look
for a reader of the first (a shared topic), 0 off topic, each with its
reason. A pair is judged once, for either order.

For you: each reader of bench/for_you_judgments.jsonl saved five papers of
the pool; their first five recommendations (the window opened to the whole
pool) are looked up in that file's grades, made the same way against what
the reader's five papers share.

Precision at 5: the share of the five graded 1 or 2. A pair no one judged
counts as a miss and is listed with --unjudged, with both texts, for judging.
Many judged papers have fewer than five papers on their topic in so small a
pool, so precision is also given over those with at least five judged on
topic, and the best any ranking could reach with the papers judged on topic.

--stale measures what the issue of a stale model is: the demo loaded and
fitted alone, then the rest of the pool arriving as ingest stores papers (the
tasks queued on commit, run inline), before the nightly rebuild.
"""

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
SIMILAR_JUDGMENTS = HERE / "similar_judgments.jsonl"
FOR_YOU_JUDGMENTS = HERE / "for_you_judgments.jsonl"
ARXIV_ANSWERS = HERE.parent / "tests" / "data" / "arxiv-api"
CODE_LINK_SET = HERE.parent / "tests" / "data" / "code_links" / "labelled.jsonl"
LISTING_ORIGIN = "arXiv listing, 2026 (daily digest data)"
TOP = 5
TARGET = 0.8


@dataclass(frozen=True)
class Reader:
    name: str
    saved: tuple[str, ...]
    need: str
    grades: dict[str, int]


def read_pairs() -> tuple[list[str], dict[frozenset[str], int]]:
    """The judged papers, in the file's order, and every pair's grade."""
    papers: list[str] = []
    grades: dict[frozenset[str], int] = {}
    for line in SIMILAR_JUDGMENTS.read_text().splitlines():
        entry = json.loads(line)
        if entry["paper"] not in papers:
            papers.append(entry["paper"])
        pair = frozenset((entry["paper"], entry["similar"]))
        if pair in grades:
            raise SystemExit(f"judged twice: {sorted(pair)}")
        grades[pair] = int(entry["grade"])
    return papers, grades


def read_readers() -> list[Reader]:
    readers = []
    for line in FOR_YOU_JUDGMENTS.read_text().splitlines():
        entry = json.loads(line)
        readers.append(
            Reader(
                name=entry["reader"],
                saved=tuple(entry["saved"]),
                need=entry["need"],
                grades={item["paper"]: int(item["grade"]) for item in entry["judged"]},
            )
        )
    return readers


def setup() -> None:
    scratch = Path(tempfile.mkdtemp(prefix="similar-quality-"))
    os.environ.update(
        DATABASE_URL=f"sqlite:///{scratch / 'pool.sqlite3'}",
        VECTOR_DIR=str(scratch / "vectors"),
        DISCOVERY_AUTO="1",
        EMBEDDING_BACKEND="tfidf",
        EAGER_TASKS_IN_THREADS="off",
        DEBUG="1",
        REDIS_URL="",
        # The papers stored with --stale would otherwise queue summaries, and
        # previews and full texts fetched from arXiv: none bears on neighbours.
        SUMMARY_AUTO="0",
        PREVIEW_AUTO="0",
        FULLTEXT_AUTO="0",
    )
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()


def listing_records() -> list[object]:
    from ingest.records import ArxivRecord

    records = []
    for line in CODE_LINK_SET.read_text().splitlines():
        entry = json.loads(line)
        if entry["origin"] == LISTING_ORIGIN:
            records.append(
                ArxivRecord(
                    arxiv_id=entry["id"],
                    version=None,
                    title="",
                    abstract=entry["abstract"],
                    authors=(),
                    primary_category="",
                    categories=(),
                    comment=entry["comment"],
                )
            )
    return records


def load_pool(*, stale: bool) -> None:
    """The pool, fitted on all of it; or (stale) fitted on the demo, the rest
    stored after as ingest stores new papers."""
    from django.core.management import call_command

    from ingest.arxiv_api import entry_from_result, parse_page
    from ingest.pipeline import store_batch

    call_command("migrate", verbosity=0)
    if stale:
        call_command("load_demo", verbosity=0)
    batches = [listing_records()]
    for path in sorted(ARXIV_ANSWERS.glob("*.xml")):
        feed = parse_page(path.read_bytes(), first_page=True)
        batches.append([entry_from_result(result) for result in feed.results])
    for batch in batches:
        store_batch(batch, bulk=not stale)  # type: ignore[arg-type]
    if not stale:
        call_command("load_demo", verbosity=0)


def keys() -> dict[int, str]:
    """Each paper's key in the judgments: its arXiv id, or its title."""
    from catalog.models import Paper

    return {
        pk: arxiv_id or f"title:{title}"
        for pk, arxiv_id, title in Paper.objects.values_list("pk", "arxiv_id", "title")
    }


def similar_of(paper_ids: Iterable[int]) -> dict[int, list[int]]:
    from catalog.models import SimilarPaper

    found: dict[int, list[int]] = {}
    rows = SimilarPaper.objects.filter(paper_id__in=list(paper_ids), rank__lte=TOP)
    for paper_id, similar_id in rows.order_by("paper_id", "rank").values_list(
        "paper_id", "similar_id"
    ):
        found.setdefault(paper_id, []).append(similar_id)
    return found


def recommended_for(readers: list[Reader], ids: dict[str, int]) -> list[list[int]]:
    """Each reader's first recommendations, ranked as the nightly job ranks them,
    over the whole pool (its dates span decades)."""
    import datetime

    from django.conf import settings
    from django.test import override_settings
    from django.utils import timezone

    from discovery import for_you, vectors

    key = vectors.current_key()
    now = timezone.now()
    with override_settings(FOR_YOU_DAYS=365 * 100):
        window = for_you.load_window(end=now, key=key)
    assert len(window.ids) == len(ids), (len(window.ids), len(ids), settings.FOR_YOU_DAYS)
    seeds = [
        for_you.seeds_of(
            interests=for_you.Interests(
                user_id=0, saved_ids=[ids[key] for key in reader.saved], tag_ids=[]
            ),
            key=key,
        )
        for reader in readers
    ]
    ranked = for_you.rank_for_readers(
        window=window, readers=seeds, now=now + datetime.timedelta(days=365 * 100)
    )
    return [[item.paper_id for item in items[:TOP]] for items in ranked]


def text_of(pk: int) -> str:
    from catalog.models import Paper

    paper = Paper.objects.get(pk=pk)
    tags = ", ".join(sorted(tag.name for tag in paper.tags.all()))
    return f"{paper.arxiv_id} [{tags}] {paper.title}\n    {paper.abstract[:700]}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--show", action="store_true", help="every judged paper's neighbours")
    parser.add_argument("--unjudged", action="store_true", help="print unjudged pairs' texts")
    parser.add_argument("--stale", action="store_true", help="the rest arriving after the demo")
    args = parser.parse_args()
    setup()
    load_pool(stale=args.stale)
    by_key = {key: pk for pk, key in keys().items()}
    judged, grades = read_pairs()
    missing = [key for key in judged if key not in by_key]
    if missing:
        print(f"judged papers missing from the pool: {missing}", file=sys.stderr)
        return 1
    key_of = {pk: key for key, pk in by_key.items()}
    found = similar_of(by_key[key] for key in judged)
    on_topic: dict[str, set[str]] = {}
    for pair, grade in grades.items():
        first, second = sorted(pair)
        if grade > 0:
            on_topic.setdefault(first, set()).add(second)
            on_topic.setdefault(second, set()).add(first)
    rich = {key for key in judged if len(on_topic.get(key, ())) >= TOP}
    ceiling = sum(min(TOP, len(on_topic.get(key, ()))) for key in judged) / (TOP * len(judged))
    hits = places = unjudged = rich_hits = 0
    for key in judged:
        neighbours = [key_of[pk] for pk in found.get(by_key[key], [])]
        marks = []
        for other in neighbours:
            grade = grades.get(frozenset((key, other)))
            hits += grade is not None and grade > 0
            rich_hits += key in rich and grade is not None and grade > 0
            unjudged += grade is None
            marks.append("?" if grade is None else str(grade))
            if grade is None and args.unjudged:
                print(f"\nUNJUDGED {key} ~ {other}\n  {text_of(by_key[key])}")
                print(f"  {text_of(by_key[other])}")
        places += TOP
        if args.show:
            print(f"{key}: {' '.join(marks)}  {' '.join(neighbours)}")
    print(
        f"Similar papers: {len(judged)} papers, {len(grades)} judged pairs; precision@{TOP} "
        f"{hits / places:.3f} ({hits} of {places} on topic, {unjudged} unjudged counted as misses)"
        f"; target {TARGET}"
    )
    print(
        f"  the {len(rich)} papers with at least {TOP} judged on topic: precision@{TOP} "
        f"{rich_hits / (TOP * len(rich)):.3f}; the best reachable with the papers judged on "
        f"topic: {ceiling:.3f} over all {len(judged)}"
    )
    readers = read_readers()
    lists = recommended_for(readers, by_key)
    hits = unjudged = 0
    for reader, recommended in zip(readers, lists, strict=True):
        marks = []
        for pk in recommended:
            grade = reader.grades.get(key_of[pk])
            hits += grade is not None and grade > 0
            unjudged += grade is None
            marks.append("?" if grade is None else str(grade))
            if grade is None and args.unjudged:
                print(f"\nUNJUDGED for {reader.name} ({reader.need})\n  {text_of(pk)}")
        if args.show:
            print(f"{reader.name}: {' '.join(marks)}  {' '.join(key_of[pk] for pk in recommended)}")
    share = hits / (TOP * len(readers)) if readers else 0.0
    print(
        f"For you: {len(readers)} readers; precision@{TOP} {share:.3f} "
        f"({hits} of {TOP * len(readers)}, {unjudged} unjudged counted as misses)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
