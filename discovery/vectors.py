"""Text vectors of papers: tf-idf reduced by truncated SVD (default, nothing
outside the project), or any OpenAI-compatible /v1/embeddings endpoint.

Vectors are unit length float32, so a dot product is the cosine similarity.
They are computed in workers and commands only: the web reads the neighbours
they lead to (catalog.SimilarPaper), never the vectors.
"""

import datetime
import logging
import math
import random
import re
import uuid
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import joblib
import numpy as np
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.utils import timezone

from catalog.models import Paper
from core.pacing import TurnNotTaken, spacing_of, turn
from core.progress import Progress
from discovery.models import PaperVector

if TYPE_CHECKING:
    # Types alone: openai is imported only with the embeddings backend.
    from openai.types import CreateEmbeddingResponse

logger = logging.getLogger(__name__)

# The words of a paper kept with its vector, to explain a neighbour.
TERMS_KEPT = 20
MODEL_FILE = "tfidf.joblib"
# The papers whose words are counted against the vocabulary, at a fit and for
# the papers added since; fewer new ones than COVERAGE_MIN_PAPERS say nothing.
COVERAGE_SAMPLE = 1000
COVERAGE_MIN_PAPERS = 20
# Words of three letters or more, hyphenated ones whole ("chain-of-thought").
WORD_PATTERN = r"(?u)\b[a-zA-Z][a-zA-Z0-9-]{2,}\b"
WORD = re.compile(r"[a-z][a-z0-9-]{2,}")


class VectorsFailed(Exception):
    """The backend gave no usable vectors; retrying soon would not help."""


class VectorsUnavailable(Exception):
    """The backend could not be reached or is rate-limiting us; worth retrying later."""


class NotFitted(Exception):
    """The tf-idf model has not been fitted yet (build_vectors fits it)."""


def paper_text(*, title: str, abstract: str) -> str:
    return f"{title}\n{abstract}".strip()


def to_bytes(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype="<f4").tobytes()


def from_bytes(raw: bytes | memoryview) -> np.ndarray:
    return np.frombuffer(bytes(raw), dtype="<f4")


