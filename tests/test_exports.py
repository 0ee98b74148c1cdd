"""Lists exported for reference managers, parsed back by a BibTeX and a RIS
parser: BibTeX, RIS and CSL-JSON of any list, streamed, at most EXPORT_MAX_PAPERS."""

import datetime
import html
import io
import json
import shutil
import subprocess
import unicodedata

import bibtexparser
import pybtex.database
import pybtex.plugin
import pytest
import rispy
from bibtexparser.middlewares import LatexDecodingMiddleware
from citeproc import (
    Citation,
    CitationItem,
    CitationStylesBibliography,
    CitationStylesStyle,
    formatter,
)
from citeproc.source.json import CiteProcJSON
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from pylatexenc import latex2text, latexwalker, macrospec

from accounts import services
from catalog.models import Paper
from tests.accounts_factories import SavedPaperFactory, SubscriptionFactory, UserFactory
from tests.factories import CategoryFactory, PaperFactory, TagFactory

pytestmark = pytest.mark.django_db


def body(response) -> str:
    assert response.status_code == 200, response.content
    assert response.streaming
    return b"".join(response.streaming_content).decode()


@pytest.fixture
def catalog():
    tag = TagFactory(slug="agents")
    category = CategoryFactory(code="cs.AI")
    papers = [
        PaperFactory(
            title=f"Reasoning agents {n}",
            authors=["Ada Lovelace", "Alan Turing"],
            tags=[tag] if n % 2 else [],
            categories=[category],
        )
        for n in range(4)
    ]
    # A title with braces that do not pair, and a journal reference with a DOI.
    odd = PaperFactory(
        title="On {unbalanced} braces } and 100% of $\\alpha$",
        authors=["Ada Lovelace"],
        journal_ref="Journal of Tests 1 (2025) 1-10",
        doi="10.1000/test.1",
    )
    return {"tag": tag, "papers": [*papers, odd]}


def test_bibtex_parses_back_with_one_entry_per_paper_and_unique_keys(client, catalog):
    text = body(client.get("/export.bib"))
    library = bibtexparser.parse_string(text)

    assert not library.failed_blocks
    assert len(library.entries) == 5
    keys = [entry.key for entry in library.entries]
    assert len(set(keys)) == 5
    by_id = {entry["eprint"]: entry for entry in library.entries}
    first = by_id[catalog["papers"][0].arxiv_id]
    assert first["title"] == "{Reasoning agents 0}"
    assert first["author"] == "Lovelace, Ada and Turing, Alan"
    assert first["archivePrefix"] == "arXiv"
    assert first["doi"] == f"10.48550/arXiv.{catalog['papers'][0].arxiv_id}"
    odd = by_id[catalog["papers"][-1].arxiv_id]
    assert odd.entry_type == "article"
    assert odd["doi"] == "10.1000/test.1"


def test_ris_parses_back(client, catalog):
    response = client.get("/export.ris")
    entries = rispy.loads(body(response))

    assert response["Content-Disposition"] == 'attachment; filename="papers.ris"'
    assert len(entries) == 5
    by_title = {entry["title"]: entry for entry in entries}
    paper = catalog["papers"][1]
    entry = by_title[paper.title]
    assert entry["type_of_reference"] == "UNPB"
    assert entry["authors"] == ["Lovelace, Ada", "Turing, Alan"]
    assert entry["year"] == str(paper.published_at.year)
    assert entry["urls"] == [paper.abs_url]
    assert entry["accession_number"] == f"arXiv:{paper.arxiv_id}"


def test_csl_json_is_a_list_of_items(client, catalog):
    items = json.loads(body(client.get("/export.csl.json")))

    assert len(items) == 5
    first = next(item for item in items if item["id"] == catalog["papers"][0].arxiv_id)
    assert first["type"] == "article"
    assert first["author"] == [
        {"family": "Lovelace", "given": "Ada"},
        {"family": "Turing", "given": "Alan"},
    ]
    assert len(first["issued"]["date-parts"][0]) == 3
    assert first["publisher"] == "arXiv"


def test_exports_take_the_lists_filters_and_order(client, catalog):
    filtered = rispy.loads(body(client.get("/export.ris?q=reasoning&tag=agents")))
    tagged = rispy.loads(body(client.get("/tags/agents/export.ris")))
    in_category = json.loads(body(client.get("/categories/cs.AI/export.csl.json")))

    # Newest first, as on the list page.
    expected = [p.title for p in catalog["papers"][:4] if p.tags.exists()]
    assert [entry["title"] for entry in filtered] == expected
    assert [entry["title"] for entry in tagged] == expected
    assert len(in_category) == 4


