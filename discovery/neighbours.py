"""Each paper's nearest neighbours by text, precomputed into catalog.SimilarPaper.

The whole catalog is built by a worker or a command (`build_vectors`): vectors
are streamed from the database into one matrix, then a faiss index (exact up
to EXACT_SEARCH_LIMIT papers, an inverted file above), every paper is searched
in batches and its rows are replaced batch by batch. The index is saved beside the tf-idf
model so that the task for a new paper searches it rather than every vector.
"""

import datetime
import functools
import io
import logging
import math
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import Count, Min
from django.utils import timezone

from catalog.changes import catalog_changed
from catalog.models import Paper, PaperTag, SimilarPaper
from core.progress import Progress
from discovery import vectors
from discovery.models import PaperVector

if TYPE_CHECKING:
    # Types alone: faiss is imported only where an index is built or read.
    import faiss
    from nltk.stem.porter import PorterStemmer

# (paper id, vector bytes) as the database gives them.
VectorRow = tuple[int, bytes | memoryview]

logger = logging.getLogger(__name__)

INDEX_FILE = "neighbours.faiss"
IDS_FILE = "neighbours-ids.npy"
KEY_FILE = "neighbours-key.txt"
# Up to this many papers an exact search is fast enough (and exact). Above it
# an inverted file: the vectors are split into about 4 x sqrt(N) clusters
# (k-means on a sample of TRAINING_PER_CLUSTER a cluster) and a query compares
# only the papers of its IVF_PROBES nearest clusters. It builds a million
# papers' index in minutes, where HNSW took hours on two cores, for a recall
# of the 10 nearest near 0.9 (BENCHMARKS.md).
EXACT_SEARCH_LIMIT = 50_000
TRAINING_PER_CLUSTER = 50
IVF_PROBES = 32
SHARED_TERMS_SHOWN = 3
# The text search brings this many candidates per paper, which are ranked by
# their cosine plus TAG_WEIGHT times the share of curated tags the two papers
# have in common (Jaccard): a curator's tags are the best topic signal there
# is, and the vectors alone (tf-idf) confuse papers sharing generic wording.
# On the demo this lifts the top 5 neighbours sharing a tag or a topic from
# 57% to 72% (BENCHMARKS.md).
CANDIDATES = 30
TAG_WEIGHT = 0.1
# Two papers this alike are copies of one work (two versions, or a paper and
# its journal text): a list keeps the better ranked of them and goes on to
# another paper. In the judged pool of bench/similar_quality.py the one pair
# above it is such a copy (0.97); the closest distinct papers are at 0.63.
NEAR_COPY = 0.9