def normalized(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    unit: np.ndarray = matrix / norms
    return unit


@dataclass(frozen=True)
class Embedded:
    vectors: np.ndarray  # (n, dimensions) float32, unit rows
    terms: list[list[str]]


class VectorBackend(Protocol):
    key: str

    def embed(self, texts: Sequence[str]) -> Embedded: ...


class TfidfBackend:
    """tf-idf over title and abstract, reduced by truncated SVD, fitted on the catalog."""

    def __init__(self, *, directory: Path) -> None:
        self.path = Path(directory) / MODEL_FILE
        if not self.path.exists():
            raise NotFitted(f"no tf-idf model at {self.path}; run `manage.py build_vectors`")
        model = joblib.load(self.path)
        self.vectorizer, self.svd = model["vectorizer"], model["svd"]
        self.fitted_at: datetime.datetime = model["fitted_at"]
        # What the fit measured of the catalog, to tell when it has moved on
        # (refit_reason); a model fitted before they were kept has neither,
        # and is fitted again once.
        self.fitted_papers: int = model.get("papers", 0)
        self.fitted_coverage: float = model.get("coverage", 0.0)
        self.key = f"tfidf:{model['fit']}"
        self.vocabulary = self.vectorizer.get_feature_names_out()

    def embed(self, texts: Sequence[str]) -> Embedded:
        weights = self.vectorizer.transform(texts)
        vectors = normalized(self.svd.transform(weights))
        return Embedded(vectors=vectors, terms=self._top_terms(weights))

    def coverage(self, texts: Sequence[str]) -> float:
        """The share of these texts' words (as the model reads them) that its
        vocabulary holds: words it has never seen leave no trace in a vector."""
        return word_coverage(self.vectorizer, texts)

    def _top_terms(self, weights: Any) -> list[list[str]]:  # scikit-learn's (untyped) CSR matrix
        terms = []
        for row in range(weights.shape[0]):
            start, end = weights.indptr[row], weights.indptr[row + 1]
            columns, values = weights.indices[start:end], weights.data[start:end]
            best = np.argsort(-values)[:TERMS_KEPT]
            terms.append([str(self.vocabulary[columns[i]]) for i in best])
        return terms


def word_coverage(vectorizer: Any, texts: Sequence[str]) -> float:
    """The share of the texts' words, as this (scikit-learn) vectorizer reads
    them, that its vocabulary holds; 1.0 for texts without words."""
    analyze = vectorizer.build_analyzer()
    known = vectorizer.vocabulary_
    words = found = 0
    for text in texts:
        tokens = analyze(text)
        words += len(tokens)
        found += sum(1 for token in tokens if token in known)
    return found / words if words else 1.0


def fit_tfidf(
    *,
    texts: Sequence[str],
    directory: Path,
    dimensions: int,
    papers: int | None = None,
    now: datetime.datetime | None = None,
) -> Path:
    """Fit the tf-idf vocabulary and the SVD on these texts and persist them,
    with the size of the catalog they were drawn from (papers, by default as
    many as the texts) and the share of their words the vocabulary keeps.

    The SVD keeps `dimensions` components, fewer on a small catalog (it cannot
    keep more than it has papers or words).
    """
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfVectorizer

    if len(texts) < 3:
        raise VectorsFailed("at least 3 papers are needed to fit the tf-idf model")
    vectorizer = TfidfVectorizer(
        lowercase=True,
        stop_words="english",
        token_pattern=WORD_PATTERN,
        sublinear_tf=True,
        # Words in a single paper say nothing about similarity, on a catalog
        # large enough to have better ones.
        min_df=2 if len(texts) >= 200 else 1,
        max_df=0.5,
        max_features=200_000,
        dtype=np.float32,
    )
    weights = vectorizer.fit_transform(texts)
    components = max(1, min(dimensions, weights.shape[0] - 1, weights.shape[1] - 1))
    svd = TruncatedSVD(n_components=components, algorithm="randomized", random_state=0)
    svd.fit(weights)
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / MODEL_FILE
    partial = path.with_suffix(".partial")
    model = {
        "vectorizer": vectorizer,
        "svd": svd,
        "fit": uuid.uuid4().hex[:12],
        "fitted_at": now or timezone.now(),
        "papers": len(texts) if papers is None else papers,
        "coverage": word_coverage(vectorizer, texts[:COVERAGE_SAMPLE]),
    }
    joblib.dump(model, partial)
    partial.replace(path)  # readers never see half a file
    return path


def embedding_turn() -> AbstractContextManager[None]:
    """Calls to the embeddings endpoint start EMBEDDING_RATE_LIMIT apart, across every worker."""
    spacing = spacing_of(settings.EMBEDDING_RATE_LIMIT)
    return turn("embeddings", spacing=spacing, exclusive=False, max_wait=120 + 10 * spacing)


def keyword_terms(text: str) -> list[str]:
    """The paper's most repeated content words, for backends with no vocabulary of their own."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    counts: dict[str, int] = {}
    for word in WORD.findall(text.lower()):
        if word not in ENGLISH_STOP_WORDS:
            counts[word] = counts.get(word, 0) + 1
    return [word for word, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))][:TERMS_KEPT]


class OpenAIEmbeddingBackend:
    """Any OpenAI-compatible /v1/embeddings endpoint (OpenAI, vLLM, Ollama, TEI...)."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        model: str,
        dimensions: int,
        timeout: float,
        max_retries: int,
        attempts: int,
        batch_size: int,
    ) -> None:
        if not model:
            raise ImproperlyConfigured("EMBEDDING_BACKEND=openai needs EMBEDDING_MODEL.")
        self.model_name = model
        self.key = f"openai:{model}:{dimensions}"[:120]
        self.dimensions = dimensions
        self._attempts = max(1, attempts)
        self._batch_size = max(1, batch_size)
        # Imported here and in _request, like scikit-learn above: loaded by
        # every process at Django's setup, openai would cost each of them for
        # a backend few use.
        import openai

        self._client = openai.OpenAI(
            base_url=base_url or None,
            api_key=api_key or "unused",
            timeout=timeout,
            max_retries=max_retries,
        )

    def embed(self, texts: Sequence[str]) -> Embedded:
        rows: list[np.ndarray] = []
        for start in range(0, len(texts), self._batch_size):
            rows.append(self._embed_batch(list(texts[start : start + self._batch_size])))
        vectors = np.vstack(rows) if rows else np.zeros((0, self.dimensions), dtype=np.float32)
        return Embedded(vectors=vectors, terms=[keyword_terms(text) for text in texts])

    def embed_query(self, text: str, *, timeout: float) -> np.ndarray:
        """A reader's search as one unit vector, asked once with a short timeout:
        the reader waits on it, so it takes no turn of the rate limit (a search
        is one short text beside a harvest's batches) and is never retried;
        VectorsUnavailable or VectorsFailed when the endpoint gives none."""
        import openai

        client = self._client.with_options(timeout=timeout, max_retries=0)
        try:
            response = client.embeddings.create(
                model=self.model_name, input=[text], encoding_format="float"
            )
            vector: np.ndarray = self._check(response, expected=1)[0]
        except (
            openai.APIConnectionError,
            openai.RateLimitError,
            openai.InternalServerError,
        ) as exc:
            raise VectorsUnavailable(f"{self.model_name} is unavailable: {exc}") from exc
        except (openai.APIError, InvalidEmbeddings, ValueError) as exc:
            raise VectorsFailed(f"no search embedding from {self.model_name}: {exc}") from exc
        return vector

    def _embed_batch(self, batch: list[str]) -> np.ndarray:
        problems = []
        for attempt in range(1, self._attempts + 1):
            try:
                return self._check(self._request(batch), expected=len(batch))
            except InvalidEmbeddings as exc:
                logger.warning(
                    "Invalid embeddings from %s (attempt %d): %s", self.model_name, attempt, exc
                )
                problems.append(str(exc))
        raise VectorsFailed(
            f"no valid embeddings from {self.model_name} in {self._attempts} attempts: "
            + "; ".join(problems)
        )

    def _request(self, batch: list[str]) -> "CreateEmbeddingResponse":
        import openai

        try:
            with embedding_turn():
                return self._client.embeddings.create(
                    model=self.model_name, input=batch, encoding_format="float"
                )
        except TurnNotTaken as exc:
            raise VectorsUnavailable(str(exc)) from exc
        except (
            openai.APIConnectionError,
            openai.RateLimitError,
            openai.InternalServerError,
        ) as exc:
            raise VectorsUnavailable(f"{self.model_name} is unavailable: {exc}") from exc
        except openai.APIStatusError as exc:
            # Wrong key, unknown model, bad URL: an operator must fix the settings.
            raise VectorsFailed(
                f"{self.model_name} refused the request (HTTP {exc.status_code}): {exc.message}"
            ) from exc
        except (openai.APIResponseValidationError, ValueError) as exc:
            raise InvalidEmbeddings(f"unreadable answer: {exc}") from exc

    def _check(self, response: object, *, expected: int) -> np.ndarray:
        data = getattr(response, "data", None)
        if not isinstance(data, list) or len(data) != expected:
            got = len(data) if isinstance(data, list) else type(data).__name__
            raise InvalidEmbeddings(f"expected {expected} embeddings, got {got}")
        ordered: list[object] = [None] * expected
        for position, item in enumerate(data):
            index = getattr(item, "index", position)
            if (
                not isinstance(index, int)
                or not 0 <= index < expected
                or ordered[index] is not None
            ):
                raise InvalidEmbeddings(f"bad or repeated index {index!r}")
            ordered[index] = getattr(item, "embedding", None)
        matrix = []
        for index, embedding in enumerate(ordered):
            if not isinstance(embedding, list) or len(embedding) != self.dimensions:
                size = len(embedding) if isinstance(embedding, list) else type(embedding).__name__
                raise InvalidEmbeddings(
                    f"embedding {index} has {size} dimensions, not {self.dimensions}"
                )
            try:
                row = np.asarray(embedding, dtype=np.float32)
            except (TypeError, ValueError) as exc:
                raise InvalidEmbeddings(f"embedding {index} is not numbers: {exc}") from exc
            if not np.all(np.isfinite(row)) or not math.isfinite(float(np.linalg.norm(row))):
                raise InvalidEmbeddings(f"embedding {index} holds a non-finite number")
            if float(np.linalg.norm(row)) == 0.0:
                raise InvalidEmbeddings(f"embedding {index} is all zeros")
            matrix.append(row)
        return normalized(np.vstack(matrix))


