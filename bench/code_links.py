"""Precision and recall of ingest.code_links on the labelled set of real abstracts.

    python -m bench.code_links [--show-misses]

The set (tests/data/code_links/labelled.jsonl, described in the README beside
it) gives each entry's abstract and comment as arXiv sends them, the links a
careful reader finds in them (code, data, models, project pages; not links
to the paper or its publication) and which one, if any, is the official one.
"""

import argparse
import json
from dataclasses import dataclass
from pathlib import Path

from ingest.code_links import find_code_links

LABELLED = (
    Path(__file__).resolve().parent.parent / "tests" / "data" / "code_links" / "labelled.jsonl"
)


@dataclass
class Score:
    entries: int = 0
    expected: int = 0  # links labelled
    found: int = 0  # links the extractor gave
    matched: int = 0  # links both gave
    official_labelled: int = 0
    official_given: int = 0
    official_right: int = 0

    @property
    def link_recall(self) -> float:
        return self.matched / self.expected if self.expected else 1.0

    @property
    def link_precision(self) -> float:
        return self.matched / self.found if self.found else 1.0

    @property
    def official_precision(self) -> float:
        return self.official_right / self.official_given if self.official_given else 1.0

    @property
    def official_recall(self) -> float:
        return self.official_right / self.official_labelled if self.official_labelled else 1.0


def load(path: Path = LABELLED) -> list[dict]:
    with open(path, encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def score(entries: list[dict]) -> tuple[Score, list[str]]:
    """The scores, and a line for each entry the extractor got wrong."""
    total, misses = Score(), []
    for entry in entries:
        links = find_code_links(abstract=entry["abstract"], comment=entry["comment"])
        found = [link.url for link in links]
        official = next((link.url for link in links if link.official), None)
        expected = entry["links"]
        total.entries += 1
        total.expected += len(expected)
        total.found += len(found)
        total.matched += len(set(found) & set(expected))
        total.official_labelled += entry["official"] is not None
        total.official_given += official is not None
        total.official_right += official is not None and official == entry["official"]
        if set(found) != set(expected) or official != entry["official"]:
            misses.append(
                f"{entry['id']}: found {found}, expected {expected}; "
                f"official {official}, expected {entry['official']}"
            )
    return total, misses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show-misses", action="store_true")
    args = parser.parse_args()
    entries = load()
    total, misses = score(entries)
    with_links = sum(bool(entry["links"]) for entry in entries)
    print(f"{total.entries} entries, {with_links} with links, {total.expected} links labelled")
    print(
        f"links:    recall {total.link_recall:.1%} ({total.matched}/{total.expected}),"
        f" precision {total.link_precision:.1%} ({total.matched}/{total.found})"
    )
    print(
        f"official: precision {total.official_precision:.1%}"
        f" ({total.official_right}/{total.official_given}),"
        f" recall {total.official_recall:.1%} ({total.official_right}/{total.official_labelled})"
    )
    if args.show_misses:
        print("\n".join(misses))


if __name__ == "__main__":
    main()
