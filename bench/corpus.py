"""A synthetic catalog of arXiv's shape, loaded by COPY into a fresh database.

    python -m bench.corpus --papers 1000000

The database (DATABASE_URL's server, named BENCH_DATABASE) is dropped,
recreated and migrated; the catalog's secondary indexes are dropped while the
rows stream in and rebuilt afterwards, as pg_restore does, then everything is
vacuumed and analysed so the planner sees what a long-running site would.

The text is drawn from the words of the demo catalog's abstracts, Zipfian by
rank, with compound terms as a long tail, so common words match most papers
and tail words a few hundred: full-text search meets the selectivities it
meets on arXiv.
"""

import argparse
import datetime
import json
import multiprocessing
import os
import re
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import psycopg

from bench import database

SEED = 20260101
AUTHOR_POOL = 500_000
TAG_COUNT = 200
YEARS = 10
TAGGED_SHARE, CODE_SHARE, SUMMARY_SHARE, HIDDEN_SHARE = 0.30, 0.10, 0.05, 0.005
CHUNK = 20_000
DEMO_PAPERS = Path(__file__).resolve().parent.parent / "catalog" / "demo" / "papers.json"

# arXiv's taxonomy, the busiest first: draws are Zipfian by this order.
CATEGORIES = [
    "cs.LG",
    "cs.CV",
    "cs.CL",
    "cs.AI",
    "stat.ML",
    "quant-ph",
    "hep-ph",
    "cond-mat.mtrl-sci",
    "hep-th",
    "astro-ph.GA",
    "math.OC",
    "cs.RO",
    "eess.IV",
    "cond-mat.mes-hall",
    "math.PR",
    "cs.CR",
    "astro-ph.CO",
    "gr-qc",
    "cond-mat.str-el",
    "math.NA",
    "cs.IT",
    "math.IT",
    "eess.SP",
    "cs.NE",
    "astro-ph.HE",
    "astro-ph.SR",
    "cs.IR",
    "cs.SE",
    "cond-mat.stat-mech",
    "math.AP",
    "math.CO",
    "cs.DC",
    "cs.SY",
    "eess.SY",
    "physics.optics",
    "cond-mat.soft",
    "astro-ph.EP",
    "math.AG",
    "cs.HC",
    "math-ph",
    "math.MP",
    "physics.flu-dyn",
    "cs.DS",
    "cs.GT",
    "cond-mat.supr-con",
    "math.DG",
    "nucl-th",
    "physics.chem-ph",
    "q-bio.NC",
    "eess.AS",
    "cs.SD",
    "math.NT",
    "hep-ex",
    "cs.NI",
    "physics.app-ph",
    "math.DS",
    "astro-ph.IM",
    "cs.MA",
    "stat.ME",
    "math.ST",
    "stat.TH",
    "cs.LO",
    "cs.CY",
    "physics.comp-ph",
    "hep-lat",
    "cs.DB",
    "physics.ins-det",
    "math.RT",
    "math.GT",
    "math.FA",
    "math.CA",
    "physics.soc-ph",
    "cond-mat.quant-gas",
    "physics.atom-ph",
    "cs.CE",
    "q-bio.QM",
    "math.GR",
    "cs.PL",
    "cs.FL",
    "cs.CG",
    "physics.plasm-ph",
    "stat.AP",
    "physics.bio-ph",
    "cs.SI",
    "nlin.CD",
    "nucl-ex",
    "math.RA",
    "math.LO",
    "physics.atm-clus",
    "cs.MM",
    "cs.GR",
    "q-bio.BM",
    "math.CV",
    "math.SP",
    "q-fin.ST",
    "econ.EM",
    "physics.data-an",
    "cs.ET",
    "physics.med-ph",
    "q-bio.PE",
    "stat.CO",
    "math.KT",
    "math.OA",
    "cs.CC",
    "q-fin.MF",
    "nlin.SI",
    "nlin.PS",
    "physics.geo-ph",
    "cond-mat.dis-nn",
    "physics.ao-ph",
    "q-fin.CP",
    "math.AC",
    "physics.class-ph",
    "q-bio.GN",
    "cs.DL",
    "math.CT",
    "math.SG",
    "physics.space-ph",
    "q-fin.PR",
    "physics.ed-ph",
    "econ.TH",
    "q-fin.RM",
    "nlin.AO",
    "cs.MS",
    "q-bio.MN",
    "q-fin.PM",
    "econ.GN",
    "q-fin.GN",
    "q-fin.TR",
    "physics.hist-ph",
    "cs.OS",
    "cs.AR",
    "cs.PF",
    "cs.SC",
    "q-bio.TO",
    "q-bio.CB",
    "q-bio.SC",
    "physics.pop-ph",
    "math.GM",
    "cs.GL",
    "cs.OH",
    "nlin.CG",
    "math.HO",
    "q-fin.EC",
    "stat.OT",
    "eess.GN",
    "cond-mat.other",
    "physics.gen-ph",
    "physics.acc-ph",
    "math.QA",
]
FIRST_NAMES = [
    "Wei",
    "Anna",
    "Jose",
    "Maria",
    "Li",
    "Ahmed",
    "Olga",
    "Kenji",
    "Priya",
    "Lucas",
    "Emma",
    "Chen",
    "Sara",
    "Ivan",
    "Yuki",
    "Omar",
    "Lena",
    "Pablo",
    "Mei",
    "Arjun",
    "Fatima",
    "Tom",
    "Ines",
    "Hiro",
    "Noah",
    "Zara",
    "Ravi",
    "Elena",
    "Jun",
    "Aisha",
    "Marco",
    "Nina",
    "Tariq",
    "Sofia",
    "Dmitri",
    "Hana",
    "Felix",
    "Rosa",
    "Amir",
    "Julia",
    "Kofi",
    "Lea",
    "Mateo",
    "Yara",
    "Sven",
    "Mina",
    "Diego",
    "Ada",
    "Karl",
    "Leila",
    "Bruno",
    "Ming",
    "Eva",
    "Samir",
    "Clara",
    "Hugo",
    "Asha",
    "Pavel",
    "Ingrid",
    "Yusuf",
    "Alba",
    "Tomas",
    "Rina",
    "Oscar",
    "Nadia",
    "Viktor",
    "Aiko",
    "Rafael",
    "Greta",
    "Sanjay",
    "Irina",
    "Luca",
    "Amara",
    "Jonas",
    "Yan",
    "Beatriz",
    "Ali",
    "Freya",
    "Kai",
    "Lucia",
    "Emil",
    "Mariam",
    "Nils",
    "Carmen",
    "Alexei",
    "Suki",
    "Thiago",
    "Vera",
    "Ibrahim",
    "Hanna",
    "Pedro",
    "Lin",
    "Astrid",
    "Rohan",
    "Elif",
    "Matteo",
    "Zhen",
    "Ida",
]
SYLLABLES = [
    "zha",
    "gao",
    "shen",
    "hong",
    "bon",
    "ing",
    "ler",
    "sen",
    "ova",
    "ez",
    "ski",
    "ton",
    "man",
    "berg",
    "field",
    "well",
    "son",
    "ari",
    "ura",
    "oto",
    "ami",
    "ber",
    "gen",
    "dal",
    "ven",
    "rik",
    "sto",
    "lin",
    "mar",
    "cos",
    "tan",
    "ell",
    "ner",
    "wat",
    "kov",
    "ich",
    "dor",
    "vas",
    "pet",
    "ram",
]


