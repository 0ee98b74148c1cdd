"""The papers nearest in meaning to a reader's search, for the list's hybrid
search (catalog.search, which reaches this through settings.SEARCH_NEIGHBOURS).

The search's words are embedded by the backend that embedded the papers (the
fitted tf-idf + SVD model, or the embeddings endpoint) and looked up in the
faiss index the nightly neighbours build saves (discovery.neighbours). The
index is mapped from its file rather than read into each web process, so the
processes of a host share one copy in the page cache. A word the tf-idf
model never saw stands in for the known words spelt nearest to it, or the
longest it ends or starts with (in_known_words): a misspelt search, or one
in a compound of the papers' words, still has neighbours. Whatever is missing
or failing (no index yet, an index of another backend, the endpoint down, a
search of no word the model can stand for) gives no neighbours: the search is
then lexical alone, never an error.
"""

import logging
import threading
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from catalog.vocabulary import allowed_distance, edit_distance
from discovery import neighbours, vectors

if TYPE_CHECKING:
    import faiss

logger = logging.getLogger(__name__)

# A reader waits on the endpoint's answer: past this the search is lexical alone.
QUERY_EMBEDDING_TIMEOUT = 2.0

_lock = threading.Lock()
_index: "dict[str, tuple[float, faiss.Index, np.ndarray, str]]" = {}
_tfidf: dict[str, tuple[float, vectors.TfidfBackend]] = {}
_alike: "dict[str, SpelledAlike]" = {}


def papers_near(text: str, *, limit: int) -> list[tuple[int, float]]:
    """Up to `limit` (paper id, cosine) pairs, the nearest first, of the papers
    of the saved index nearest to the text; none when nothing can tell."""
    if not text.strip() or limit < 1:
        return []
    loaded = _saved_index()
    if loaded is None:
        return []
    index, ids, key = loaded
    query = _query_vector(text, key=key)
    if query is None:
        return []
    scores, found = index.search(query.reshape(1, -1).astype(np.float32), min(limit, len(ids)))
    return [
        (int(ids[position]), float(score))
        for position, score in zip(found[0].tolist(), scores[0].tolist(), strict=True)
        if position >= 0 and score > 0
    ]


def closeness(text: str, others: Sequence[str]) -> list[float] | None:
    """The cosine of the text's vector with each of the others' by the fitted
    tf-idf model (for ranking a paper's passages against a reader's question);
    None without a fitted model, or when the embeddings endpoint makes the
    vectors: a paper's every paragraph is not sent to it while a reader waits."""
    if settings.EMBEDDING_BACKEND != "tfidf" or not others:
        return None
    try:
        embedded = _tfidf_backend().embed([text, *others]).vectors
    except vectors.NotFitted:
        return None
    cosines: list[float] = (embedded[1:] @ embedded[0]).tolist()
    return cosines


def _saved_index() -> "tuple[faiss.Index, np.ndarray, str] | None":
    """The index neighbours.build_all saved, mapped read-only, kept until a newer is saved."""
    import faiss

    directory = Path(settings.VECTOR_DIR)
    path = directory / neighbours.INDEX_FILE
    try:
        written = path.stat().st_mtime
    except FileNotFoundError:
        return None
    with _lock:
        cached = _index.get(str(path))
        if cached is None or cached[0] != written:
            try:
                flags = faiss.IO_FLAG_MMAP | faiss.IO_FLAG_READ_ONLY
                try:
                    index = faiss.read_index(str(path), flags)
                except RuntimeError:  # an index kind faiss cannot map: read it whole
                    index = faiss.read_index(str(path))
                if hasattr(index, "nprobe"):
                    index.nprobe = neighbours.IVF_PROBES
                ids = np.load(directory / neighbours.IDS_FILE, allow_pickle=False)
                key = (directory / neighbours.KEY_FILE).read_text()
            except (OSError, RuntimeError, ValueError) as error:
                # Being replaced at this moment, or damaged: lexical search meanwhile.
                logger.warning("The neighbours index cannot be read for search: %s", error)
                return None
            cached = (written, index, ids, key)
            _index.clear()
            _index[str(path)] = cached
    _, index, ids, key = cached
    return index, ids, key


