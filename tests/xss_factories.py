"""A catalog whose every stored text field carries script payloads.

Each payload, if it ever ran, would set window.__xss and open an alert, which
the browser test watches for; the server-side test looks for the markup itself.
"""

from catalog.models import Summary
from tests.factories import CategoryFactory, PaperFactory, SummaryFactory, TagFactory

RUN = "window.__xss=1;alert(1)"
PAYLOADS = [
    f"<script>{RUN}</script>",
    f'"><script>{RUN}</script>',
    f'\'><img src=x onerror="{RUN}">',
    f'<svg onload="{RUN}"></svg>',
    f'<a href="javascript:{RUN}">click</a>',
    f'<iframe src="javascript:{RUN}"></iframe>',
    f'<body onload="{RUN}">',
    f"</textarea></title><script>{RUN}</script>",
]
HOSTILE_TEXT = " ".join(PAYLOADS)
# Markdown that tries to get a script URL or raw HTML past the renderer.
HOSTILE_MARKDOWN = "\n\n".join(
    [
        "**Bold** survives.",
        f"[a link](javascript:{RUN})",
        f"![an image](javascript:{RUN})",
        f"<javascript:{RUN}>",
        f'<a href="data:text/html,<script>{RUN}</script>">data link</a>',
        f"[ref link][r]\n\n[r]: javascript:{RUN}",
        *PAYLOADS,
    ]
)


def hostile_catalog() -> dict:
    """A tag, a category and a paper with payloads in every field a reader sees."""
    tag = TagFactory(name=f"tag{PAYLOADS[0]}"[:100], slug="hostile-tag", description=HOSTILE_TEXT)
    category = CategoryFactory(code="cs.XSS", name=HOSTILE_TEXT[:200])
    paper = PaperFactory(
        title=f"Title {HOSTILE_TEXT}",
        abstract=f"Abstract {HOSTILE_TEXT}",
        comment=f"Comment {HOSTILE_TEXT}",
        journal_ref=f"Journal {PAYLOADS[2]}",
        doi=f'10.1/x"{PAYLOADS[3]}'[:200],
        authors=[f"Author {payload}"[:300] for payload in PAYLOADS],
        tags=[tag],
        categories=[category],
        primary_category=category,
    )
    for language, kind in (("en", Summary.Kind.SUMMARY), ("ko", Summary.Kind.TAKEAWAYS)):
        SummaryFactory(
            paper=paper,
            language=language,
            kind=kind,
            body=HOSTILE_MARKDOWN,
            written_by=PAYLOADS[1],
            model_name=PAYLOADS[2][:200],
            status=Summary.Status.PUBLISHED,
        )
    return {"tag": tag, "category": category, "paper": paper}
