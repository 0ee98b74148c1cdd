"""Search inside papers: `q` with `in=fulltext` reads the stored full texts'
sections too, on the list pages and in the API, and each paper found there
shows the passage holding the words, in its section, marked, linking into the
Read view at that paragraph.

`make test` runs this file on PostgreSQL and again on SQLite (FTS5): both
databases find, mark and link the same passages.
"""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from catalog import search
from catalog.models import FullText, FullTextSection
from enrichment.fulltext import ParsedSection, ParsedText, record_failure, store_fulltext
from tests.factories import PaperFactory

pytestmark = pytest.mark.django_db

MARK = re.compile(r"<mark>(.*?)</mark>")

FILLER = (
    "The experiments ran on the standard benchmarks with the usual splits and the"
    " reported numbers are means over five seeds, each trained from scratch."
)


def read(paper, *sections: tuple[str, list[str]], version: int | None = None) -> None:
    """Store a paper's full text: (heading, paragraphs) per section."""
    parsed = ParsedText(
        source=FullText.Source.HTML,
        sections=[
            ParsedSection(heading=heading, level=1, paragraphs=list(paragraphs))
            for heading, paragraphs in sections
        ],
    )
    store_fulltext(paper=paper, parsed=parsed, pictures=[])
    if version is not None:
        FullText.objects.filter(paper=paper).update(version=version)


def card(html: str, paper) -> str:
    start = html.index(f'id="paper-{paper.pk}"')
    return html[start : html.index("</article>", start)]


def listed(response) -> list[int]:
    return [paper.pk for paper in response.context["page"].object_list]


@pytest.fixture
def papers():
    """A paper holding "sparsemax" deep in its text alone, one holding it in its
    abstract, and one whose text never has it."""
    in_text = PaperFactory(title="Efficient attention", abstract="We study attention.")
    read(
        in_text,
        ("1 Introduction", [FILLER, "Attention is everywhere."]),
        (
            "3 Method",
            [
                FILLER,
                "We replace the softmax by sparsemax, whose outputs are sparse.",
                FILLER + " " + FILLER,
            ],
        ),
    )
    in_abstract = PaperFactory(title="Sparse outputs", abstract="Sparsemax gives sparse outputs.")
    elsewhere = PaperFactory(title="Protein folding", abstract="Folding proteins.")
    read(elsewhere, ("1 Introduction", ["Proteins fold."]))
    return {"in_text": in_text, "in_abstract": in_abstract, "elsewhere": elsewhere}


def test_a_word_in_the_text_alone_is_found_only_when_the_texts_are_searched(client, papers):
    plain = client.get("/?q=sparsemax")
    texts = client.get("/?q=sparsemax&in=fulltext")

    assert listed(plain) == [papers["in_abstract"].pk]
    # A match in the title or abstract ranks before one in the text alone.
    assert listed(texts) == [papers["in_abstract"].pk, papers["in_text"].pk]


def test_a_word_many_papers_hold_walks_the_newest_papers_with_the_same_result(
    client, papers, monkeypatch
):
    # Past OWN_MATCHES_TO_WALK papers matching by their own words (the
    # planner's estimate), PostgreSQL walks the newest papers, looking each up
    # among the texts' matches, rather than reading both lists from their indexes.
    monkeypatch.setattr(search, "OWN_MATCHES_TO_WALK", -1)

    texts = client.get("/?q=sparsemax&in=fulltext")

    assert listed(texts) == [papers["in_abstract"].pk, papers["in_text"].pk]
    assert "<mark>sparsemax</mark>" in card(texts.content.decode(), papers["in_text"])


def test_each_paper_found_in_its_text_shows_the_passage_in_its_section(client, papers):
    html = client.get("/?q=sparsemax&in=fulltext").content.decode()

    found = card(html, papers["in_text"])
    read_url = f"/papers/{papers['in_text'].arxiv_id}/read/#section-2-paragraph-2"
    assert f'<a href="{read_url}">In the text · <span lang="en">3 Method</span></a>' in found
    passage = found[found.index('class="passage-text"') :]
    passage = passage[: passage.index("</p>")]
    assert "We replace the softmax by <mark>sparsemax</mark>, whose outputs are sparse." in passage
    # A paper found by its abstract alone has no passage.
    assert 'class="passage"' not in card(html, papers["in_abstract"])


def test_the_passage_holds_most_of_the_words_before_the_most_repeated_one(client):
    paper = PaperFactory(title="Plain title", abstract="Nothing here.")
    read(
        paper,
        ("1 Models", ["The model, the model and the model again: a model of models."]),
        (
            "2 Method",
            [FILLER, "The model again, a model.", "Outputs pass through sparsemax.", "A model."],
        ),
    )

    found = card(client.get("/?q=sparsemax+model&in=fulltext").content.decode(), paper)

    # The section holding both words; in it, the paragraph of the word it seldom says.
    assert "#section-2-paragraph-3" in found
    assert "Outputs pass through <mark>sparsemax</mark>." in found