def test_exports_stop_at_the_limit_and_say_so(client, catalog, settings):
    settings.EXPORT_MAX_PAPERS = 2
    ris = client.get("/export.ris")
    bib = body(client.get("/export.bib"))

    assert len(rispy.loads(body(ris))) == 2
    assert ris["Export-Truncated"] == "the first 2 papers of a longer list"
    library = bibtexparser.parse_string(bib)
    assert len(library.entries) == 2
    assert "The first 2 papers of a longer list" in library.comments[0].comment
    settings.EXPORT_MAX_PAPERS = 5
    assert not client.get("/export.ris").has_header("Export-Truncated")


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/export.pdf", 404),
        ("/export.bib?tag=nope", 400),
        ("/export.bib?from=2025-02-01&to=2025-01-01", 400),
        ("/tags/nope/export.bib", 404),
        ("/categories/xx.YY/export.ris", 404),
    ],
)
def test_bad_exports_are_4xx(client, catalog, path, status):
    assert client.get(path).status_code == status


def test_saved_papers_and_the_feed_export_for_their_reader(client, catalog):
    user = UserFactory()
    SavedPaperFactory(user=user, paper=catalog["papers"][0])
    SubscriptionFactory(user=user, tag=catalog["tag"])
    assert client.get("/saved/export.bib").status_code == 302
    client.force_login(user)

    saved = bibtexparser.parse_string(body(client.get("/saved/export.bib")))
    feed = rispy.loads(body(client.get("/feed/export.ris")))

    assert [entry["eprint"] for entry in saved.entries] == [catalog["papers"][0].arxiv_id]
    assert len(feed) == 2


def test_a_readers_exports_take_their_api_token(client, catalog):
    user = UserFactory()
    SavedPaperFactory(user=user, paper=catalog["papers"][0])
    SubscriptionFactory(user=user, tag=catalog["tag"])
    _, secret = services.create_api_token(user=user, name="script")
    token = {"HTTP_AUTHORIZATION": f"Bearer {secret}"}

    saved = client.get("/saved/export.bib", **token)
    feed = rispy.loads(body(client.get("/feed/export.ris", **token)))
    made_up = client.get("/saved/export.bib", HTTP_AUTHORIZATION="Bearer psk_made-up")
    not_bearer = client.get("/feed/export.ris", HTTP_AUTHORIZATION="Basic eDp5")

    entries = bibtexparser.parse_string(body(saved)).entries
    assert [entry["eprint"] for entry in entries] == [catalog["papers"][0].arxiv_id]
    assert len(feed) == 2
    assert "private" in saved["Cache-Control"] and "Authorization" in saved["Vary"]
    assert made_up.status_code == 401 and made_up["WWW-Authenticate"].startswith("Bearer")
    assert not_bearer.status_code == 401
    # Without a session or a token, as before: the sign-in page.
    assert client.get("/saved/export.bib").status_code == 302


def test_an_export_is_one_query_whatever_its_length(client, catalog):
    with CaptureQueriesContext(connection) as queries:
        body(client.get("/export.bib"))
    # The papers with their primary category, read through a cursor, and
    # whether any lies past the limit.
    assert len([q for q in queries if "catalog_paper" in q["sql"]]) == 2


def test_list_pages_link_their_exports(client, catalog):
    user = UserFactory()
    SavedPaperFactory(user=user, paper=catalog["papers"][0])
    for path in ("/?q=reasoning", "/tags/agents/", "/categories/cs.AI/"):
        page = client.get(path).content.decode()
        for link in ("export.bib", "export.ris", "export.csl.json"):
            assert f'href="{link}' in page, (path, link)
    assert 'href="export.bib?q=reasoning"' in client.get("/?q=reasoning").content.decode()
    client.force_login(user)
    assert 'href="export.ris"' in client.get("/saved/").content.decode()