class InvalidEmbeddings(Exception):
    """One answer of the endpoint could not be used; another attempt may do better."""


def get_vector_backend() -> VectorBackend:
    """The backend the settings choose; NotFitted for a tf-idf model not yet fitted."""
    name = settings.EMBEDDING_BACKEND
    if name == "tfidf":
        return TfidfBackend(directory=settings.VECTOR_DIR)
    if name == "openai":
        return OpenAIEmbeddingBackend(
            base_url=settings.EMBEDDING_BASE_URL,
            api_key=settings.EMBEDDING_API_KEY,
            model=settings.EMBEDDING_MODEL,
            dimensions=settings.EMBEDDING_DIMENSIONS,
            timeout=settings.EMBEDDING_TIMEOUT,
            max_retries=settings.EMBEDDING_MAX_RETRIES,
            attempts=settings.EMBEDDING_ATTEMPTS,
            batch_size=settings.EMBEDDING_BATCH_SIZE,
        )
    raise ImproperlyConfigured(f"EMBEDDING_BACKEND must be 'tfidf' or 'openai', not {name!r}.")


def refit_reason(*, backend: VectorBackend | None = None) -> str:
    """Why the tf-idf model should be fitted again, or "" while it fits the
    catalog: there is none yet; the visible papers have grown by
    VECTOR_REFIT_GROWTH since the fit; or the papers added since know
    VECTOR_REFIT_DRIFT less of their words in its vocabulary than the papers
    it was fitted on did (a field the fit never saw, read as noise). Two
    counts and, past growth, the text of at most COVERAGE_SAMPLE new papers."""
    if settings.EMBEDDING_BACKEND != "tfidf":
        return ""
    if not isinstance(backend, TfidfBackend):
        try:
            backend = TfidfBackend(directory=settings.VECTOR_DIR)
        except NotFitted:
            return "no model yet"
    visible = Paper.objects.visible()
    papers = visible.count()
    if papers > backend.fitted_papers * (1 + settings.VECTOR_REFIT_GROWTH):
        return f"the catalog grew from {backend.fitted_papers} to {papers} papers"
    newer = visible.filter(added_at__gt=backend.fitted_at).order_by("-added_at")
    texts = [
        paper_text(title=title, abstract=abstract)
        for title, abstract in newer.values_list("title", "abstract")[:COVERAGE_SAMPLE]
    ]
    if len(texts) < COVERAGE_MIN_PAPERS:
        return ""
    coverage = backend.coverage(texts)
    if coverage < backend.fitted_coverage - settings.VECTOR_REFIT_DRIFT:
        return (
            f"the {len(texts)} newest papers know {coverage:.0%} of their words, "
            f"the papers fitted on {backend.fitted_coverage:.0%}"
        )
    return ""