def test_the_passage_links_to_its_paragraph_in_the_read_view(client, papers):
    html = client.get(f"/papers/{papers['in_text'].arxiv_id}/read/").content.decode()

    assert '<p id="section-2-paragraph-2">We replace the softmax by sparsemax' in html
    assert '<p id="section-1-paragraph-1">' in html


def test_words_are_matched_by_their_stems_and_marked_as_matched(client):
    paper = PaperFactory(title="Plain title", abstract="Nothing here.")
    read(paper, ("2 Models", ["Transformers were trained, then the transformer was pruned."]))

    html = client.get("/?q=transformer+training&in=fulltext").content.decode()

    assert MARK.findall(card(html, paper)) == ["Transformers", "trained", "transformer"]


def test_a_passage_is_cut_around_the_words_in_a_long_paragraph(client):
    paper = PaperFactory(title="Plain title", abstract="Nothing here.")
    long_paragraph = " ".join(
        [FILLER] * 4 + ["The key idea is gradient checkpointing."] + [FILLER] * 4
    )
    read(paper, ("2 Method", [FILLER, long_paragraph]))

    html = card(client.get("/?q=checkpointing&in=fulltext").content.decode(), paper)

    passage = html[html.index('class="passage-text"') :]
    passage = passage[: passage.index("</p>")]
    assert "The key idea is gradient <mark>checkpointing</mark>." in passage
    assert passage.count("…") == 2 and len(re.sub("<[^>]+>", "", passage)) < 400


def test_a_heading_alone_holding_the_words_shows_the_start_of_its_section(client):
    paper = PaperFactory(title="Plain title", abstract="Nothing here.")
    read(paper, ("4 Ablations", ["We remove one part at a time."]))

    html = card(client.get("/?q=ablations&in=fulltext").content.decode(), paper)

    assert '<span lang="en">4 <mark>Ablations</mark></span>' in html
    assert "We remove one part at a time." in html
    assert "#section-1-paragraph-1" in html


def test_the_words_may_stand_in_different_sections_and_the_passage_holds_most(client):
    apart = PaperFactory(title="Plain title", abstract="Nothing here.")
    read(
        apart,
        ("1 One", ["Dropout helps."]),
        ("2 Two", ["Batchnorm helps.", "Dropout with batchnorm helps most."]),
    )
    neither = PaperFactory(title="Another title", abstract="Nothing either.")
    read(neither, ("1 Only", ["Dropout alone."]))

    response = client.get("/?q=dropout+batchnorm&in=fulltext")

    assert listed(response) == [apart.pk]
    found = card(response.content.decode(), apart)
    assert "#section-2-paragraph-2" in found
    assert "<mark>Dropout</mark> with <mark>batchnorm</mark> helps most." in found
    both = {apart.pk, neither.pk}
    assert set(listed(client.get("/?q=dropout+or+batchnorm&in=fulltext"))) == both


def test_excluded_words_and_phrases_hold_in_the_text(client):
    kept = PaperFactory(title="Plain title", abstract="Nothing here.")
    read(kept, ("1 Method", ["Low rank adapters fine-tune the model."]))
    dropped = PaperFactory(title="Other title", abstract="Nothing either.")
    read(dropped, ("1 Method", ["Low rank adapters with full fine-tuning of the head."]))

    assert listed(client.get("/?q=adapters+-head&in=fulltext")) == [kept.pk]
    both = {kept.pk, dropped.pk}
    assert set(listed(client.get('/?q="low+rank+adapters"&in=fulltext'))) == both
    # The words of a phrase must stand together.
    assert listed(client.get('/?q="adapters+full"&in=fulltext')) == []
    assert listed(client.get("/?q=adapters+full&in=fulltext")) == [dropped.pk]


def test_a_phrase_stands_within_one_section_and_alternatives_and_exclusions_combine(client):
    apart = PaperFactory(title="Plain title", abstract="Nothing here.")
    read(apart, ("1 Setup", ["We need knowledge"]), ("2 Distillation", ["Batchnorm helps."]))
    together = PaperFactory(title="Another title", abstract="Nothing either.")
    read(together, ("1 Method", ["Knowledge distillation trains a student."]))

    def found(query: str) -> set[int]:
        return set(listed(client.get(f"/?q={query}&in=fulltext")))

    # Across the end of a section the words are no phrase.
    assert found('"knowledge+distillation"') == {together.pk}
    assert found('"knowledge+distillation"+or+batchnorm') == {apart.pk, together.pk}
    assert found('distillation+-"knowledge+distillation"') == {apart.pk}
    assert found("knowledge+distillation+-student") == {apart.pk}


def test_a_text_read_again_is_searched_as_it_now_is(client, papers):
    paper = papers["in_text"]
    read(paper, ("1 Introduction", ["Now about mixture of experts."]), version=2)

    assert listed(client.get("/?q=sparsemax&in=fulltext")) == [papers["in_abstract"].pk]
    assert listed(client.get("/?q=experts&in=fulltext")) == [paper.pk]
    # A failed read keeps nothing of the old text: nothing of it is found.
    record_failure(paper=paper, error="arXiv's HTML rendering could not be read")
    assert listed(client.get("/?q=experts&in=fulltext")) == []
    assert not FullTextSection.objects.filter(paper=paper).exists()


