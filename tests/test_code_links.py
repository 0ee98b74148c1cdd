import pytest

from catalog.code_links import extract_code_urls


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
