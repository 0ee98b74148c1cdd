"""BibTeX entries that parse and typeset: the paper page's citation and the lists' exports.

arXiv's titles are LaTeX source ("$\\mathcal{O}(n)$ verifiers"), so a title is
kept as TeX, with what would break a document made safe: `%` (a comment that
swallows the rest of the entry), `&`, `#` and, outside math, `_` and `^` are
escaped; an unclosed `$` is escaped; braces that do not pair are dropped while
those that do stay (`\\emph{x}` keeps its argument); a trailing backslash goes;
and commands that read or write files or define macros (`\\input`, `\\write`,
`\\def`...) lose their backslash, so `\\input{...}` is printed, never run.
Characters past Latin-1 and Latin Extended-A, which pdflatex's default setup
cannot typeset, are spelled in TeX where TeX has a spelling: letters with
stacked accents by LaTeX's accent commands (Nguyễn: `Nguy{\\~{\\^{e}}}n`), Greek
and mathematical symbols as math (`\\ensuremath{\\alpha}`, pylatexenc's table).
Names are written "von Last, Jr., First" from their parts (catalog.names), a
group's name braced whole so that BibTeX never abbreviates it.
"""

import re
import unicodedata

from pylatexenc.latexencode import UnicodeToLatexEncoder

from catalog.models import Paper
from catalog.names import Name, key_word

MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
# TeX primitives and LaTeX commands that touch files, the terminal or definitions.
UNSAFE_COMMANDS = frozenset(
    {
        "input", "include", "includeonly", "InputIfFileExists", "openin", "openout", "read",
        "readline", "write", "immediate", "special", "def", "edef", "gdef", "xdef", "let",
        "futurelet", "catcode", "csname", "endcsname", "newcommand", "renewcommand",
        "providecommand", "DeclareRobustCommand", "newenvironment", "renewenvironment",
        "usepackage", "RequirePackage", "documentclass", "begin", "end", "makeatletter",
        "makeatother", "expandafter", "noexpand", "uppercase", "lowercase", "scantokens",
        "jobname", "shipout", "output", "everypar", "everymath", "errmessage", "message",
        "typeout", "typein", "endinput", "bye", "dump",
    }
)  # fmt: skip
COMMAND = re.compile(r"\\([A-Za-z@]+)")
# LaTeX's accent commands, which its default font encoding has, by combining mark.
ACCENTS = {
    "\u0300": "`", "\u0301": "'", "\u0302": "^", "\u0303": "~", "\u0304": "=",
    "\u0306": "u", "\u0307": ".", "\u0308": '"', "\u030a": "r", "\u030b": "H",
    "\u030c": "v", "\u0323": "d", "\u0327": "c", "\u0328": "k",
}  # fmt: skip
TO_LATEX = UnicodeToLatexEncoder(
    non_ascii_only=True,
    replacement_latex_protection="braces-all",
    unknown_char_policy="keep",
    unknown_char_warning=False,
)


def typesettable(char: str) -> str:
    """A character pdflatex typesets as it stands, or its TeX spelling when it
    has one (see above); else the character."""
    if char.isascii() or "\u00a0" <= char <= "\u017f":
        return char
    if unicodedata.category(char) == "Cf":
        return ""  # zero-width and direction marks: nothing to print
    decomposed = unicodedata.normalize("NFD", char)
    base, marks = decomposed[0], decomposed[1:]
    if base.isascii() and marks and all(mark in ACCENTS for mark in marks):
        for mark in marks:
            base = f"\\{ACCENTS[mark]}{{{base}}}"
        # Braced whole: one letter to BibTeX, which abbreviates and sorts names by letters.
        return "{" + base + "}"
    # Math, or plain ASCII (a prime is '); other spellings may need a font encoding.
    spelled = TO_LATEX.unicode_to_latex(char)
    plain = spelled.isascii() and "\\" not in spelled
    return spelled if "\\ensuremath" in spelled or plain else char


def _paired_braces(text: str) -> str:
    """The text with every brace that has no partner dropped (escaped ones kept)."""
    unmatched: set[int] = set()
    opened: list[int] = []
    position = 0
    while position < len(text):
        char = text[position]
        if char == "\\":
            position += 2  # \{ and \} are characters, not groups
            continue
        if char == "{":
            opened.append(position)
        elif char == "}":
            if opened:
                opened.pop()
            else:
                unmatched.add(position)
        position += 1
    unmatched.update(opened)
    return "".join(char for index, char in enumerate(text) if index not in unmatched)


