"""Discovery at scale, on synthetic vectors: every paper's neighbours, and the
nightly For-you ranking.

    python -m bench.discovery --vectors 1000000 --readers 2000

Neighbours: N unit vectors of 256 dimensions drawn around 2,000 topics (the
shape of a tf-idf/SVD space, where papers gather in fields) go into the index
discovery.neighbours builds for that many papers (an inverted file above
50,000); then every paper is searched for its candidates, in batches, as the
build does. Reported: time of
each step, peak memory of the process, and recall of the 10 nearest against
an exact search on a sample. Reading the vectors from the database and
writing the rows are not in these figures (see BENCHMARKS.md).

For you: the window of recent papers (FOR_YOU_DAYS, a year: about 290,000
papers at arXiv's rate) and readers with 20 saved papers and 3 followed tags
each, ranked by discovery.for_you.rank_for_readers as the nightly job
does (READERS_AT_ONCE readers a product); the database reads and writes per
reader are not in these figures.
"""

import argparse
import datetime
import os
import resource
import sys
import time

import numpy as np

DIMENSIONS = 256
TOPICS = 2_000
BATCH = 10_000


def peak_memory_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def synthetic(count: int, *, seed: int, centers: np.ndarray) -> np.ndarray:
    rng = np.random.default_rng(seed)
    topic = rng.integers(0, len(centers), size=count)
    matrix = centers[topic] + rng.normal(0, 0.09, size=(count, DIMENSIONS)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix.astype(np.float32)


def topic_centers(seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(TOPICS, DIMENSIONS)).astype(np.float32)
    return centers / np.linalg.norm(centers, axis=1, keepdims=True)


def bench_neighbours(count: int, *, searched: int) -> dict:
    import faiss

    from discovery import neighbours

    centers = topic_centers()
    matrix = np.vstack(
        [
            synthetic(min(BATCH, count - start), seed=start + 1, centers=centers)
            for start in range(0, count, BATCH)
        ]
    )
    started = time.perf_counter()
    index = neighbours.make_index(matrix)
    built = time.perf_counter() - started
    print(f"index {type(index).__name__} of {count:,}: built in {built:,.1f} s", flush=True)
    k = 10
    started = time.perf_counter()
    found_all = None
    searched = min(searched or count, count)
    for start in range(0, searched, BATCH):
        stop = min(start + BATCH, searched)
        _, found = index.search(matrix[start:stop], neighbours.CANDIDATES + 1)
        if start == 0:
            found_all = found
    # Every query costs the same (the same number of clusters probed), so a
    # sample's time scales to the whole catalog.
    search_s = (time.perf_counter() - started) * count / searched
    print(f"searched {searched:,} papers: {search_s:,.1f} s for all {count:,}", flush=True)
    # Recall of the 10 nearest among the candidates, on the first 1,000 papers, against exact.
    sample = min(1000, count)
    exact = faiss.IndexFlatIP(DIMENSIONS)
    exact.add(matrix)
    _, truth = exact.search(matrix[:sample], k + 1)
    hits = sum(
        len(set(truth[i, 1:].tolist()) & set(found_all[i, 1:].tolist())) for i in range(sample)
    )
    recall = hits / (sample * k)
    return {
        "papers": count,
        "index": type(index).__name__,
        "build_s": built,
        "search_s": search_s,
        "searched": searched,
        "recall_at_10": recall,
        "peak_mb": peak_memory_mb(),
        "threads": faiss.omp_get_max_threads(),
    }


def bench_for_you(readers: int, window: int) -> dict:
    from discovery.for_you import READERS_AT_ONCE, Seeds, Window, rank_for_readers

    centers = topic_centers()
    matrix = synthetic(window, seed=99, centers=centers)
    rng = np.random.default_rng(7)
    now = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    listed = now.timestamp() - rng.uniform(0, 365 * 86400, size=window)
    tags = {
        tag: np.sort(rng.choice(window, size=window // 200, replace=False)) for tag in range(100)
    }
    loaded = Window(
        ids=np.arange(1, window + 1, dtype=np.int64),
        matrix=matrix,
        listed_at=listed,
        tags=tags,
        position={pk: i for i, pk in enumerate(range(1, window + 1))},
    )
    nothing = np.zeros(0, dtype=np.int64)
    kept = 0
    started = time.perf_counter()
    for first in range(0, readers, READERS_AT_ONCE):
        batch = []
        for _ in range(min(READERS_AT_ONCE, readers - first)):
            saved_ids = rng.choice(window, size=20, replace=False) + 1
            batch.append(
                Seeds(
                    saved_ids=saved_ids.astype(np.int64),
                    saved=matrix[saved_ids - 1],
                    dismissed_ids=nothing,
                    dismissed=np.zeros((0, DIMENSIONS), np.float32),
                    tag_ids=rng.choice(100, size=3, replace=False).tolist(),
                )
            )
        kept += sum(
            len(ranked) for ranked in rank_for_readers(window=loaded, readers=batch, now=now)
        )
    elapsed = time.perf_counter() - started
    return {
        "readers": readers,
        "window": window,
        "seconds": elapsed,
        "per_reader_ms": 1000 * elapsed / readers,
        "rows": kept,
        "peak_mb": peak_memory_mb(),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--vectors", type=int, default=1_000_000)
    parser.add_argument("--readers", type=int, default=2_000)
    parser.add_argument("--window", type=int, default=290_000)
    parser.add_argument("--searched", type=int, default=0, help="search only the first N papers")
    parser.add_argument("--skip-neighbours", action="store_true")
    parser.add_argument("--skip-for-you", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DEBUG", "1")
    import django

    django.setup()
    if not args.skip_neighbours:
        result = bench_neighbours(args.vectors, searched=args.searched)
        print(
            f"Neighbours of {result['papers']:,} vectors ({result['index']}, "
            f"{result['threads']} threads): index {result['build_s']:,.0f} s, "
            f"search {result['search_s']:,.0f} s, recall@10 {result['recall_at_10']:.3f}, "
            f"peak memory {result['peak_mb']:,.0f} MB",
            flush=True,
        )
    if not args.skip_for_you:
        result = bench_for_you(args.readers, args.window)
        print(
            f"For you for {result['readers']:,} readers over {result['window']:,} recent "
            f"papers: {result['seconds']:,.1f} s ({result['per_reader_ms']:.1f} ms a reader), "
            f"{result['rows']:,} rows kept, peak memory {result['peak_mb']:,.0f} MB"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
