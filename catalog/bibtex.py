"""BibTeX entries that parse and typeset: the paper page's citation and the lists' exports.

arXiv's titles are LaTeX source ("$\\mathcal{O}(n)$ verifiers"), so a title is
kept as TeX, with what would break a document made safe: `%` (a comment that
swallows the rest of the entry), `&`, `#` and, outside math, `_` and `^` are
escaped; an unclosed `$` is escaped; braces that do not pair are dropped while
those that do stay (`\\emph{x}` keeps its argument); a trailing backslash goes;
and commands that read or write files or define macros (`\\input`, `\\write`,
`\\def`...) lose their backslash, so `\\input{...}` is printed, never run.
Characters pdflatex's default setup (OT1 fonts, UTF-8 input) cannot typeset
are spelled in TeX where TeX has a spelling: letters with stacked accents by
LaTeX's accent commands (Nguyễn: `Nguy{\\~{\\^{e}}}n`), Vietnamese hooks and
horns, Đ, Þ, Ŋ and the ogonek by their LaTeX names (`{\\h{\\ohorn}}`, `{\\DJ}`),
Greek and mathematical symbols as math (`\\ensuremath{\\alpha}`, pylatexenc's
table); what has no spelling (CJK, other scripts) stays UTF-8. A file that
needs it gets one `@preamble` (see `preamble`) that gives pdflatex fallbacks.
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
# Vietnamese: the hook above and the horned letters, by vntex's (T5's) names.
HOOK_ABOVE = "\u0309"
HORN = "\u031b"
HORNED = {"o": "\\ohorn", "O": "\\OHORN", "u": "\\uhorn", "U": "\\UHORN"}
# LaTeX's accent commands by combining mark; \\k (ogonek) and \\h (hook above)
# are T1's and T5's, which pdflatex's default encoding lacks (see FALLBACKS).
ACCENTS = {
    "\u0300": "`", "\u0301": "'", "\u0302": "^", "\u0303": "~", "\u0304": "=",
    "\u0306": "u", "\u0307": ".", "\u0308": '"', "\u030a": "r", "\u030b": "H",
    "\u030c": "v", "\u0323": "d", "\u0327": "c", "\u0328": "k", HOOK_ABOVE: "h",
}  # fmt: skip
# Letters T1 has a name for and OT1 (pdflatex's default) has no glyph for.
NAMED_LETTERS = {
    "\u0110": "\\DJ", "\u0111": "\\dj", "\u00d0": "\\DH", "\u00f0": "\\dh",
    "\u00de": "\\TH", "\u00fe": "\\th", "\u014a": "\\NG", "\u014b": "\\ng",
    "\u00ab": "\\guillemotleft", "\u00bb": "\\guillemotright", "\u0127": "\\ensuremath{\\hbar}",
}  # fmt: skip
# Latin-1 and Latin Extended-A characters that pdflatex's default setup does
# not typeset as they stand (compiled one by one with TeX Live 2022): the rest
# of both blocks stays UTF-8.
NOT_IN_DEFAULT_FONTS = frozenset("«»ÐÞðþĄąĐđĘęĦħĮįĸĿŀŉŊŋŦŧŲųſ")
TO_LATEX = UnicodeToLatexEncoder(
    non_ascii_only=True,
    replacement_latex_protection="braces-all",
    unknown_char_policy="keep",
    unknown_char_warning=False,
)


# Why a @preamble: the spellings above are LaTeX's standard names, so a document
# that loads T1 or T5 (vntex) typesets them with their real glyphs, and a
# XeLaTeX or LuaLaTeX document reads the UTF-8 kept for CJK and other scripts
# with its own fonts. pdflatex's default setup has neither: it stops at `\DJ`
# ("unavailable in encoding OT1"), at `\h` (undefined) and at 张 ("not set up
# for use with LaTeX"). So a file that uses any of them gets one @preamble that
# gives each command used a fallback where the document has not defined it (a
# text command's default, which an encoding's own definition overrides: T1's
# \DJ, T5's \h): under pdflatex one drawn from the default fonts, under XeTeX
# and LuaTeX the Unicode character (UNICODE_FALLBACKS). Under pdflatex only, it
# gives each character with no spelling a visible stand-in (its code point in a
# box) where no loaded encoding or package has declared it; XeTeX and LuaTeX
# are left to typeset it. BibTeX copies it to the top of the .bbl, read after
# \begin{document}, so it defines by \gdef, never by the preamble-only
# \DeclareTextCommand or \DeclareUnicodeCharacter.
# Command: (arguments, fallback under pdflatex).
FALLBACKS = {
    "DJ": ("", r"\leavevmode\hbox{\setbox0\hbox{D}\rlap{\kern-.02em\raise.42\ht0"
               r"\hbox{\vrule height.055em width.3em}}\box0}"),
    "dj": ("", r"\leavevmode\hbox{\setbox0\hbox{d}\rlap{\kern.5\wd0\raise.8\ht0"
               r"\hbox{\vrule height.045em width.3em}}\box0}"),
    "DH": ("", r"\DJ"),
    "dh": ("", r"\dj"),
    "TH": ("", "Th"),
    "th": ("", "th"),
    "NG": ("", "Ng"),
    "ng": ("", "ng"),
    "guillemotleft": ("", r"\leavevmode\raise.3ex\hbox{$\scriptscriptstyle\ll$}"),
    "guillemotright": ("", r"\leavevmode\raise.3ex\hbox{$\scriptscriptstyle\gg$}"),
    "k": ("#1", r"\leavevmode\hbox{\ooalign{#1\crcr\hidewidth\char24\kern-.05em}}"),
    "h": ("#1", r"\leavevmode\hbox{\setbox0\hbox{#1}\ooalign{\copy0\crcr\hidewidth"
                r"\raise\ht0\hbox{\kern.1em$\scriptscriptstyle?$}\hidewidth}}"),
    "ohorn": ("", r"\leavevmode\hbox{o\kern-.1em\lower.45ex\hbox{'}}"),
    "uhorn": ("", r"\leavevmode\hbox{u\kern-.1em\lower.45ex\hbox{'}}"),
    "OHORN": ("", r"\leavevmode\hbox{O\kern-.12em\raise.1ex\hbox{'}}"),
    "UHORN": ("", r"\leavevmode\hbox{U\kern-.12em\raise.1ex\hbox{'}}"),
}  # fmt: skip
# A character and the combining marks after it, which NFC left uncomposed ("v\u0301").
CLUSTER = re.compile(r"(?s).[\u0300-\u036f]*")
# XeTeX's and LuaTeX's Unicode encoding (TU) has \\DJ, \\k and the rest but not T5's
# hook and horn commands: there they fall back on the Unicode characters (by
# decimal code: a double quote would end the @preamble's string); CJK and
# other scripts are left to the document's fonts.
UNICODE_FALLBACKS = {
    "h": ("#1", rf"#1\char{0x0309}"),
    "ohorn": ("", rf"\char{0x01A1}"),
    "OHORN": ("", rf"\char{0x01A0}"),
    "uhorn": ("", rf"\char{0x01B0}"),
    "UHORN": ("", rf"\char{0x01AF}"),
}
FALLBACK_COMMAND = re.compile(r"\\(" + "|".join(FALLBACKS) + r")(?![A-Za-z])")


def _kept_as_utf8(char: str) -> bool:
    """A character the file keeps as UTF-8 that pdflatex's default setup has no glyph for."""
    if char.isascii():
        return False
    return not ("\u00a0" <= char <= "\u017f") or char in NOT_IN_DEFAULT_FONTS