def _unescaped(text: str, char: str) -> list[int]:
    positions, position = [], 0
    while position < len(text):
        if text[position] == "\\":
            position += 2
            continue
        if text[position] == char:
            positions.append(position)
        position += 1
    return positions


def tex_value(text: str) -> str:
    """A field's value as TeX that compiles and as BibTeX that parses (see above)."""
    text = " ".join(text.replace("\\\\", " ").split())
    text = COMMAND.sub(
        lambda match: match.group(1) if match.group(1) in UNSAFE_COMMANDS else match.group(0),
        text,
    )
    if text.endswith("\\") and not text.endswith("\\\\"):
        text = text[:-1].rstrip()
    dollars = _unescaped(text, "$")
    escape_dollars = len(dollars) % 2 == 1
    out: list[str] = []
    in_math = False
    position = 0
    while position < len(text):
        char = text[position]
        if char == "\\":
            out.append(text[position : position + 2])
            position += 2
            continue
        if char == "$":
            if escape_dollars:
                out.append("\\$")
            else:
                in_math = not in_math
                out.append(char)
        elif char in "%&#":
            out.append("\\" + char)
        elif char == "_" and not in_math:
            out.append("\\_")
        elif char == "^" and not in_math:
            out.append("\\^{}")
        else:
            out.append(char)
        position += 1
    return "".join(map(typesettable, " ".join(_paired_braces("".join(out)).split())))


def verbatim_value(text: str) -> str:
    """A DOI as styles print it, verbatim (a link): no TeX escapes, but nothing
    that could end the field or the entry."""
    return re.sub(r"[\s{}\\%]", "", text)


def bibtex_name(name: Name) -> str:
    if name.literal:
        return "{" + tex_value(name.literal) + "}"
    family = tex_value(name.family_with_particle)
    # A family name of several words ("Fei Fei") is one name to BibTeX only in braces.
    if " " in name.family:
        family = (f"{name.particle} " if name.particle else "") + "{" + tex_value(name.family) + "}"
    if name.suffix:
        return f"{family}, {tex_value(name.suffix)}, {tex_value(name.given)}"
    return f"{family}, {tex_value(name.given)}" if name.given else family


def bibtex_key(paper: Paper) -> str:
    """First author's family name, year and first word of the title: "smith2025learning"."""
    year = paper.cited_date.moment.year
    authors = paper.parsed_authors
    first_author = key_word(authors[0]) if authors else ""
    first_word = next(iter(re.findall(r"[A-Za-z]{3,}", paper.title)), "paper")
    key = re.sub(r"[^A-Za-z0-9]", "", f"{first_author}{year}{first_word}").lower()
    return key or "paper"


def bibtex(paper: Paper, *, key: str | None = None) -> str:
    """One BibTeX entry; needs primary_category fetched."""
    names = paper.parsed_authors
    fields: list[tuple[str, str]] = [
        ("title", "{{" + tex_value(paper.title) + "}}"),
        ("author", "{" + " and ".join(bibtex_name(name) for name in names) + "}"),
    ]
    cited = paper.cited_date
    fields.append(("year", str(cited.moment.year)))
    if cited.by_month:
        # A month macro, unbraced: styles print it in their own language and form.
        fields.append(("month", MONTHS[cited.moment.month - 1]))
    if paper.arxiv_id:
        fields += [
            ("eprint", "{" + paper.arxiv_id + "}"),
            ("archivePrefix", "{arXiv}"),
            ("url", "{" + paper.abs_url + "}"),
        ]
        if paper.primary_category is not None:
            fields.append(("primaryClass", "{" + paper.primary_category.code + "}"))
    elif paper.source_url:
        fields.append(("url", "{" + verbatim_value(paper.source_url) + "}"))
    if paper.journal_ref:
        fields.append(("journal", "{" + tex_value(paper.journal_ref) + "}"))
    if paper.citation_doi:
        fields.append(("doi", "{" + verbatim_value(paper.citation_doi) + "}"))
    body = ",\n".join(f"  {name} = {value}" for name, value in fields if value.strip("{}"))
    entry = "article" if paper.journal_ref else "misc"
    return f"@{entry}{{{key or bibtex_key(paper)},\n{body}\n}}"