def make_index(matrix: np.ndarray) -> "faiss.Index":
    """An index of these vectors (one a row): exact, or a trained inverted file."""
    import faiss

    count, dimensions = matrix.shape
    index: faiss.Index
    if count <= EXACT_SEARCH_LIMIT:
        index = faiss.IndexFlatIP(dimensions)
    else:
        clusters = max(1, min(4 * math.isqrt(count), count // TRAINING_PER_CLUSTER))
        inverted = faiss.IndexIVFFlat(
            faiss.IndexFlatIP(dimensions), dimensions, clusters, faiss.METRIC_INNER_PRODUCT
        )
        inverted.train(matrix[:: max(1, count // (TRAINING_PER_CLUSTER * clusters))])
        inverted.nprobe = IVF_PROBES
        index = inverted
    index.add(matrix)
    return index


def shared_terms(first: list[str], second: list[str]) -> list[str]:
    """The words both papers weigh most, in the first paper's order, a word
    once in whatever form: "verifier" and "verifiers" are one word to a reader,
    and shown twice they would crowd out a second thing the papers share."""
    theirs = {word_stem(term) for term in second}
    shown: dict[str, str] = {}
    for term in first:
        stem = word_stem(term)
        if stem in theirs and stem not in shown:
            shown[stem] = term
    return list(shown.values())[:SHARED_TERMS_SHOWN]


@functools.cache
def word_stem(term: str) -> str:
    """The term's words' Porter stems (a tf-idf term may be two words)."""
    return " ".join(_stemmer().stem(word) for word in term.split())


@functools.cache
def _stemmer() -> "PorterStemmer":
    # nltk is loaded where neighbours are written (a worker), not by every process.
    from nltk.stem.porter import PorterStemmer

    return PorterStemmer()


def neighbours_from_search(
    *, query_ids: np.ndarray, found: np.ndarray, scores: np.ndarray, ids: np.ndarray, k: int
) -> dict[int, list[tuple[int, float]]]:
    """Search results (positions into ids) as each query paper's k best other papers."""
    result: dict[int, list[tuple[int, float]]] = {}
    for row, paper_id in enumerate(query_ids.tolist()):
        best: list[tuple[int, float]] = []
        for position, score in zip(found[row].tolist(), scores[row].tolist(), strict=True):
            if position < 0:
                continue
            other = int(ids[position])
            if other == paper_id or any(other == seen for seen, _ in best):
                continue
            best.append((other, float(score)))
            if len(best) == k:
                break
        result[paper_id] = best
    return result


def tags_of(paper_ids: Iterable[int]) -> dict[int, frozenset[int]]:
    """Each paper's tag ids, in queries of at most 10,000 ids (SQLite's limit is 32,766)."""
    ids = sorted(set(paper_ids))
    found: dict[int, set[int]] = {}
    for start in range(0, len(ids), 10_000):
        rows = PaperTag.objects.filter(paper_id__in=ids[start : start + 10_000]).values_list(
            "paper_id", "tag_id"
        )
        for paper_id, tag_id in rows:
            found.setdefault(paper_id, set()).add(tag_id)
    return {paper_id: frozenset(tags) for paper_id, tags in found.items()}


def rerank(
    found: dict[int, list[tuple[int, float]]], *, k: int, unit: dict[int, np.ndarray]
) -> dict[int, list[tuple[int, float]]]:
    """Each paper's k best candidates by cosine plus TAG_WEIGHT times their
    tags' Jaccard, leaving out a near copy (NEAR_COPY, by the unit vectors of
    `unit`) of a candidate already taken."""
    tags = tags_of([*found, *(other for best in found.values() for other, _ in best)])
    empty: frozenset[int] = frozenset()
    ranked = {}
    for paper_id, best in found.items():
        own = tags.get(paper_id, empty)
        scored = []
        for other, score in best:
            theirs = tags.get(other, empty)
            union = own | theirs
            shared = len(own & theirs) / len(union) if union else 0.0
            scored.append((other, score + TAG_WEIGHT * shared))
        ranked[paper_id] = without_near_copies(
            sorted(scored, key=lambda pair: -pair[1]), k=k, unit=unit
        )
    return ranked


def without_near_copies(
    ranked: list[tuple[int, float]], *, k: int, unit: dict[int, np.ndarray]
) -> list[tuple[int, float]]:
    """The first k of these (id, score), best first, none a near copy (by the
    unit vectors of `unit`) of one before it: one product of their vectors."""
    present = [other for other, _ in ranked if other in unit]
    if len(present) < 2:
        return ranked[:k]
    matrix = np.vstack([unit[other] for other in present])
    near = matrix @ matrix.T >= NEAR_COPY
    np.fill_diagonal(near, False)
    if not near.any():
        return ranked[:k]
    copies = {
        present[row]: {present[column] for column in np.flatnonzero(near[row]).tolist()}
        for row in np.flatnonzero(near.any(axis=1)).tolist()
    }
    kept: list[tuple[int, float]] = []
    taken: set[int] = set()
    for other, score in ranked:
        if copies.get(other, set()) & taken:
            continue
        taken.add(other)
        kept.append((other, score))
        if len(kept) == k:
            break
    return kept


def write_neighbours(*, found: dict[int, list[tuple[int, float]]], key: str) -> int:
    """Replace these papers' SimilarPaper rows; the number of rows written."""
    if not found:
        return 0
    wanted = set(found)
    for neighbours in found.values():
        wanted.update(other for other, _ in neighbours)
    terms = dict(
        PaperVector.objects.filter(paper_id__in=wanted, key=key).values_list("paper_id", "terms")
    )
    now = timezone.now()
    rows = [
        SimilarPaper(
            paper_id=paper_id,
            similar_id=other,
            rank=rank,
            score=round(score, 4),
            terms=shared_terms(terms.get(paper_id, []), terms.get(other, [])),
            computed_at=now,
        )
        for paper_id, neighbours in found.items()
        for rank, (other, score) in enumerate(neighbours, 1)
    ]
    with transaction.atomic():
        SimilarPaper.objects.filter(paper_id__in=list(found)).delete()
        SimilarPaper.objects.bulk_create(rows, batch_size=5000)
        catalog_changed()
    return len(rows)


def _visible_vectors(key: str, *, chunk: int) -> Iterator[VectorRow]:
    """(paper id, vector bytes) of every visible paper with a vector of this key, in id order."""
    visible = Paper.objects.visible().values("pk")
    return (
        PaperVector.objects.filter(key=key, paper_id__in=visible)
        .order_by("paper_id")
        .values_list("paper_id", "vector")
        .iterator(chunk_size=chunk)
    )


@dataclass
class NeighbourRun:
    papers: int = 0
    rows: int = 0
    index: str = ""


def build_all(
    *, k: int | None = None, batch_size: int = 2000, show_progress: bool = True
) -> NeighbourRun:
    """Neighbours of every visible paper with a current vector, the index saved for new papers."""
    k = k or settings.SIMILAR_PAPERS
    key = vectors.current_key()
    visible = Paper.objects.visible().values("pk")
    total = PaperVector.objects.filter(key=key, paper_id__in=visible).count()
    run = NeighbourRun()
    if total < 2:
        return run
    id_chunks: list[np.ndarray] = []
    vector_chunks: list[np.ndarray] = []
    pending: list[VectorRow] = []
    with Progress("vectors", total=total, unit="papers", enabled=show_progress) as progress:
        for row in _visible_vectors(key, chunk=batch_size):
            pending.append(row)
            if len(pending) >= batch_size:
                _stack(pending, id_chunks, vector_chunks)
                progress.advance(len(pending))
                pending = []
        if pending:
            _stack(pending, id_chunks, vector_chunks)
            progress.advance(len(pending))
    ids, matrix = np.concatenate(id_chunks), np.vstack(vector_chunks)
    del id_chunks, vector_chunks
    index = make_index(matrix)
    run.index = type(index).__name__
    save_index(index=index, ids=ids, key=key)
    with Progress("neighbours", total=len(ids), unit="papers", enabled=show_progress) as progress:
        for start in range(0, len(ids), batch_size):
            stop = min(start + batch_size, len(ids))
            queries = matrix[start:stop]
            candidates = max(k, CANDIDATES)
            scores, found = index.search(queries, candidates + 1)
            result = neighbours_from_search(
                query_ids=ids[start:stop], found=found, scores=scores, ids=ids, k=candidates
            )
            # Positions of the candidates (ids are in ascending order), for their vectors.
            wanted = np.unique(found[found >= 0])
            result = rerank(result, k=k, unit={int(ids[at]): matrix[at] for at in wanted})
            run.rows += write_neighbours(found=result, key=key)
            run.papers += len(result)
            progress.advance(stop - start)
    # Papers left without a vector of this key (hidden since, or never embedded)
    # keep no stale neighbours.
    embedded = PaperVector.objects.filter(key=key, paper_id__in=visible).values("paper_id")
    SimilarPaper.objects.exclude(paper_id__in=embedded).delete()
    return run


def _stack(
    rows: list[VectorRow], id_chunks: list[np.ndarray], vector_chunks: list[np.ndarray]
) -> None:
    ids, matrix = vectors.stack(rows)
    id_chunks.append(ids)
    vector_chunks.append(matrix)


def save_index(*, index: "faiss.Index", ids: np.ndarray, key: str) -> None:
    import faiss

    directory = Path(settings.VECTOR_DIR)
    directory.mkdir(parents=True, exist_ok=True)
    for name, write in (
        (INDEX_FILE, lambda path: faiss.write_index(index, str(path))),
        (IDS_FILE, lambda path: path.write_bytes(_npy(ids))),
        (KEY_FILE, lambda path: path.write_text(key)),
    ):
        partial = directory / f"{name}.partial"
        write(partial)
        os.replace(partial, directory / name)


def _npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


_loaded: "dict[str, tuple[float, faiss.Index, np.ndarray, str]]" = {}


def load_index() -> "tuple[faiss.Index, np.ndarray, str, float] | None":
    """The saved index, its paper ids, vector key and when it was written; kept
    in the worker's memory until a newer one is saved."""
    import faiss

    directory = Path(settings.VECTOR_DIR)
    path = directory / INDEX_FILE
    try:
        written = path.stat().st_mtime
    except FileNotFoundError:
        return None
    cached = _loaded.get(str(path))
    if cached is None or cached[0] != written:
        index = faiss.read_index(str(path))
        if hasattr(index, "nprobe"):
            index.nprobe = IVF_PROBES
        ids = np.load(directory / IDS_FILE, allow_pickle=False)
        key = (directory / KEY_FILE).read_text()
        cached = (written, index, ids, key)
        _loaded.clear()
        _loaded[str(path)] = cached
    written, index, ids, key = cached
    return index, ids, key, written


def neighbours_for(
    *, paper_ids: Iterable[int], k: int | None = None, join_others: bool = True
) -> int:
    """Vectors and neighbours of these papers (new or changed), now: the saved
    index is searched, and the papers embedded since it was built are compared
    one by one; without an index, every vector is. With join_others, the
    papers whose lists they now belong in are ranked again the same way, so a
    new paper shows among older papers' neighbours at once too. The rows written."""
    k = k or settings.SIMILAR_PAPERS
    wanted = list(
        Paper.objects.visible().filter(pk__in=list(paper_ids)).values_list("pk", flat=True)
    )
    if not wanted:
        return 0
    if vectors.model_needs_fit() and not (Path(settings.VECTOR_DIR) / vectors.MODEL_FILE).exists():
        vectors.fit_on_catalog()
    backend = vectors.get_vector_backend()
    missing = vectors.papers_needing_vectors(key=backend.key).filter(pk__in=wanted)
    vectors.store_vectors(papers=missing.values_list("pk", "title", "abstract"), backend=backend)
    query_ids, queries = vectors.vectors_of(paper_ids=wanted, key=backend.key)
    if not len(query_ids):
        return 0
    found = _candidates(query_ids=query_ids, queries=queries, key=backend.key, k=k)
    candidate_ids, matrix = vectors.vectors_of(
        paper_ids={other for best in found.values() for other, _ in best}, key=backend.key
    )
    unit = dict(zip(candidate_ids.tolist(), matrix, strict=True))
    ranked = rerank(found, k=k, unit=unit)
    rows = write_neighbours(found=ranked, key=backend.key)
    if join_others:
        others = lists_to_join(ranked=ranked, k=k)
        if others:
            rows += neighbours_for(paper_ids=others, k=k, join_others=False)
    return rows


def lists_to_join(*, ranked: dict[int, list[tuple[int, float]]], k: int) -> list[int]:
    """The papers among these papers' neighbours whose own lists they belong
    in: lists shorter than k, or whose last score is lower than the pair's (the
    score is the same both ways: cosine and tags' Jaccard). One query."""
    best: dict[int, float] = {}
    for neighbours in ranked.values():
        for other, score in neighbours:
            if other not in ranked:
                best[other] = max(best.get(other, -1.0), score)
    if not best:
        return []
    lists = dict.fromkeys(best, (0, -1.0))
    rows = (
        SimilarPaper.objects.filter(paper_id__in=list(best))
        .values("paper_id")
        .annotate(length=Count("pk"), lowest=Min("score"))
        .values_list("paper_id", "length", "lowest")
    )
    for paper_id, length, lowest in rows:
        lists[paper_id] = (length, lowest)
    return sorted(
        other
        for other, score in best.items()
        if lists[other][0] < k or round(score, 4) > lists[other][1]
    )


def _candidates(
    *, query_ids: np.ndarray, queries: np.ndarray, key: str, k: int
) -> dict[int, list[tuple[int, float]]]:
    """Each query paper's CANDIDATES most alike visible papers by cosine, best
    first: the saved index searched, then every vector embedded since it was saved."""
    candidates = max(k, CANDIDATES)
    best_of: dict[int, dict[int, float]] = {pk: {} for pk in query_ids.tolist()}
    loaded = load_index()
    since = None
    if loaded is not None and loaded[2] == key:
        index, ids, _, written = loaded
        scores, found = index.search(queries, candidates + 1)
        for paper_id, best in neighbours_from_search(
            query_ids=query_ids, found=found, scores=scores, ids=ids, k=candidates
        ).items():
            best_of[paper_id].update(best)
        since = datetime.datetime.fromtimestamp(written, tz=datetime.UTC)
    rows = PaperVector.objects.filter(key=key, paper_id__in=Paper.objects.visible().values("pk"))
    if since is not None:
        rows = rows.filter(computed_at__gte=since)
    chunk: list[VectorRow] = []
    for row in (
        rows.order_by("paper_id").values_list("paper_id", "vector").iterator(chunk_size=5000)
    ):
        chunk.append(row)
        if len(chunk) >= 5000:
            _compare(chunk, query_ids, queries, best_of, candidates)
            chunk = []
    if chunk:
        _compare(chunk, query_ids, queries, best_of, candidates)
    visible = set(
        Paper.objects.visible()
        .filter(pk__in={other for best in best_of.values() for other in best})
        .values_list("pk", flat=True)
    )
    return {
        paper_id: sorted(
            (
                (other, score)
                for other, score in best.items()
                if other in visible and other != paper_id
            ),
            key=lambda pair: -pair[1],
        )[:candidates]
        for paper_id, best in best_of.items()
    }


def _compare(
    rows: list[VectorRow],
    query_ids: np.ndarray,
    queries: np.ndarray,
    candidates: dict[int, dict[int, float]],
    k: int,
) -> None:
    ids, matrix = vectors.stack(rows)
    scores = queries @ matrix.T
    for row, paper_id in enumerate(query_ids.tolist()):
        best = np.argsort(-scores[row])[: k + 1]
        for position in best.tolist():
            candidates[paper_id][int(ids[position])] = float(scores[row, position])