def needs(text: str) -> set[str]:
    """What in `text` the @preamble must provide for: the commands it gives
    fallbacks (as `\\name`) and the characters it gives stand-ins."""
    used = {"\\" + name for name in FALLBACK_COMMAND.findall(text)}
    # \DH and \dh fall back on \DJ's and \dj's stroke.
    used |= {"\\DJ" for name in used if name == "\\DH"} | {
        "\\dj" for name in used if name == "\\dh"
    }
    return used | {char for char in text if _kept_as_utf8(char)}


def preamble(needed: set[str]) -> str:
    """The @preamble a .bib file needs to compile under pdflatex's default
    setup (see FALLBACKS), given its `needs`; "" if it needs none."""
    if not needed:
        return ""

    def provide(name: str, arguments: str, fallback: str) -> str:
        default = rf"\csname ?\string\{name}\endcsname"
        return (
            rf"\ifx\{name}\undefined \gdef\{name}{arguments}{{{fallback}}}"
            rf"\else \expandafter\ifx{default}\relax"
            rf" \expandafter\gdef{default}{arguments}{{{fallback}}}\fi \fi"
        )

    pdftex = [provide(name, *FALLBACKS[name]) for name in FALLBACKS if "\\" + name in needed]
    for char in sorted(need for need in needed if len(need) == 1):
        name = rf"\csname u8:\detokenize{{{char}}}\endcsname"
        stand_in = rf"\mbox{{\fboxsep.5pt\fbox{{\tiny U+{ord(char):04X}}}}}"
        pdftex.append(rf"\expandafter\ifx{name}\relax \expandafter\gdef{name}{{{stand_in}}}\fi")
    # XeTeX and LuaTeX: the T5 commands as Unicode characters (a fontspec
    # document's TU fonts have them); the rest as under pdflatex, for a
    # document left in OT1 (TU's own definitions win over these defaults).
    unicode = " ".join(
        provide(name, *UNICODE_FALLBACKS.get(name, FALLBACKS[name]))
        for name in FALLBACKS
        if "\\" + name in needed
    )
    return (
        r'@preamble{"\ifx\XeTeXversion\undefined \ifx\directlua\undefined '
        + " ".join(pdftex)
        + rf' \else {unicode} \fi \else {unicode} \fi"}}'
    )