def vocabulary() -> list[str]:
    """Words of the demo abstracts by frequency, then compound terms as a long tail."""
    papers = json.loads(DEMO_PAPERS.read_text(encoding="utf-8"))["papers"]
    counts = Counter(
        word.lower()
        for paper in papers
        for word in re.findall(r"[A-Za-z][a-z]+", f"{paper.get('title')} {paper.get('abstract')}")
    )
    words = [word for word, _ in counts.most_common()]
    long_words = [word for word in words if len(word) >= 6][:60]
    compounds = [a + b for a in long_words for b in long_words[:45] if a != b]
    return words + compounds[:2700]


def zipf(
    rng: np.random.Generator, size: int | tuple, n: int, s: float, *, replace: bool = True
) -> np.ndarray:
    """Ranks 0..n-1 drawn with probability proportional to 1 / (rank + 1) ** s."""
    weights = 1.0 / np.arange(1, n + 1) ** s
    return rng.choice(n, size=size, p=weights / weights.sum(), replace=replace)


def author_names(rng: np.random.Generator) -> list[str]:
    surnames = [a.capitalize() + b for a in SYLLABLES for b in SYLLABLES if a != b]
    names: set[str] = set()
    while len(names) < AUTHOR_POOL:
        first = rng.choice(FIRST_NAMES, 100_000)
        initial = rng.integers(65, 91, 100_000)
        last = rng.choice(surnames, 100_000)
        names.update(f"{f} {chr(i)}. {s}" for f, i, s in zip(first, initial, last, strict=True))
    return sorted(names)[:AUTHOR_POOL]


