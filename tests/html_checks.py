"""Reading served HTML the way a browser would, to find markup that could run code."""

from html.parser import HTMLParser

# Script elements of these types are data a page reads, never run.
DATA_SCRIPT_TYPES = {"application/json", "application/ld+json"}
URL_ATTRIBUTES = {"href", "src", "action", "formaction", "xlink:href", "data"}
RUNNABLE_URL_SCHEMES = ("javascript:", "vbscript:", "data:text/html")
# Elements that load other documents or code, which no page of the site uses.
FOREIGN_ELEMENTS = {"iframe", "object", "embed", "base", "frame", "frameset"}


class LiveMarkupFinder(HTMLParser):
    """Collects what in a page runs code (`runnable`) and the inline styles a
    style-src 'self' policy would block (`inline_styles`)."""

    def __init__(self) -> None:
        super().__init__()
        self.runnable: list[str] = []
        self.inline_styles: list[str] = []
        self._in_inline_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "script" and "src" not in values and values.get("type") not in DATA_SCRIPT_TYPES:
            self._in_inline_script = True
        if tag == "style":
            self.inline_styles.append("<style> element")
        if tag in FOREIGN_ELEMENTS:
            self.runnable.append(f"<{tag}> element")
        for name, value in attrs:
            url = (value or "").strip().lower()
            if name.startswith("on") or (
                name in URL_ATTRIBUTES and url.startswith(RUNNABLE_URL_SCHEMES)
            ):
                self.runnable.append(f"<{tag} {name}={value!r}>")
            if name == "style":
                self.inline_styles.append(f"<{tag} style={value!r}>")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag == "script":
            self._in_inline_script = False

    def handle_data(self, data: str) -> None:
        if self._in_inline_script and data.strip():
            self.runnable.append(f"inline <script>: {data.strip()[:80]}")

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_inline_script = False


def parse(html: str) -> LiveMarkupFinder:
    finder = LiveMarkupFinder()
    finder.feed(html)
    finder.close()
    return finder


def runnable_markup(html: str) -> list[str]:
    """Scripts, event handlers and script URLs: what stored text must never become."""
    return parse(html).runnable


def live_markup(html: str) -> list[str]:
    """Also inline styles: what the site's Content-Security-Policy would block."""
    finder = parse(html)
    return finder.runnable + finder.inline_styles