def test_hidden_papers_are_not_found_by_their_text(client, papers):
    papers["in_text"].is_visible = False
    papers["in_text"].save()

    assert listed(client.get("/?q=sparsemax&in=fulltext")) == [papers["in_abstract"].pk]


def test_the_search_form_offers_the_choice_and_keeps_it(client, papers):
    html = client.get("/?q=sparsemax&in=fulltext").content.decode()

    select = html[html.index('<select name="in"') :]
    select = select[: select.index("</select>")]
    assert '<option value="">Titles, authors and abstracts</option>' in select
    assert '<option value="fulltext" selected>Full texts too</option>' in select
    # The header's box searches the texts again.
    header = html[html.index('class="header-search"') :]
    header = header[: header.index("</form>")]
    assert '<input type="hidden" name="in" value="fulltext">' in header
    # The choice is a filter of its own, removable as the others are.
    assert "Search in" in html and "Full texts too" in html
    plain = client.get("/?q=sparsemax").content.decode()
    header = plain[plain.index('class="header-search"') :]
    assert 'name="in"' not in header[: header.index("</form>")]


def test_a_bad_choice_is_a_message_not_an_error(client, papers):
    response = client.get("/?q=sparsemax&in=everything")

    assert response.status_code == 200
    assert "Select a valid choice" in response.content.decode()


def count_queries(client, url: str) -> int:
    client.get(url)  # the catalog's cached reads filled
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured.captured_queries)


def test_passages_cost_one_query_whatever_the_page(client, papers):
    texts = count_queries(client, "/?q=sparsemax&in=fulltext")
    # The passages: one query of the page's matching sections, the best of each
    # marked; on PostgreSQL the planner's estimates of the papers matching by
    # their own words and of the texts matching, where a search alone asks for
    # one of its matches: one more (catalog.search.estimate_text_matches).
    estimate = 1 if connection.vendor == "postgresql" else 0
    assert texts == count_queries(client, "/?q=sparsemax") + 1 + estimate
    for number in range(5):
        paper = PaperFactory(title=f"Paper {number}", abstract="Nothing.")
        read(paper, ("1 Body", [FILLER, "Sparsemax again."]), ("2 More", ["Sparsemax once more."]))
    assert count_queries(client, "/?q=sparsemax&in=fulltext") == texts


def test_the_api_searches_the_texts_and_gives_each_passage(client, papers):
    answer = client.get("/api/v1/papers", {"q": "sparsemax", "in": "fulltext"}).json()

    items = {item["id"]: item for item in answer["items"]}
    assert set(items) == {papers["in_text"].pk, papers["in_abstract"].pk}
    passage = items[papers["in_text"].pk]["passage"]
    assert passage["section"] == "3 Method"
    assert passage["section_number"] == 2 and passage["paragraph_number"] == 2
    assert passage["text"] == "We replace the softmax by sparsemax, whose outputs are sparse."
    assert "<mark>sparsemax</mark>" in passage["html"]
    assert passage["url"].endswith(
        f"/papers/{papers['in_text'].arxiv_id}/read/#section-2-paragraph-2"
    )
    assert passage["url"].startswith("http")
    assert items[papers["in_abstract"].pk]["passage"] is None
    plain = client.get("/api/v1/papers", {"q": "sparsemax"}).json()
    assert [item["id"] for item in plain["items"]] == [papers["in_abstract"].pk]
    assert "passage" not in plain["items"][0] or plain["items"][0]["passage"] is None


def test_the_api_refuses_an_unknown_choice(client):
    response = client.get("/api/v1/papers", {"q": "x", "in": "everything"})

    assert response.status_code in (400, 422)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's tsvector limit")
def test_a_text_with_more_words_than_a_tsvector_holds_is_searched_by_its_start(client):
    # Three sections each within PostgreSQL's 1 MB a tsvector, together past
    # it: every token a word of its own, as in a long table of numbers.
    def table(start: int) -> list[str]:
        return [" ".join(f"x{number:06d}" for number in range(start, start + 40_000))]

    paper = PaperFactory(title="Plain title", abstract="Nothing here.")
    read(
        paper,
        ("1 Quasicrystals", table(0)),
        ("2 Table", table(40_000)),
        ("3 Table", [*table(80_000), "Icosahedral."]),
    )

    assert FullText.objects.get(paper=paper).status == FullText.Status.STORED
    assert listed(client.get("/?q=quasicrystals&in=fulltext")) == [paper.pk]
    # Past the words kept (catalog.search.TEXT_WORDS_FALLBACK), the text is not searched.
    assert listed(client.get("/?q=icosahedral&in=fulltext")) == []


def test_the_admin_shows_what_was_read_not_the_words_searched(admin_client, papers):
    text = FullText.objects.get(paper=papers["in_text"])

    listing = admin_client.get("/admin/catalog/fulltext/")
    page = admin_client.get(f"/admin/catalog/fulltext/{text.pk}/change/")

    assert listing.status_code == page.status_code == 200
    assert "stored" in page.content.decode()
    assert "Search document" not in page.content.decode()