def author_slugs(names: list[str]) -> list[str]:
    """Each name's slug as catalog.models.author_slug_base makes it (the names
    are ASCII), told apart by a number where two clash."""
    slugs: list[str] = []
    taken: set[str] = set()
    for name in names:
        base = re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", name.casefold())).strip("-_")
        slug, number = base, 1
        while slug in taken:
            number += 1
            slug = f"{base}-{number}"
        taken.add(slug)
        slugs.append(slug)
    return slugs


def tsv(*values) -> str:
    """One COPY text-format row; the generated text holds no tabs, newlines or backslashes."""
    return "\t".join("\\N" if v is None else str(v) for v in values) + "\n"


class Corpus:
    def __init__(self, papers: int) -> None:
        self.papers = papers
        self.rng = np.random.default_rng(SEED)
        self.words = np.array(vocabulary(), dtype=object)
        self.authors = author_names(self.rng)
        self.author_slugs = author_slugs(self.authors)
        self.end = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
        self.start = self.end - datetime.timedelta(days=365 * YEARS)
        # arXiv grows every year: the submission rate rises linearly over the span.
        fractions = np.sqrt(np.sort(self.rng.random(papers)))
        self.seconds = (fractions * (self.end - self.start).total_seconds()).astype(np.int64)
        self.primary = zipf(self.rng, papers, len(CATEGORIES), 1.1) + 1
        # Drawn for the whole corpus at once: the papers' rows and their author
        # links both carry it (catalog.models.PaperAuthor.visible).
        self.visible = self.rng.random(papers) >= HIDDEN_SHARE

    def published(self, index: int) -> datetime.datetime:
        return self.start + datetime.timedelta(seconds=int(self.seconds[index]))

    def text(self, ranks: np.ndarray) -> str:
        return " ".join(self.words[ranks])

    def paper_rows(self, start: int, stop: int) -> Iterator[str]:
        # Each chunk has its own generator so chunks can be written in parallel.
        rng, count = np.random.default_rng([SEED, start]), stop - start
        title_lengths = rng.integers(6, 15, count).tolist()
        abstract_lengths = rng.integers(150, 251, count).tolist()
        title_words = zipf(rng, sum(title_lengths), len(self.words), 1.1)
        abstract_words = zipf(rng, sum(abstract_lengths), len(self.words), 1.1)
        versions = rng.choice([1, 1, 1, 2, 2, 3], count).tolist()
        t = a = 0
        for offset in range(count):
            n = start + offset
            title = self.text(title_words[t : t + title_lengths[offset]]).capitalize()
            t += title_lengths[offset]
            abstract = self.text(abstract_words[a : a + abstract_lengths[offset]]).capitalize()
            a += abstract_lengths[offset]
            published = self.published(n)
            ranks = self.authors_of(n)
            author_list = [self.authors[i] for i in ranks]
            author_slugs = [self.author_slugs[i] for i in ranks]
            yield tsv(
                n + 1,
                f"{published:%y%m}.{n:07d}",
                versions[offset],
                title,
                "".join(ch for ch in title.casefold() if ch.isalnum())[:300],
                abstract + ".",
                ", ".join(author_list),
                json.dumps(author_list),
                json.dumps(author_slugs),
                self.primary[n],
                "",
                "",
                "",
                published.isoformat(),
                "day",
                (published + datetime.timedelta(days=30 * (versions[offset] - 1))).isoformat(),
                (published + datetime.timedelta(hours=6)).isoformat(),
                "t" if self.visible[n] else "f",
                None,
            )

    def plan_authors(self) -> None:
        counts = np.clip(self.rng.poisson(3.2, self.papers) + 1, 1, 30)
        # Prolific authors write many papers: ranks are Zipfian over the pool.
        # Paper n's draws are drawn[starts[n]:starts[n + 1]]: two flat arrays
        # (about 110 MB at 3,000,000 papers) that the forked COPY workers share,
        # where a list per paper would take gigabytes, copied into each worker.
        self.drawn = zipf(self.rng, int(counts.sum()), AUTHOR_POOL, 0.6).astype(np.int32)
        self.starts = np.concatenate(([0], np.cumsum(counts)))

    def authors_of(self, n: int) -> list[int]:
        """Paper n's author ranks in byline order, each once."""
        return list(dict.fromkeys(self.drawn[self.starts[n] : self.starts[n + 1]].tolist()))