# Titles as arXiv writes them (TeX) with what breaks a LaTeX document or a
# BibTeX parser, and names that are not "First Last".
AWKWARD_TITLES = [
    "Scaling 100% of $\\alpha$-nets",
    "snake_case tokens and $x_i^2$ terms",
    "A title ending in a backslash \\",
    "Unbalanced } braces { around \\emph{emphasis}",
    "Reading \\input{/etc/passwd} and \\write18{rm -rf}",
    "Costs $5 & #1 ^ up",
]
AWKWARD_NAMES = [
    "John Smith Jr.",
    "Jean-Pierre van der Berg",
    "ATLAS Collaboration",
    "DeepSeek-AI",
    "Ada Lovelace",
]


@pytest.fixture
def awkward():
    return [
        PaperFactory(
            arxiv_id=f"2503.0000{n}",
            title=title,
            authors=AWKWARD_NAMES,
            published_at=datetime.datetime(2025, 3, 4, tzinfo=datetime.UTC),
            published_precision=Paper.DatePrecision.MONTH if n == 0 else Paper.DatePrecision.DAY,
        )
        for n, title in enumerate(AWKWARD_TITLES)
    ]


def test_bibtex_of_awkward_titles_parses_and_typesets(client, awkward):
    text = body(client.get("/export.bib"))
    library = bibtexparser.parse_string(text)
    titles = {entry["eprint"]: entry["title"] for entry in library.entries}

    assert not library.failed_blocks
    assert len(library.entries) == len(AWKWARD_TITLES)
    assert titles["2503.00000"] == "{Scaling 100\\% of $\\alpha$-nets}"
    assert titles["2503.00001"] == "{snake\\_case tokens and $x_i^2$ terms}"
    assert titles["2503.00002"] == "{A title ending in a backslash}"
    # Only the braces without a partner go: the command keeps its argument.
    assert titles["2503.00003"] == "{Unbalanced braces around \\emph{emphasis}}"
    # Commands that read or write files are printed, never run.
    assert titles["2503.00004"] == "{Reading input{/etc/passwd} and write18{rm -rf}}"
    assert titles["2503.00005"] == "{Costs \\$5 \\& \\#1 \\^{} up}"
    assert "\\input" not in text and "\\write" not in text
    for entry in library.entries:
        assert entry["month"] == "mar"


def test_bibtex_names_have_their_parts_for_a_bibtex_reader(client, awkward):
    data = pybtex.database.parse_string(body(client.get("/export.bib")), "bibtex")
    people = data.entries["smith2025scaling"].persons["author"]

    smith, van_der_berg, atlas, deepseek, lovelace = people
    assert (smith.last_names, smith.first_names, smith.lineage_names) == (
        ["Smith"],
        ["John"],
        ["Jr."],
    )
    assert van_der_berg.prelast_names == ["van", "der"]
    assert van_der_berg.last_names == ["Berg"]
    assert van_der_berg.first_names == ["Jean-Pierre"]
    # A group's name is one name: never "Collaboration, A.".
    assert atlas.last_names == ["{ATLAS Collaboration}"] and not atlas.first_names
    assert deepseek.last_names == ["{DeepSeek-AI}"]
    assert (lovelace.last_names, lovelace.first_names) == (["Lovelace"], ["Ada"])


def test_bibtex_formats_through_a_bibtex_style(client, awkward):
    data = pybtex.database.parse_string(body(client.get("/export.bib")), "bibtex")
    style = pybtex.plugin.find_plugin("pybtex.style.formatting", "plain")()
    backend = pybtex.plugin.find_plugin("pybtex.backends", "latex")()

    formatted = {
        entry.key: entry.text.render(backend)
        for entry in style.format_entries(data.entries.values())
    }

    entry = formatted["smith2025scaling"]
    assert entry.startswith("John Smith, Jr., Jean-Pierre van~der Berg, {ATLAS Collaboration},")
    assert "100\\%" in entry


def test_ris_dates_say_no_more_than_the_paper_knows(client, awkward):
    entries = {e["accession_number"]: e for e in rispy.loads(body(client.get("/export.ris")))}

    assert entries["arXiv:2503.00000"]["date"] == "2025/03//"
    assert entries["arXiv:2503.00001"]["date"] == "2025/03/04/"
    authors = entries["arXiv:2503.00000"]["authors"]
    assert authors[:3] == ["Smith, John, Jr.", "van der Berg, Jean-Pierre", "ATLAS Collaboration"]
    assert entries["arXiv:2503.00000"]["doi"] == "10.48550/arXiv.2503.00000"
    # Titles as text: the math is read, not left as TeX.
    assert entries["arXiv:2503.00000"]["title"].startswith("Scaling 100% of ")
    assert "$" not in entries["arXiv:2503.00000"]["title"]


