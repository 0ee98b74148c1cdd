"""Summary and takeaways picked from the abstract's own sentences (no model needed)."""

import re

from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer
from sumy.nlp.stemmers import Stemmer
from sumy.parsers.plaintext import PlaintextParser
from sumy.summarizers.lex_rank import LexRankSummarizer
from sumy.utils import get_stop_words

from catalog.models import Summary
from enrichment.base import Enrichment, EnrichmentFailed

SUMMARY_SENTENCES = 2
MAX_TAKEAWAYS = 5
# A list of takeaways shorter than this says nothing a summary would not.
MIN_TAKEAWAYS = 3

# Abbreviations common in abstracts, which must not end a sentence. Punkt
# learns these from training data, which would have to be downloaded.
ABBREVIATIONS = {"e.g", "i.e", "al", "etc", "vs", "fig", "figs", "eq", "eqs", "cf", "approx"}
WORD = re.compile(r"\w+(?:[-'\u2019]\w+)*")


class AbstractTokenizer:
    """The tokenizer sumy expects, built from parts that need no downloaded data
    (sumy's own Tokenizer loads nltk's trained punkt model from the network)."""

    language = "english"

    def __init__(self) -> None:
        parameters = PunktParameters()
        parameters.abbrev_types = set(ABBREVIATIONS)
        self._sentences = PunktSentenceTokenizer(parameters)

    def to_sentences(self, paragraph: str) -> tuple[str, ...]:
        return tuple(self._sentences.tokenize(paragraph))

    def to_words(self, sentence: str) -> tuple[str, ...]:
        return tuple(WORD.findall(sentence))


class ExtractiveBackend:
    kind: str = Summary.Backend.EXTRACTIVE
    written_by = "LexRank sentence extraction (sumy)"
    model_name = "sumy LexRank"
    prompt_version = ""
    # Translation only ever comes from a model or a person.
    translation_languages: tuple[str, ...] = ()

    def __init__(self) -> None:
        self._tokenizer = AbstractTokenizer()
        self._summarizer = LexRankSummarizer(Stemmer("english"))
        self._summarizer.stop_words = get_stop_words("english")

    def enrich(self, *, title: str, abstract: str) -> Enrichment:
        text = " ".join(abstract.split())
        if not text:
            raise EnrichmentFailed("the paper has no abstract to summarise")
        document = PlaintextParser.from_string(text, self._tokenizer).document
        sentence_count = len(document.sentences)
        # Ranking a text no longer than the summary would only reorder nothing
        # (and LexRank divides by zero on two unrelated sentences).
        if sentence_count <= SUMMARY_SENTENCES:
            summary = document.sentences
        else:
            summary = self._summarizer(document, SUMMARY_SENTENCES)
        takeaways: tuple[object, ...] = ()  # sumy's sentences
        if sentence_count >= MIN_TAKEAWAYS:
            takeaways = self._summarizer(document, min(MAX_TAKEAWAYS, sentence_count))
        return Enrichment(
            summary=" ".join(str(sentence) for sentence in summary),
            takeaways=tuple(str(sentence) for sentence in takeaways),
        )
