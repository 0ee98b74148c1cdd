"""Discovery at scale, on synthetic vectors: every paper's neighbours, and the
nightly For-you ranking.

    python -m bench.discovery --vectors 1000000 --readers 2000

Neighbours: N unit vectors of 256 dimensions drawn around 2,000 topics (the
shape of a tf-idf/SVD space, where papers gather in fields) go into the index
enrichment.neighbours builds for that many papers (HNSW above 50,000), added
in batches as the build streams them from the database; then every paper is
searched for its candidates, in batches, as the build does. Reported: time of
each step, peak memory of the process, and recall of the 10 nearest against
an exact search on a sample. Reading the vectors from the database and
writing the rows are not in these figures (see BENCHMARKS.md).

For you: the window of recent papers (FOR_YOU_DAYS, a year: about 290,000
papers at arXiv's rate) and readers with 20 saved papers and 3 followed tags
each, ranked by accounts.recommendations.rank_for_reader as the nightly job
does; the database reads and writes per reader are not in these figures.
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


def bench_neighbours(count: int) -> dict:
    import faiss

    from enrichment import neighbours

    centers = topic_centers()
    started = time.perf_counter()
    index = neighbours.make_index(DIMENSIONS, expected=count)
    generate = 0.0
    for start in range(0, count, BATCH):
        t = time.perf_counter()
        batch = synthetic(min(BATCH, count - start), seed=start + 1, centers=centers)
        generate += time.perf_counter() - t
        index.add(batch)
    built = time.perf_counter() - started - generate
    print(f"index {type(index).__name__} of {count:,}: built in {built:,.1f} s", flush=True)
    k = max(neighbours.SIMILAR_PAPERS if hasattr(neighbours, "SIMILAR_PAPERS") else 10, 10)
    candidates = neighbours.CANDIDATES
    started = time.perf_counter()
    found_all = None
    for start in range(0, count, BATCH):
        stop = min(start + BATCH, count)
        queries = index.reconstruct_n(start, stop - start)
        _, found = index.search(queries, candidates + 1)
        if start == 0:
            found_all = found
    searched = time.perf_counter() - started
    print(f"searched {count:,} papers in {searched:,.1f} s", flush=True)
    # Recall of the 10 nearest on the first 1,000 papers, against an exact search.
    sample = min(1000, count)
    exact = faiss.IndexFlatIP(DIMENSIONS)
    for start in range(0, count, BATCH):
        exact.add(index.reconstruct_n(start, min(BATCH, count - start)))
    queries = index.reconstruct_n(0, sample)
    _, truth = exact.search(queries, k + 1)
    hits = sum(
        len(set(truth[i, 1:].tolist()) & set(found_all[i, 1:].tolist())) for i in range(sample)
    )
    recall = hits / (sample * k)
    return {
        "papers": count,
        "index": type(index).__name__,
        "build_s": built,
        "search_s": searched,
        "recall_at_10": recall,
        "peak_mb": peak_memory_mb(),
        "threads": faiss.omp_get_max_threads(),
    }


def bench_for_you(readers: int, window: int) -> dict:
    from accounts.recommendations import Window, rank_for_reader

    centers = topic_centers()
    matrix = synthetic(window, seed=99, centers=centers)
    rng = np.random.default_rng(7)
    now = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    listed = now.timestamp() - rng.uniform(0, 365 * 86400, size=window)
    tags = {tag: rng.choice(window, size=window // 200, replace=False) for tag in range(100)}
    loaded = Window(
        ids=np.arange(1, window + 1, dtype=np.int64),
        matrix=matrix,
        listed_at=listed,
        tags=tags,
        position={pk: i for i, pk in enumerate(range(1, window + 1))},
    )
    kept = 0
    started = time.perf_counter()
    for _ in range(readers):
        saved_ids = rng.choice(window, size=20, replace=False) + 1
        ranked = rank_for_reader(
            window=loaded,
            saved=(saved_ids.astype(np.int64), matrix[saved_ids - 1]),
            dismissed=(np.zeros(0, dtype=np.int64), np.zeros((0, DIMENSIONS), np.float32)),
            tag_ids=rng.choice(100, size=3, replace=False).tolist(),
            now=now,
        )
        kept += len(ranked)
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
    parser.add_argument("--skip-neighbours", action="store_true")
    parser.add_argument("--skip-for-you", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DEBUG", "1")
    import django

    django.setup()
    if not args.skip_neighbours:
        result = bench_neighbours(args.vectors)
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