def test_a_paper_known_only_from_here_is_cited_by_the_day_it_was_added(client):
    """As its page's citation tags date it: a reference is never without a year."""
    added = datetime.datetime(2025, 6, 7, 23, 30, tzinfo=datetime.UTC)
    paper = PaperFactory(
        arxiv_id=None, version=None, published_at=None, added_at=added, authors=["Ada Lovelace"]
    )
    assert paper.citation_date == "2025/06/07"

    entry = bibtexparser.parse_string(body(client.get("/export.bib"))).entries[0]
    assert (entry.key, entry["year"], entry["month"]) == ("lovelace2025study", "2025", "jun")
    (ris,) = rispy.loads(body(client.get("/export.ris")))
    assert (ris["year"], ris["date"]) == ("2025", "2025/06/07/")
    (item,) = json.loads(body(client.get("/export.csl.json")))
    assert item["issued"] == {"date-parts": [[2025, 6, 7]]}


def test_csl_json_cites_a_preprint_as_a_csl_processor_expects(client, awkward):
    items = json.loads(body(client.get("/export.csl.json")))
    item = next(item for item in items if item["id"] == "2503.00001")

    assert "number" not in item
    assert item["DOI"] == "10.48550/arXiv.2503.00001"
    assert item["title"] == "snake_case tokens and x_i^2 terms"
    assert item["author"][:4] == [
        {"family": "Smith", "given": "John", "suffix": "Jr."},
        {"family": "Berg", "given": "Jean-Pierre", "non-dropping-particle": "van der"},
        {"literal": "ATLAS Collaboration"},
        {"literal": "DeepSeek-AI"},
    ]
    # A CSL processor formats every item; none is an "Article <id>".
    source = CiteProcJSON(items)
    style = CitationStylesStyle("harvard-cite-them-right", validate=False)
    bibliography = CitationStylesBibliography(style, source, formatter.plain)
    for each in items:
        bibliography.register(Citation([CitationItem(each["id"])]))
    rendered = "\n".join(str(line) for line in bibliography.bibliography())
    assert "Article 2503" not in rendered
    assert "Smith, J., Jr" in rendered or "Smith, J. Jr" in rendered, rendered


def snapshot_line(arxiv_id: str, authors_parsed: list[list[str]]) -> str:
    names = ", ".join(" ".join(part for part in (g, f, s) if part) for f, g, s in authors_parsed)
    return json.dumps(
        {
            "id": arxiv_id,
            "authors": names,
            "title": "Names in parts",
            "abstract": "Names as the snapshot parsed them.",
            "categories": "cs.CL",
            "versions": [{"version": "v1", "created": "Mon, 3 Mar 2025 10:00:00 GMT"}],
            "authors_parsed": authors_parsed,
        }
    )


def test_names_the_source_gave_in_parts_are_exported_in_those_parts(client, tmp_path):
    """The snapshot's parsed names are kept: a family name of two words is not
    split into a middle and a family name, as parsing "Gabriel García Márquez"
    would split it; a name a curator later changed is parsed again."""
    snapshot = tmp_path / "snapshot.jsonl"
    parsed = [
        ["García Márquez", "Gabriel", ""],
        ["de la Cruz", "María", ""],
        ["Smith", "John", "Jr"],
    ]
    collaboration = [["ATLAS Collaboration", "", ""], ["Nguyen Van", "Anh", ""]]
    snapshot.write_text(
        snapshot_line("2503.10001", parsed) + "\n" + snapshot_line("2503.10002", collaboration)
    )
    call_command("import_arxiv_snapshot", str(snapshot), stdout=io.StringIO(), verbosity=0)

    bib = pybtex.database.parse_string(body(client.get("/export.bib")), "bibtex")
    marquez, cruz, smith = bib.entries["garciamarquez2025names"].persons["author"]
    assert (marquez.last_names, marquez.first_names) == (
        ["{Garc{\\'{i}}a M{\\'{a}}rquez}"],
        ["Gabriel"],
    )
    assert (cruz.prelast_names, cruz.last_names, cruz.first_names) == (
        ["de", "la"],
        ["Cruz"],
        ["Mar{\\'{i}}a"],
    )
    assert (smith.last_names, smith.lineage_names) == (["Smith"], ["Jr"])
    atlas, nguyen = bib.entries["atlas2025names"].persons["author"]
    assert atlas.last_names == ["{ATLAS Collaboration}"] and not atlas.first_names
    assert (nguyen.last_names, nguyen.first_names) == (["{Nguyen Van}"], ["Anh"])

    ris = {e["accession_number"]: e for e in rispy.loads(body(client.get("/export.ris")))}
    assert ris["arXiv:2503.10001"]["authors"] == [
        "García Márquez, Gabriel",
        "de la Cruz, María",
        "Smith, John, Jr",
    ]
    csl = {item["id"]: item for item in json.loads(body(client.get("/export.csl.json")))}
    assert csl["2503.10002"]["author"] == [
        {"literal": "ATLAS Collaboration"},
        {"family": "Nguyen Van", "given": "Anh"},
    ]

    # A curator renames the first author: the parts no longer spell the name.
    paper = Paper.objects.get(arxiv_id="2503.10001")
    paper.author_list = ["G. G. Márquez", *paper.author_list[1:]]
    paper.save()
    assert paper.parsed_authors[0].family == "Márquez"
    assert paper.parsed_authors[1].family == "Cruz"