def typesettable(char: str, *, spell_letters: bool = False) -> str:
    """A character (with the combining marks that follow it, if any) as
    pdflatex typesets it as it stands, or its TeX spelling when it has one
    (see above); else as it is. spell_letters: every letter beyond ASCII
    spelled in TeX where it can be, for names (bibtex_name)."""
    if len(char) == 1 and (char.isascii() or not (spell_letters or _kept_as_utf8(char))):
        return char
    if unicodedata.category(char[0]) == "Cf":
        return ""  # zero-width and direction marks: nothing to print
    if char in NAMED_LETTERS:
        return "{" + NAMED_LETTERS[char] + "}"
    decomposed = unicodedata.normalize("NFD", char)
    base, marks = decomposed[0], decomposed[1:]
    if base in HORNED and marks[:1] == HORN:
        base, marks = HORNED[base], marks[1:]
    spellable = base.isascii() or base in HORNED.values()
    if spellable and base != decomposed and all(mark in ACCENTS for mark in marks):
        # Marks above first, then those below outermost (\\d{\\u{a}}, as vntex spells ặ).
        for mark in sorted(marks, key=lambda mark: unicodedata.combining(mark) < 230):
            base = f"\\{ACCENTS[mark]}{{{base}}}"
        # Braced whole: one letter to BibTeX, which abbreviates and sorts names by letters.
        return "{" + base + "}"
    # Math, or plain ASCII (a prime is '); other spellings may need a font
    # encoding, but Latin-1's and Latin Extended-A's own (\\L, \\o, \\ss) are OT1's.
    spelled = TO_LATEX.unicode_to_latex(char)
    plain = spelled.isascii() and "\\" not in spelled
    in_default_fonts = spell_letters and not _kept_as_utf8(char) and spelled.isascii()
    return spelled if "\\ensuremath" in spelled or plain or in_default_fonts else char


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


def tex_value(text: str, *, spell_letters: bool = False) -> str:
    """A field's value as TeX that compiles and as BibTeX that parses (see
    above); spell_letters as typesettable's."""
    text = " ".join(unicodedata.normalize("NFC", text).replace("\\\\", " ").split())
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
    text = " ".join(_paired_braces("".join(out)).split())
    return "".join(
        typesettable(cluster.group(0), spell_letters=spell_letters)
        for cluster in CLUSTER.finditer(text)
    )


def verbatim_value(text: str) -> str:
    """A DOI as styles print it, verbatim (a link): no TeX escapes, but nothing
    that could end the field or the entry."""
    return re.sub(r"[\s{}\\%]", "", text)


def _one_letter(text: str) -> str:
    """Each run of letters in `text` with no TeX spelling (CJK, Cyrillic) as
    one of BibTeX's special characters: a brace group opening with a command."""
    out: list[str] = []
    run: list[str] = []
    for char in text + " ":
        if _kept_as_utf8(char) and unicodedata.category(char).startswith("L"):
            run.append(char)
            continue
        if run:
            out.append("{\\relax " + "".join(run) + "}")
            run = []
        out.append(char)
    return "".join(out)[:-1]


def bibtex_name(name: Name) -> str:
    """The name in BibTeX's "family, suffix, given" form, every letter beyond
    ASCII spelled in TeX and braced, and each run of letters with no spelling
    braced as one letter ({\\relax 张伟}): BibTeX reads a name by bytes, and a
    style that abbreviates given names ("Ł." for Łukasz, abbrv's) or labels
    entries by family names (alpha's) cut a UTF-8 letter in half, which stopped
    pdflatex; a braced spelling ({\\L}) is one letter to it."""

    def spelled(text: str) -> str:
        return _one_letter(tex_value(text, spell_letters=True))

    if name.literal:
        literal = spelled(name.literal)
        # One special character is one name already; braced again it would not be special.
        whole = literal.startswith("{\\relax ") and literal.count("{") == 1
        return literal if whole else "{" + literal + "}"
    family = spelled(name.family_with_particle)
    # A family name of several words ("Fei Fei") is one name to BibTeX only in braces.
    if " " in name.family:
        family = (f"{name.particle} " if name.particle else "") + "{" + spelled(name.family) + "}"
    if name.suffix:
        return f"{family}, {spelled(name.suffix)}, {spelled(name.given)}"
    return f"{family}, {spelled(name.given)}" if name.given else family


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


def bibtex_with_preamble(paper: Paper) -> str:
    """One entry as a file of its own (the paper page's), with the @preamble it needs."""
    entry = bibtex(paper)
    needed = preamble(needs(entry))
    return f"{entry}\n{needed}" if needed else entry