def copy_rows(cursor: psycopg.Cursor, table_columns: str, rows) -> int:
    written = 0
    with cursor.copy(f"COPY {table_columns} FROM STDIN") as copy:
        buffer: list[str] = []
        for row in rows:
            buffer.append(row)
            if len(buffer) >= 5_000:
                copy.write("".join(buffer))
                written += len(buffer)
                buffer.clear()
        copy.write("".join(buffer))
        written += len(buffer)
    return written


_corpus: "Corpus | None" = None
_conninfo = ""


def _copy_papers(chunk: tuple[int, int]) -> int:
    with psycopg.connect(_conninfo, autocommit=True) as conn, conn.cursor() as cursor:
        cursor.execute("SET session_replication_role = replica")
        return copy_rows(
            cursor,
            "catalog_paper (id, arxiv_id, version, title, title_key, abstract, author_names,"
            " author_list, author_slugs, primary_category_id, comment, journal_ref, doi,"
            " published_at, published_precision, updated_at, added_at, is_visible, merged_into_id)",
            _corpus.paper_rows(*chunk),
        )


def load(conninfo: str, papers: int, *, log=print) -> dict[str, int]:
    """Fill the migrated database; returns the row count of each table."""
    started = time.perf_counter()
    corpus = Corpus(papers)
    corpus.plan_authors()
    rng = corpus.rng
    counts: dict[str, int] = {}
    log(f"  planned {papers:,} papers in {time.perf_counter() - started:.0f} s")
    with psycopg.connect(conninfo, autocommit=True) as conn, conn.cursor() as cursor:
        # Foreign keys are whole by construction; checking each row would triple the load time.
        cursor.execute("SET session_replication_role = replica")
        dropped = database.drop_secondary_indexes(cursor, "catalog_%")
        counts["catalog_category"] = copy_rows(
            cursor,
            "catalog_category (id, code, name)",
            (tsv(i + 1, code, "") for i, code in enumerate(CATEGORIES)),
        )
        counts["catalog_author"] = copy_rows(
            cursor,
            "catalog_author (id, name, normalized_name, slug)",
            (
                tsv(i + 1, name, " ".join(name.split()).casefold(), corpus.author_slugs[i])
                for i, name in enumerate(corpus.authors)
            ),
        )
        tag_names = [
            f"{corpus.words[i].capitalize()}_{corpus.words[i + 1]}"
            for i in range(50, 50 + 2 * TAG_COUNT, 2)
        ]
        counts["catalog_tag"] = copy_rows(
            cursor,
            "catalog_tag (id, name, slug, description, created_at)",
            (
                tsv(
                    i + 1,
                    name,
                    name.lower().replace("_", "-"),
                    f"Papers on {name}.",
                    corpus.start.isoformat(),
                )
                for i, name in enumerate(tag_names)
            ),
        )
        counts["catalog_paper"] = 0
        # PostgreSQL computes each paper's search document as it arrives, which
        # is most of the load's work: one COPY per core.
        global _corpus, _conninfo  # read by the forked workers
        _corpus, _conninfo = corpus, conninfo
        chunks = [(start, min(papers, start + CHUNK)) for start in range(0, papers, CHUNK)]
        context = multiprocessing.get_context("fork")
        with context.Pool(os.cpu_count() or 1) as pool:
            for written in pool.imap_unordered(_copy_papers, chunks):
                counts["catalog_paper"] += written
                elapsed = time.perf_counter() - started
                log(f"  {counts['catalog_paper']:,} papers, {elapsed:.0f} s")
        # Each link with its paper's listed_at (its published_at: every paper
        # here has one) and visibility, as the triggers the load runs without
        # would write them (catalog/sql/author_links.*.sql; the recount after
        # the load finds nothing to correct).
        counts["catalog_paperauthor"] = copy_rows(
            cursor,
            "catalog_paperauthor (paper_id, author_id, position, listed_at, visible)",
            (
                tsv(n + 1, author + 1, position, listed_at, "t" if corpus.visible[n] else "f")
                for n in range(papers)
                for listed_at in (corpus.published(n).isoformat(),)
                for position, author in enumerate(corpus.authors_of(n))
            ),
        )
        cross_lists = rng.choice([0, 0, 1, 1, 2], papers)
        extra = zipf(rng, (papers, 2), len(CATEGORIES), 1.1) + 1
        counts["catalog_paper_categories"] = copy_rows(
            cursor,
            "catalog_paper_categories (paper_id, category_id)",
            (
                tsv(n + 1, category)
                for n in range(papers)
                for category in sorted({corpus.primary[n], *extra[n, : cross_lists[n]]})
            ),
        )
        tagged = np.flatnonzero(rng.random(papers) < TAGGED_SHARE)
        tag_counts = rng.choice([1, 1, 1, 2, 2, 3], len(tagged))
        tag_draws = zipf(rng, (len(tagged), 3), TAG_COUNT, 1.0) + 1
        counts["catalog_papertag"] = copy_rows(
            cursor,
            "catalog_papertag (paper_id, tag_id, added_at)",
            (
                tsv(n + 1, tag, (corpus.published(n) + datetime.timedelta(days=1)).isoformat())
                for n, k, tags in zip(tagged, tag_counts, tag_draws, strict=True)
                for tag in sorted(set(tags[:k]))
            ),
        )
        with_code = np.flatnonzero(rng.random(papers) < CODE_SHARE)
        counts["catalog_codelink"] = copy_rows(
            cursor,
            "catalog_codelink (paper_id, url, kind, source, created_at)",
            (
                tsv(
                    n + 1,
                    f"https://github.com/lab{n % 9973}/project-{n}",
                    "official",
                    "abstract",
                    corpus.published(n).isoformat(),
                )
                for n in with_code
            ),
        )
        summarised = np.flatnonzero(rng.random(papers) < SUMMARY_SHARE)
        now = corpus.end.isoformat()
        counts["catalog_summary"] = copy_rows(
            cursor,
            "catalog_summary (paper_id, language, kind, body, backend, written_by, model_name,"
            " prompt_version, status, curator_edited, created_at, updated_at)",
            (
                tsv(
                    n + 1,
                    "en",
                    "summary",
                    corpus.text(zipf(rng, 60, len(corpus.words), 1.1)),
                    "extractive",
                    "",
                    "",
                    "",
                    "published",
                    "f",
                    now,
                    now,
                )
                for n in summarised
            ),
        )
        database.restore_indexes(cursor, dropped, log=log)
        cursor.execute("SET session_replication_role = DEFAULT")
        database.reset_sequences(cursor)
        log("  vacuum analyze")
        cursor.execute("VACUUM (ANALYZE)")
    # The load ran with triggers off: the maintained counts start from a recount.
    database.manage("recount_papers")
    log(f"  loaded in {time.perf_counter() - started:.0f} s")
    return counts


def build(papers: int, *, readers: bool = True, log=print) -> dict[str, int]:
    """Create, migrate and fill the benchmark database, readers included unless
    told otherwise; its size, the build's time and peak memory are kept with it
    (database.build_facts)."""
    started = time.perf_counter()
    conninfo = database.create()
    database.migrate()
    counts = load(conninfo, papers, log=log)
    if readers:
        counts.update(database.add_readers())
    facts = database.record_build(papers=papers, seconds=time.perf_counter() - started)
    log(
        f"  built in {facts['build_seconds'] / 60:.1f} minutes,"
        f" {facts['database_bytes'] / 2**30:.1f} GB, peak memory"
        f" {facts['peak_rss_mb']} MB (largest child process {facts['child_peak_rss_mb']} MB)"
    )
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=1_000_000)
    parser.add_argument(
        "--without-readers",
        action="store_true",
        help="the catalog alone: no readers, subscriptions, signals or recommendations",
    )
    options = parser.parse_args()
    counts = build(options.papers, readers=not options.without_readers)
    for table, rows in counts.items():
        print(f"  {table:28} {rows:>12,}")


if __name__ == "__main__":
    main()
