"""How well the list's search finds what a researcher means, on judged queries.

    python -m bench.search_quality [--postgres] [--show]

Loads a fresh database (a scratch SQLite file, or with --postgres the
benchmark database beside DATABASE_URL's, dropped and created again) with the
papers of the judged pool: the recorded arXiv answers under tests/data/arxiv-api
(stored through the ingest pipeline, as a harvest stores them) and the demo
(`load_demo`, which builds the vectors and similar papers as `make run` does,
fitted on every paper loaded). Then each query of bench/search_judgments.jsonl
is asked as a reader asks it, `/?q=<query>` with its default sort, and its
first results are scored against the judgments.

The judgments: for each query, the papers a reader looking for what it says
(`need`) would want, graded 2 (what they are looking for) or 1 (worth a look),
each with the judge's reason; every other paper of the pool was judged 0, for
the reason given under `others`. They were made by reading each paper's title
and abstract, before measuring anything.

Reported: nDCG@10 (gain 2^grade - 1, the ideal order being the judged grades
sorted), precision@5 (the share of the first five graded 1 or 2, counting an
empty place as a miss), and the share of queries that found nothing.
"""

import argparse
import json
import math
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

JUDGMENTS = Path(__file__).with_name("search_judgments.jsonl")
ARXIV_ANSWERS = Path(__file__).resolve().parent.parent / "tests" / "data" / "arxiv-api"
DEPTH = 10
PRECISION_DEPTH = 5


@dataclass
class Judged:
    query: str
    grades: dict[str, int]  # paper key -> grade; absent papers are 0


def read_judgments() -> list[Judged]:
    judged = []
    for line in JUDGMENTS.read_text().splitlines():
        entry = json.loads(line)
        grades = {item["paper"]: int(item["grade"]) for item in entry["judged"]}
        judged.append(Judged(query=entry["query"], grades=grades))
    return judged


def dcg(grades: list[int]) -> float:
    return sum((2**grade - 1) / math.log2(position + 2) for position, grade in enumerate(grades))


def ndcg(found: list[int], judged: list[int]) -> float:
    ideal = dcg(sorted(judged, reverse=True)[:DEPTH])
    return dcg(found[:DEPTH]) / ideal if ideal else 0.0


def precision(found: list[int]) -> float:
    return sum(1 for grade in found[:PRECISION_DEPTH] if grade > 0) / PRECISION_DEPTH


def setup(*, postgres: bool) -> None:
    scratch = Path(tempfile.mkdtemp(prefix="search-quality-"))
    os.environ.update(
        VECTOR_DIR=str(scratch / "vectors"),
        DISCOVERY_AUTO="1",
        EMBEDDING_BACKEND="tfidf",
        DEBUG="1",
        REDIS_URL="",
    )
    if postgres:
        os.environ.setdefault("BENCH_DATABASE", "papershelf_search_quality")
        from bench import database

        database.create()
        os.environ["DATABASE_URL"] = database.bench_url()
    else:
        os.environ["DATABASE_URL"] = f"sqlite:///{scratch / 'search.sqlite3'}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()


def load_pool() -> None:
    from django.core.management import call_command

    from ingest.arxiv_api import entry_from_result, parse_page
    from ingest.pipeline import store_batch

    call_command("migrate", verbosity=0)
    for path in sorted(ARXIV_ANSWERS.glob("*.xml")):
        feed = parse_page(path.read_bytes(), first_page=True)
        store_batch([entry_from_result(result) for result in feed.results], bulk=True)
    # Last, so that the vectors it builds are fitted on every paper of the pool.
    call_command("load_demo", verbosity=0)


def paper_keys() -> dict[int, str]:
    from catalog.models import Paper

    return {
        pk: arxiv_id or f"title:{title}"
        for pk, arxiv_id, title in Paper.objects.visible().values_list("pk", "arxiv_id", "title")
    }


def results(query: str) -> list[int]:
    """The ids of the first DEPTH papers the list shows for the query."""
    from django.http import QueryDict

    from catalog.selectors import filter_papers

    params = QueryDict(mutable=True)
    params["q"] = query
    return list(filter_papers(params).qs.values_list("pk", flat=True)[:DEPTH])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--postgres", action="store_true", help="on PostgreSQL, not SQLite")
    parser.add_argument("--show", action="store_true", help="every query's scores and results")
    args = parser.parse_args()
    setup(postgres=args.postgres)
    load_pool()
    keys = paper_keys()
    judged = read_judgments()
    unknown = {key for entry in judged for key in entry.grades if key not in keys.values()}
    if unknown:
        print(f"judged papers missing from the pool: {sorted(unknown)}", file=sys.stderr)
        return 1
    totals = {"ndcg": 0.0, "precision": 0.0, "empty": 0}
    for entry in judged:
        found = [entry.grades.get(keys[pk], 0) for pk in results(entry.query)]
        score, share = ndcg(found, list(entry.grades.values())), precision(found)
        totals["ndcg"] += score
        totals["precision"] += share
        totals["empty"] += not found
        if args.show:
            print(f"{score:5.2f} {share:4.1f} {len(found):3d}  {entry.query}  {found}")
    count = len(judged)
    database = "PostgreSQL" if args.postgres else "SQLite"
    print(
        f"{database}: {count} queries over {len(keys)} papers: "
        f"nDCG@{DEPTH} {totals['ndcg'] / count:.3f}, "
        f"precision@{PRECISION_DEPTH} {totals['precision'] / count:.3f}, "
        f"no result {totals['empty'] / count:.1%} ({totals['empty']} of {count})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