# What pdflatex's default setup (OT1 fonts, UTF-8 input) cannot typeset as it
# stands: Greek and symbols outside math, stacked accents, Đ, Vietnamese hooks
# and horns, Polish ogoneks, and scripts TeX has no spelling for (CJK).
BEYOND_LATIN = {
    "2504.00001": (
        "Scaling \N{GREEK SMALL LETTER ALPHA}-nets to \N{INFINITY} with"
        " $x\N{PRIME} \N{LESS-THAN OR EQUAL TO} y$",
        [
            "Nguy\N{LATIN SMALL LETTER E WITH CIRCUMFLEX AND TILDE}n V\u0103n An",
            "Tr\N{LATIN SMALL LETTER A WITH CIRCUMFLEX AND GRAVE}n"
            " Th\N{LATIN SMALL LETTER I WITH DOT BELOW}"
            " Ng\N{LATIN SMALL LETTER O WITH DOT BELOW}c",
        ],
    ),
    "2504.00002": (
        "Zero\u200bwidth marks and Schr\u00f6dinger's \N{PARTIAL DIFFERENTIAL}-operators",
        ["\u0141ukasz Kaiser"],
    ),
    "2504.00003": (
        "Đánh giá mô hình ngôn ngữ lớn ở đâu: ưu thế của tiếng Việt",
        ["Nguyễn Thị Hồng Phượng", "Đặng Văn Ước", "Trương Quốc Bảo", "Przemysław Dębiak"],
    ),
    "2504.00004": ("深度学习的可解释性研究", ["张伟", "李娜"]),
}
# Those typeset only through the @preamble's fallbacks and stand-ins under pdflatex.
NEEDING_THE_PREAMBLE = ("2504.00003", "2504.00004")


@pytest.fixture
def beyond_latin():
    return [
        PaperFactory(arxiv_id=arxiv_id, title=title, authors=authors)
        for arxiv_id, (title, authors) in BEYOND_LATIN.items()
    ]


