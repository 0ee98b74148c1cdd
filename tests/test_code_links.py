import pytest

from bench.code_links import load, score
from ingest.code_links import FoundLink, extract_code_urls, find_code_links


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Sentences as arXiv abstracts and comments write them.
        (
            "Code is at: https://github.com/kaiwenzha/rl-tango.",
            ["https://github.com/kaiwenzha/rl-tango"],
        ),
        (
            "Our code is available at https://github.com/billhhh/KRPO_LLMs_RL.",
            ["https://github.com/billhhh/KRPO_LLMs_RL"],
        ),
        ("project page: https://emu.world", ["https://emu.world"]),
        (
            "please visit our project website: https://strefer.github.io/",
            ["https://strefer.github.io"],
        ),
        ("Our model is available here: http://ouro-llm.github.io.", ["https://ouro-llm.github.io"]),
        (
            "Our code is open-source at https://anonymous.4open.science/r/Diffuse-Thinking-EC60.",
            ["https://anonymous.4open.science/r/Diffuse-Thinking-EC60"],
        ),
        ("See https://bar.com/project, and more.", ["https://bar.com/project"]),
        # Trailing punctuation.
        ("(code: https://github.com/a/b)", ["https://github.com/a/b"]),
        ("(code: https://github.com/a/b).", ["https://github.com/a/b"]),
        ("[https://github.com/a/b]", ["https://github.com/a/b"]),
        ("see https://github.com/a/b; and", ["https://github.com/a/b"]),
        ("see https://github.com/a/b, and", ["https://github.com/a/b"]),
        ("is it https://github.com/a/b?", ["https://github.com/a/b"]),
        ("**https://github.com/a/b**", ["https://github.com/a/b"]),
        ("[code](https://github.com/a/b)", ["https://github.com/a/b"]),
        ("'https://github.com/a/b'", ["https://github.com/a/b"]),
        ('"https://github.com/a/b"', ["https://github.com/a/b"]),
        # A ")" the link itself opened stays.
        ("see https://foo.org/wiki/Bar_(baz).", ["https://foo.org/wiki/Bar_(baz)"]),
        ("(see https://foo.org/wiki/Bar_(baz))", ["https://foo.org/wiki/Bar_(baz)"]),
        # Normalisation: .git, trailing slash, scheme, host case.
        ("git clone https://github.com/a/b.git", ["https://github.com/a/b"]),
        ("https://github.com/a/b.git/", ["https://github.com/a/b"]),
        ("https://github.com/a/b/", ["https://github.com/a/b"]),
        ("http://github.com/a/b", ["https://github.com/a/b"]),
        ("HTTPS://GitHub.COM/Owner/Repo", ["https://github.com/Owner/Repo"]),
        ("https://GitLab.com/group/sub/project", ["https://gitlab.com/group/sub/project"]),
        ("https://www.github.com/a/b", ["https://github.com/a/b"]),
        ("https://www.example.org/project/", ["https://www.example.org/project"]),
        ("https://github.com/a/b/tree/main/src", ["https://github.com/a/b/tree/main/src"]),
        ("https://example.org/demo?lang=en#top", ["https://example.org/demo?lang=en#top"]),
        ("https://example.org:8443/demo", ["https://example.org:8443/demo"]),
        # Code hosts written without a scheme.
        ("Code: github.com/a/b.", ["https://github.com/a/b"]),
        ("Code: www.github.com/a/b", ["https://github.com/a/b"]),
        # Hugging Face repositories of every kind.
        ("Model: https://huggingface.co/org/model-7B.", ["https://huggingface.co/org/model-7B"]),
        ("https://huggingface.co/datasets/org/data", ["https://huggingface.co/datasets/org/data"]),
        ("Demo: https://huggingface.co/spaces/org/app", ["https://huggingface.co/spaces/org/app"]),
        # LaTeX as arXiv gives it.
        ("\\url{https://github.com/a/b}", ["https://github.com/a/b"]),
        (
            "available at \\href{https://github.com/georgao35/MARGE}{this link}.",
            ["https://github.com/georgao35/MARGE"],
        ),
        (
            "at our \\href{https://github.com/nik-hz/tempobench}{GitHub repository}.",
            ["https://github.com/nik-hz/tempobench"],
        ),
        (
            "\\href{https://github.com/ybwang119/Awesome}{https://github.com/ybwang119/Awesome}.",
            ["https://github.com/ybwang119/Awesome"],
        ),
        ("https://github.com/a/b\\_c", ["https://github.com/a/b_c"]),
        ("\\url{https://github.com/a/b\\_c\\_d}", ["https://github.com/a/b_c_d"]),
        ("https://example.org/\\~{}user/tool", ["https://example.org/~user/tool"]),
        ("https://example.org/\\textasciitilde user", ["https://example.org/~user"]),
        # A link run into Chinese text or full-width punctuation ends there.
        (
            "代码将发布在https://github.com/coder-gx/VCORE上。",
            ["https://github.com/coder-gx/VCORE"],
        ),
        ("相关代码可访问：https://github.com/a/b。", ["https://github.com/a/b"]),  # noqa: RUF001
        # \\href labels of any shape are dropped; only the target counts.
        (
            "Code is available \\href{https://github.com/a/b}{\\textcolor{blue}{here}}.",
            ["https://github.com/a/b"],
        ),
        (
            "\\href{https://a.github.io/p/}{\\texttt{a.github.io/p/}}",
            ["https://a.github.io/p"],
        ),
        ("Our website: \\href{https://a.github.io/site/}{Site.com}.", ["https://a.github.io/site"]),
        ("The code\\footnote{https://github.com/a/b} is public.", ["https://github.com/a/b"]),
        ("\\footnote{Code available at https://github.com/a/b.}", ["https://github.com/a/b"]),
        ("available at \\textcolor{blue}https://github.com/a/b.", ["https://github.com/a/b"]),
        # Footnote and affiliation marks run into the link.
        ("Code: https://github.com/a/b$^1$.", ["https://github.com/a/b"]),
        ("Code: https://github.com/a/b$^{\\dagger}$", ["https://github.com/a/b"]),
        ("Code: https://github.com/a/b^{*}, data below", ["https://github.com/a/b"]),
        # A line break inside the link, as the authors' source wraps it.
        ("Code: https://github.com/\nowner/repo.", ["https://github.com/owner/repo"]),
        (
            "Code: https://github.com/owner/long-\nname and more",
            ["https://github.com/owner/long-name"],
        ),
        ("Code: https://github.com/owner/long_\n  name.", ["https://github.com/owner/long_name"]),
        ("Code: https://github.\ncom/owner/repo", ["https://github.com/owner/repo"]),
        # ... but not across a line that starts the next sentence or word.
        (
            "Code: https://github.com/owner/repo.\nWe also show",
            ["https://github.com/owner/repo"],
        ),
        ("Code: https://github.com/owner/repo\nand more", ["https://github.com/owner/repo"]),
        # Written without a scheme, or with a space in it.
        ("Project Page: abhinav.github.io/GIST/.", ["https://abhinav.github.io/GIST"]),
        ("See www.example.org/tool.", ["https://www.example.org/tool"]),
        ("available at https: //lab.github.io/data/", ["https://lab.github.io/data"]),
        # Several links, deduplicated, in order of appearance.
        (
            "Code: https://github.com/b/two. Page: https://a.org/one. Again https://github.com/b/two/",
            ["https://github.com/b/two", "https://a.org/one"],
        ),
        (
            "https://github.com/a/b and http://github.com/a/b.git",
            ["https://github.com/a/b"],
        ),
        # Not code links.
        ("Extends https://arxiv.org/abs/2505.15034.", []),
        ("Extends arXiv:2505.15034 (https://export.arxiv.org/abs/2505.15034)", []),
        ("Published version: https://doi.org/10.1145/1234.5678", []),
        ("OpenReview: https://openreview.net/forum?id=XwQ7dc4bqn", []),
        ("Full version at http://www.lab.edu/~me/paper.ps.gz", []),
        ("Slides: https://lab.example/talk.pdf", []),
        ("https://dx.doi.org/10.1145/1234.5678", []),
        ("https://huggingface.co/papers/2505.15034", []),
        ("Hosted on https://github.com/.", []),
        ("Hosted on github.com", []),
        ("no links at all", []),
        ("", []),
        ("https://", []),
        ("https://localhost/x", []),
        ("https://example.org:notaport/x", []),
        ("mail the-author@github.com/a for access", []),
    ],
)
def test_extract_code_urls(text, expected):
    assert extract_code_urls(text) == expected