def model_needs_fit() -> bool:
    return bool(refit_reason())


def fit_on_catalog(*, sample: int | None = None) -> Path:
    """Fit the tf-idf model on the visible papers (a random sample of a large catalog)."""
    sample = sample or settings.VECTOR_FIT_SAMPLE
    # In id order throughout: the same catalog gives the same sample and the
    # same model (the SVD's components depend on the order of its rows, and
    # rows read in no order come as the table's pages happen to hold them).
    ids = list(Paper.objects.visible().order_by("pk").values_list("pk", flat=True))
    papers = len(ids)
    if len(ids) > sample:
        ids = sorted(random.Random(0).sample(ids, sample))
    texts: list[str] = []
    for start in range(0, len(ids), 5000):
        rows = (
            Paper.objects.filter(pk__in=ids[start : start + 5000])
            .order_by("pk")
            .values_list("title", "abstract")
        )
        texts.extend(paper_text(title=t, abstract=a) for t, a in rows)
    return fit_tfidf(
        texts=texts,
        directory=settings.VECTOR_DIR,
        dimensions=settings.EMBEDDING_DIMENSIONS,
        papers=papers,
    )


def papers_needing_vectors(*, key: str, everything: bool = False) -> QuerySet[Paper]:
    """Visible papers with no vector of this backend and fit (all of them with everything)."""
    papers = Paper.objects.visible()
    if not everything:
        current = PaperVector.objects.filter(paper=OuterRef("pk"), key=key)
        papers = papers.filter(~Exists(current))
    return papers.order_by("pk")


