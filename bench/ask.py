"""What asking a paper costs the web before and besides the model: finding the
passages of a long paper's stored text, and a question answered with them or
from a kept answer.

    BENCH_DATABASE=papershelf_ask python -m bench.ask --paragraphs 400

A fresh database (DATABASE_URL's server, named BENCH_DATABASE) holds one paper
whose stored text has this many paragraphs of about 120 words drawn, Zipfian,
from the demo abstracts' words, 20 to a section. Each question is 8 such
words. Prints the median and p95 of finding the passages (best_passages), and
of POST /ask/ answered with the passages (no model configured) and from a kept
answer, each with its queries, under production settings.
"""

import argparse
import os
import statistics
import time

import django
import numpy as np

from bench import database
from bench.corpus import vocabulary, zipf

SEED = 20261207
WORDS_PER_PARAGRAPH = 120
PARAGRAPHS_PER_SECTION = 20


def text(rng: np.random.Generator, words: list[str], count: int) -> str:
    return " ".join(words[i] for i in zipf(rng, count, len(words), 1.07)).capitalize() + "."


def p95(times: list[float]) -> float:
    return sorted(times)[max(0, int(len(times) * 0.95) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paragraphs", type=int, default=400)
    parser.add_argument("--questions", type=int, default=200)
    args = parser.parse_args()

    database.create()
    os.environ.update(database.django_env(LLM_MODEL=""))
    database.migrate()
    database.manage("collectstatic", "--noinput", "--verbosity", "0")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()

    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from answers.passages import best_passages
    from catalog.models import FullText, Paper
    from enrichment.fulltext import ParsedSection, ParsedText, store_fulltext

    rng = np.random.default_rng(SEED)
    words = vocabulary()
    paper = Paper.objects.create(arxiv_id="2612.00001", title="A long paper", abstract="Long.")
    sections = [
        ParsedSection(
            heading=f"{number + 1} {text(rng, words, 3)}",
            level=1,
            paragraphs=[
                text(rng, words, WORDS_PER_PARAGRAPH)
                for _ in range(min(PARAGRAPHS_PER_SECTION, args.paragraphs - start))
            ],
        )
        for number, start in enumerate(range(0, args.paragraphs, PARAGRAPHS_PER_SECTION))
    ]
    store_fulltext(
        paper=paper, parsed=ParsedText(source=FullText.Source.HTML, sections=sections), pictures=[]
    )
    characters = FullText.objects.get(paper=paper).characters
    questions = [text(rng, words, 8) + "?" for _ in range(args.questions)]

    found, timings = [], []
    for question in questions:
        started = time.perf_counter()
        found.append(len(best_passages(paper=paper, question=question)))
        timings.append((time.perf_counter() - started) * 1000)

    client = Client()
    client.force_login(get_user_model().objects.create_user("bench-reader"))

    def asked(question: str) -> tuple[float, int]:
        with CaptureQueriesContext(connection) as queries:
            started = time.perf_counter()
            response = client.post(f"/ask/{paper.pk}/", {"question": question})
            elapsed = (time.perf_counter() - started) * 1000
        assert response.status_code == 200, response.status_code
        return elapsed, len(queries)

    passages = [asked(question) for question in questions]
    # A kept answer, as the model would have left it, asked again and again.
    from answers.models import Answer

    Answer.objects.create(
        paper=paper,
        version=0,
        question_key="kept question",
        question="Kept question?",
        status=Answer.Status.NOT_IN_TEXT,
        passages=[],
        model="bench",
    )
    kept = [asked("Kept question?") for _ in questions]

    print(
        f"{args.paragraphs} paragraphs, {characters:,} characters; "
        f"{statistics.mean(found):.1f} passages found a question on average"
    )
    print("| step | median | p95 | queries |")
    print("| --- | --- | --- | --- |")
    median = statistics.median(timings)
    print(f"| finding the passages | {median:.1f} ms | {p95(timings):.1f} ms | 1 |")
    for label, runs in (
        ("POST /ask/, passages (no model)", passages),
        ("POST /ask/, kept answer", kept),
    ):
        times = [elapsed for elapsed, _ in runs]
        print(
            f"| {label} | {statistics.median(times):.1f} ms | {p95(times):.1f} ms | {runs[-1][1]} |"
        )


if __name__ == "__main__":
    main()
