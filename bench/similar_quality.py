"""How topical the similar papers are, on the demo catalog.

    python -m bench.similar_quality [--show]

Loads the demo (catalog/demo/papers.json) into a scratch SQLite database,
which builds its vectors and neighbours as `make run` does, then for each of
the 20 papers of the Korean list (the PyTorchKR paper list: the demo papers
not from the R1_Reasoning digests) looks at its top 5 similar papers: a neighbour is on topic
when it shares a tag with the paper, or when both papers name one of the
demo's topics (the topic words of tools/build_demo.py: reinforcement
learning, RL, GRPO, RAG, multimodal, agents, math problems, geometry,
verifiers, reward models...) in their title or abstract. The target is 70%
of the 100 neighbours. Also reported, not counted: neighbours sharing a rarer
word of their titles (not a stop word, in at most a tenth of the titles).
"""

import argparse
import os
import re
import sys
import tempfile
from pathlib import Path

TOP = 5
TARGET = 0.70
COMMON_SHARE = 0.10
WORD = re.compile(r"[a-z][a-z0-9-]{3,}")


def title_words(title: str, stop: frozenset[str]) -> set[str]:
    return {word for word in WORD.findall(title.lower()) if word not in stop}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--show", action="store_true", help="list every paper's neighbours")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="similar-quality-"))
    os.environ.update(
        DATABASE_URL=f"sqlite:///{scratch / 'demo.sqlite3'}",
        VECTOR_DIR=str(scratch / "vectors"),
        DISCOVERY_AUTO="1",
        EMBEDDING_BACKEND="tfidf",
        DEBUG="1",
        REDIS_URL="",
    )
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    from catalog.models import Paper, SimilarPaper
    from tools.build_demo import TOPIC_RULES

    def topics(paper: Paper) -> set[str]:
        text = f"{paper.title}\n{paper.abstract}"
        return {name for name, rule in TOPIC_RULES.items() if rule.search(text)}

    call_command("migrate", verbosity=0)
    call_command("load_demo", verbosity=0)
    papers = {p.pk: p for p in Paper.objects.prefetch_related("tags")}
    titles = [p.title for p in papers.values()]
    counts: dict[str, int] = {}
    for title in titles:
        for word in title_words(title, frozenset(ENGLISH_STOP_WORDS)):
            counts[word] = counts.get(word, 0) + 1
    common = {word for word, n in counts.items() if n > COMMON_SHARE * len(titles)}
    stop = frozenset(ENGLISH_STOP_WORDS) | common
    # The digests' papers all carry their topic, R1_Reasoning; the list's none.
    korean_list = sorted(
        (p for p in papers.values() if "r1-reasoning" not in {t.slug for t in p.tags.all()}),
        key=lambda p: p.arxiv_id,
        reverse=True,
    )
    neighbours = by_tag = on_topic = by_word = 0
    for paper in korean_list:
        tags = {t.slug for t in paper.tags.all()}
        named = topics(paper)
        words = title_words(paper.title, stop)
        rows = SimilarPaper.objects.filter(paper=paper).order_by("rank")[:TOP]
        if args.show:
            print(f"\n{paper.arxiv_id} {paper.title[:70]}  {sorted(tags)}")
        for row in rows:
            other = papers[row.similar_id]
            shared_tags = tags & {t.slug for t in other.tags.all()}
            shared_topics = named & topics(other)
            shared_words = words & title_words(other.title, stop)
            neighbours += 1
            by_tag += bool(shared_tags)
            on_topic += bool(shared_tags or shared_topics)
            by_word += bool(shared_words)
            if args.show:
                mark = "+" if shared_tags or shared_topics else "-"
                why = sorted(shared_tags) + sorted(shared_topics) + sorted(shared_words)
                print(f"  {mark} {row.score:.3f} {other.title[:60]}  {why}")
    share = on_topic / neighbours if neighbours else 0.0
    print(
        f"Korean list: {len(korean_list)} papers, {neighbours} neighbours (top {TOP}); "
        f"on topic {on_topic} ({share:.0%}): sharing a tag {by_tag}, "
        f"or else naming a topic {on_topic - by_tag}; target {TARGET:.0%}"
    )
    print(
        f"Sharing a title word {by_word} (words in over a tenth of the titles left out: "
        f"{', '.join(sorted(common))})"
    )
    return 0 if share >= TARGET and len(korean_list) == 20 else 1


if __name__ == "__main__":
    sys.exit(main())