def test_an_abstract_from_a_digest_page():
    abstract = (
        "Emu3.5 demonstrates superior results on a suite of interleaved generation tasks. "
        "We open-source Emu3.5 at https://github.com/baaivision/Emu3.5"
    )

    assert extract_code_urls(abstract) == ["https://github.com/baaivision/Emu3.5"]


def official(abstract: str, comment: str = "") -> str | None:
    links = find_code_links(abstract=abstract, comment=comment)
    assert sum(link.official for link in links) <= 1
    return next((link.url for link in links if link.official), None)


@pytest.mark.parametrize(
    ("abstract", "comment", "expected"),
    [
        ("Our code is available at https://github.com/a/b.", "", "https://github.com/a/b"),
        ("We release the data at https://lab.example/data.", "", "https://lab.example/data"),
        # The repository over a project page, wherever each is.
        (
            "Project page: https://a.github.io/p. Code: https://github.com/a/p.",
            "",
            "https://github.com/a/p",
        ),
        ("", "Project page: https://a.github.io/p", "https://a.github.io/p"),
        # A link standing alone in the comment, or as a sentence of its own.
        ("", "Accepted to CVPR 2026, https://site.example", "https://site.example"),
        ("We show results. https://a.github.io/p/", "", "https://a.github.io/p"),
        # Others' work mentioned in passing is never official.
        (
            "Our method ranks 1st on the \\href{https://huggingface.co/spaces/x/board}{leaderboard}.",
            "",
            None,
        ),
        ("We build on LLaVA (https://github.com/haotian-liu/LLaVA).", "", None),
        ("Baselines such as https://github.com/x/y are compared.", "", None),
        ("", "Demo video: https://youtu.be/abc", None),
        ("", "Published here: https://workshop.example/accepted.html", None),
        ("Earlier preprint on Zenodo: https://zenodo.org/records/1", "", None),
    ],
)
def test_the_official_link_is_one_the_text_presents_as_the_authors(abstract, comment, expected):
    assert official(abstract, comment) == expected


def test_each_link_is_given_once_with_where_it_was_found():
    links = find_code_links(
        abstract="Code: https://github.com/a/b. Video: https://youtu.be/x",
        comment="Code: https://github.com/a/b/; data: https://huggingface.co/datasets/a/d",
    )

    assert links == [
        FoundLink("https://github.com/a/b", "abstract", True),
        FoundLink("https://youtu.be/x", "abstract", False),
        FoundLink("https://huggingface.co/datasets/a/d", "comment", False),
    ]


def test_the_labelled_set_meets_its_targets():
    """Real abstracts and comments labelled by hand (bench/code_links.py reports the figures)."""
    entries = load()
    total, _ = score(entries)

    assert total.entries >= 300
    assert total.official_precision == 1.0
    assert total.link_recall >= 0.95