def test_bibtex_spells_what_pdflatex_cannot_typeset_in_tex(client, beyond_latin):
    library = bibtexparser.parse_string(body(client.get("/export.bib")))
    entries = {entry["eprint"]: entry for entry in library.entries}

    assert not library.failed_blocks
    first, second = entries["2504.00001"], entries["2504.00002"]
    assert first["title"] == (
        "{Scaling {\\ensuremath{\\alpha}}-nets to {\\ensuremath{\\infty}} with"
        " $x{'} {\\ensuremath{\\leq}} y$}"
    )
    assert (
        first["author"]
        == "An, Nguy{\\~{\\^{e}}}n V{\\u{a}}n and Ng{\\d{o}}c, Tr{\\`{\\^{a}}}n Th{\\d{i}}"
    )
    # In titles Latin Extended-A stands as it is; in names every letter beyond
    # ASCII is spelled, one letter to BibTeX; a zero-width space goes.
    assert "{\\L}ukasz" in second["author"] and "\u200b" not in second["title"]
    assert "Schr\u00f6dinger" in second["title"]
    vietnamese, cjk = entries["2504.00003"], entries["2504.00004"]
    # LaTeX's names for what the default fonts lack, which T1 and T5 (vntex) typeset.
    assert vietnamese["title"] == (
        "{{\\DJ}ánh giá mô hình ngôn ng{\\~{\\uhorn}} l{\\'{\\ohorn}}n {\\h{\\ohorn}} {\\dj}âu:"
        " {\\uhorn}u th{\\'{\\^{e}}} c{\\h{u}}a ti{\\'{\\^{e}}}ng Vi{\\d{\\^{e}}}t}"
    )
    assert vietnamese["author"] == (
        "Ph{\\uhorn}{\\d{\\ohorn}}ng, Nguy{\\~{\\^{e}}}n Th{\\d{i}} H{\\`{\\^{o}}}ng"
        " and {\\UHORN}{\\'{\\ohorn}}c, {\\DJ}{\\d{\\u{a}}}ng V{\\u{a}}n"
        " and B{\\h{a}}o, Tr{\\uhorn}{\\ohorn}ng Qu{\\'{\\^{o}}}c"
        " and D{\\k{e}}biak, Przemys{\\l}aw"
    )
    # No TeX spelling: UTF-8 as it is, for XeLaTeX, LuaLaTeX or a CJK-aware document.
    assert cjk["title"] == "{深度学习的可解释性研究}"
    # A name's run of such letters is one letter to BibTeX, which would cut it by bytes.
    assert cjk["author"] == "{\\relax 张伟} and {\\relax 李娜}"
    # One @preamble for the file, which only pdflatex reads (not XeTeX, not LuaTeX).
    (preamble,) = library.preambles
    assert preamble.value.startswith('"\\ifx\\XeTeXversion\\undefined \\ifx\\directlua\\undefined')
    for command in ("DJ", "dj", "h", "ohorn", "uhorn", "UHORN", "k"):
        assert f"\\ifx\\{command}\\undefined" in preamble.value, command
    assert "\\DH" not in preamble.value and "\\guillemotleft" not in preamble.value
    for char in "深度学习的可解释性研究张伟李娜":
        assert f"\\detokenize{{{char}}}" in preamble.value
        assert f"U+{ord(char):04X}" in preamble.value
    assert "\\detokenize{Ł}" not in preamble.value and "\\detokenize{ă}" not in preamble.value


def test_the_paper_pages_citation_carries_the_preamble_it_needs(client, beyond_latin):
    vietnamese, plain = beyond_latin[2], beyond_latin[1]
    page = client.get(vietnamese.get_absolute_url()).content.decode()
    citation = html.unescape(page.split('id="bibtex"', 1)[1].split("</pre>", 1)[0])
    library = bibtexparser.parse_string(citation.split(">", 1)[1])

    assert not library.failed_blocks and len(library.entries) == 1
    (preamble,) = library.preambles
    assert "\\ifx\\ohorn\\undefined" in preamble.value
    assert "@preamble" not in client.get(plain.get_absolute_url()).content.decode()


def test_bibtex_without_such_characters_has_no_preamble(client, awkward):
    library = bibtexparser.parse_string(body(client.get("/export.bib")))

    assert not library.preambles


# The names LaTeX gives Vietnamese letters (T5's, vntex's), which pylatexenc's
# tables lack: a reader that decodes BibTeX's TeX adds them as it would any macro.
T5_LETTERS = {"ohorn": "ơ", "OHORN": "Ơ", "uhorn": "ư", "UHORN": "Ư"}
WALKER_CONTEXT = latexwalker.get_default_latex_context_db()
WALKER_CONTEXT.add_context_category(
    "t5",
    prepend=True,
    macros=[macrospec.MacroSpec("h", "{")] + [macrospec.MacroSpec(name, "") for name in T5_LETTERS],
)
TEXT_CONTEXT = latex2text.get_default_latex_context_db()
TEXT_CONTEXT.add_context_category(
    "t5",
    prepend=True,
    macros=[
        latex2text.MacroTextSpec(
            "h",
            simplify_repl=lambda node, l2tobj: (
                l2tobj.nodelist_to_text([node.nodeargd.argnlist[0]]) + "\u0309"
            ),
        ),
        *(latex2text.MacroTextSpec(name, letter) for name, letter in T5_LETTERS.items()),
    ],
)


class TeXDecoder(latex2text.LatexNodes2Text):
    def __init__(self) -> None:
        super().__init__(latex_context=TEXT_CONTEXT, math_mode="verbatim")

    def latex_to_text(self, latex: str, **kwargs) -> str:
        walker = latexwalker.LatexWalker(latex, latex_context=WALKER_CONTEXT, tolerant_parsing=True)
        nodes, _, _ = walker.get_latex_nodes()
        return unicodedata.normalize("NFC", self.nodelist_to_text(nodes))