def _query_vector(text: str, *, key: str) -> np.ndarray | None:
    """The text's unit vector by the backend whose vectors the index holds, or None."""
    try:
        if settings.EMBEDDING_BACKEND == "tfidf":
            backend = _tfidf_backend()
            if backend.key != key:
                return None
            vector: np.ndarray = backend.embed([in_known_words(text, backend)]).vectors[0]
        else:
            embedder = vectors.get_vector_backend()
            if embedder.key != key or not isinstance(embedder, vectors.OpenAIEmbeddingBackend):
                return None
            vector = embedder.embed_query(text, timeout=QUERY_EMBEDDING_TIMEOUT)
    except (vectors.NotFitted, ImproperlyConfigured):
        return None
    except (vectors.VectorsFailed, vectors.VectorsUnavailable) as error:
        logger.warning("No embedding of a search, searched by its words alone: %s", error)
        return None
    # A text of words the model never saw has no direction: nothing is near it.
    return vector if float(np.linalg.norm(vector)) > 0 else None


def in_known_words(text: str, backend: vectors.TfidfBackend) -> str:
    """The search's words as the tf-idf model knows them: a word it never saw
    would leave no trace in the vector, so it stands in for the known words
    nearest in spelling ("reinforcment" is "reinforcement"), else for the
    longest known word it ends or starts with ("exoplanets" is "planets")."""
    known = backend.vectorizer.vocabulary_
    words: list[str] = []
    for word in backend.vectorizer.build_analyzer()(text):
        words.extend([word] if word in known else _spelled_alike(backend).standing_for(word))
    return " ".join(words)


# A known word a search's unknown one ends or starts with stands for it from this length.
SHORTEST_PART = 5


class SpelledAlike:
    """The tf-idf model's words by their first two letters, to find those a
    few letters from a word it never saw without measuring the whole vocabulary."""

    def __init__(self, known: Mapping[str, int]) -> None:
        self.known = known
        self.by_start: dict[str, list[str]] = defaultdict(list)
        for word in known:
            self.by_start[word[:2]].append(word)

    def standing_for(self, word: str) -> list[str]:
        allowed = allowed_distance(word)
        distances = [
            (edit_distance(word, other), other)
            for other in self.by_start.get(word[:2], ())
            if abs(len(other) - len(word)) <= allowed
        ]
        near = [(distance, other) for distance, other in distances if distance <= allowed]
        if near:
            closest = min(distance for distance, _ in near)
            return sorted(other for distance, other in near if distance == closest)
        for length in range(len(word) - 1, SHORTEST_PART - 1, -1):
            for part in (word[-length:], word[:length]):
                if part in self.known:
                    return [part]
        return []


def _spelled_alike(backend: vectors.TfidfBackend) -> SpelledAlike:
    """The model's words by their start, made once per fitted model and process."""
    with _lock:
        found = _alike.get(backend.key)
        if found is None:
            found = SpelledAlike(backend.vectorizer.vocabulary_)
            _alike.clear()
            _alike[backend.key] = found
    return found


def _tfidf_backend() -> vectors.TfidfBackend:
    """The fitted tf-idf model, read once per fit by each process."""
    path = Path(settings.VECTOR_DIR) / vectors.MODEL_FILE
    try:
        written = path.stat().st_mtime
    except FileNotFoundError as error:
        raise vectors.NotFitted(str(error)) from error
    with _lock:
        cached = _tfidf.get(str(path))
        if cached is None or cached[0] != written:
            cached = (written, vectors.TfidfBackend(directory=Path(settings.VECTOR_DIR)))
            _tfidf.clear()
            _tfidf[str(path)] = cached
    return cached[1]