def store_vectors(*, papers: Iterable[tuple[int, str, str]], backend: VectorBackend) -> list[int]:
    """Embed (id, title, abstract) rows and upsert their vectors; the ids stored."""
    rows = list(papers)
    if not rows:
        return []
    embedded = backend.embed([paper_text(title=t, abstract=a) for _, t, a in rows])
    now = timezone.now()
    vectors = [
        PaperVector(
            paper_id=pk,
            key=backend.key,
            dimensions=embedded.vectors.shape[1],
            vector=to_bytes(embedded.vectors[i]),
            terms=embedded.terms[i],
            computed_at=now,
        )
        for i, (pk, _, _) in enumerate(rows)
    ]
    PaperVector.objects.bulk_create(
        vectors,
        update_conflicts=True,
        unique_fields=["paper"],
        update_fields=["key", "dimensions", "vector", "terms", "computed_at"],
    )
    return [pk for pk, _, _ in rows]


@dataclass
class VectorRun:
    fitted: bool = False
    stored: int = 0
    failed: int = 0


def build_vectors(
    *, everything: bool = False, batch_size: int = 1000, show_progress: bool = True
) -> VectorRun:
    """Vectors for every visible paper missing one (or for all), fitting the
    tf-idf model first when there is none or it is due for a refit."""
    run = VectorRun()
    reason = refit_reason()
    if reason:
        logger.info("Fitting the tf-idf model: %s", reason)
        fit_on_catalog()
        run.fitted = True
        everything = True  # a new fit changes every vector
    backend = get_vector_backend()
    papers = papers_needing_vectors(key=backend.key, everything=everything)
    total = papers.count()
    batch: list[tuple[int, str, str]] = []
    with Progress("vectors", total=total, unit="papers", enabled=show_progress) as progress:
        for row in papers.values_list("pk", "title", "abstract").iterator(chunk_size=batch_size):
            batch.append(row)
            if len(batch) >= batch_size:
                run.stored += len(store_vectors(papers=batch, backend=backend))
                progress.advance(len(batch))
                batch = []
        if batch:
            run.stored += len(store_vectors(papers=batch, backend=backend))
            progress.advance(len(batch))
    # Vectors of papers since hidden or merged are kept: they come back if shown.
    return run


def current_key() -> str:
    return get_vector_backend().key


def vectors_of(*, paper_ids: Iterable[int], key: str) -> tuple[np.ndarray, np.ndarray]:
    """(ids, matrix) of these papers' vectors of this key, in id order."""
    rows = PaperVector.objects.filter(Q(paper_id__in=list(paper_ids)), key=key).order_by("paper_id")
    return stack(rows.values_list("paper_id", "vector"))


def stack(rows: Iterable[tuple[int, bytes | memoryview]]) -> tuple[np.ndarray, np.ndarray]:
    ids, vectors = [], []
    for pk, raw in rows:
        ids.append(pk)
        vectors.append(from_bytes(raw))
    if not vectors:
        return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32)
    return np.asarray(ids, dtype=np.int64), np.vstack(vectors)