def test_bibtex_reads_back_to_the_catalogs_titles_and_names(client, beyond_latin):
    """bibtexparser 2 (decoding its TeX) and pybtex read the same titles and
    names back as the catalog holds: math kept as math, Vietnamese, Polish and
    CJK letter for letter."""
    text = body(client.get("/export.bib"))
    decoder = TeXDecoder()
    library = bibtexparser.parse_string(
        text, append_middleware=[LatexDecodingMiddleware(decoder=decoder)]
    )
    by_id = {entry["eprint"]: entry for entry in library.entries}
    data = pybtex.database.parse_string(text, "bibtex")

    assert not library.failed_blocks
    for arxiv_id, (title, authors) in BEYOND_LATIN.items():
        entry = by_id[arxiv_id]
        if arxiv_id in NEEDING_THE_PREAMBLE:
            assert entry["title"] == title
        names = [
            " ".join(
                decoder.latex_to_text(part).strip("{}")
                for part in person.first_names
                + person.middle_names
                + person.prelast_names
                + person.last_names
            )
            for person in data.entries[entry.key].persons["author"]
        ]
        assert names == authors
    # The one that is not letter for letter: the zero-width space goes, math stays TeX.
    assert by_id["2504.00002"]["title"] == BEYOND_LATIN["2504.00002"][0].replace("\u200b", "")
    assert by_id["2504.00001"]["title"].endswith("with $x{'} {\\ensuremath{\\leq}} y$")


def test_the_paper_page_cites_arxivs_doi(client, awkward):
    page = client.get(awkward[0].get_absolute_url()).content.decode()

    assert '<meta name="citation_doi" content="10.48550/arXiv.2503.00000">' in page


def vntex_missing() -> bool:
    """Whether TeX lacks vntex's T5 encoding (TeX Live's texlive-lang-other)."""
    if shutil.which("kpsewhich") is None:
        return True
    found = subprocess.run(["kpsewhich", "t5enc.def"], capture_output=True, text=True)
    return not found.stdout.strip()


@pytest.mark.slow
@pytest.mark.parametrize(
    "packages",
    [
        # pdflatex's default setup: OT1 fonts, no font or CJK package.
        pytest.param("", id="plain"),
        # A document for Vietnamese: vntex's T5 and T1, T1 the main encoding.
        pytest.param(
            "\\usepackage[T5,T1]{fontenc}",
            id="t5",
            marks=pytest.mark.skipif(
                vntex_missing(), reason="vntex (T5 fonts, texlive-lang-other) is not installed"
            ),
        ),
    ],
)
# plain prints names whole; abbrv cuts given names to their first letter and
# alpha labels entries by the family names' first letters, each a letter to
# BibTeX, which reads bytes: a UTF-8 letter cut in half stops pdflatex.
@pytest.mark.parametrize("style", ["plain", "abbrv", "alpha"])
def test_bibtex_of_awkward_titles_compiles_with_pdflatex_and_bibtex(
    client, awkward, beyond_latin, tmp_path, packages, style
):
    (tmp_path / "refs.bib").write_text(body(client.get("/export.bib")))
    (tmp_path / "paper.tex").write_text(
        f"\\documentclass{{article}}{packages}\\usepackage{{url}}\\begin{{document}}\\nocite{{*}}"
        f"\\bibliographystyle{{{style}}}\\bibliography{{refs}}\\end{{document}}\n"
    )

    def run(*command: str) -> str:
        done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout[-2000:]
        return done.stdout

    latex = ("pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "paper")
    run(*latex)
    assert "error message" not in run("bibtex", "paper")
    run(*latex)
    log = run(*latex)

    assert (tmp_path / "paper.pdf").exists()
    assert "Citation" not in log or "undefined" not in log
    bbl = (tmp_path / "paper.bbl").read_text()
    # Every paper typeset, its percent sign printed rather than a comment.
    assert bbl.count("\\bibitem") == len(AWKWARD_TITLES) + len(BEYOND_LATIN)
    assert "100\\%" in bbl
    # The @preamble went through and nothing was left without a glyph.
    assert "\\ifx\\XeTeXversion\\undefined" in bbl.split("\\bibitem", 1)[0]
    assert "Missing character" not in (tmp_path / "paper.log").read_text(errors="replace")
