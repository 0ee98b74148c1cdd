"""docs/configuration.md has one entry for every environment variable the project
reads, and none for a variable nothing reads; a value that cannot be right stops
the settings from loading, with the variable named."""

import ast
import os
import re
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parent.parent
SETTINGS = PROJECT / "config" / "settings.py"
PAGE = PROJECT / "docs" / "configuration.md"
SUITE_SECTION = "For the suite and the benchmarks"
FIXED_SECTION = "Fixed in the code"
# The system's own, which the suite passes on to the processes it starts.
SYSTEM = {"PATH", "HOME", "LANG", "TMPDIR"}
ENTRY = re.compile(r"^\| `([A-Z][A-Z0-9_]*)` \|", re.MULTILINE)
TEMPLATE_VARIABLE = re.compile(r"\$\{([A-Z][A-Z0-9_]*)\}")


def site_files() -> list[Path]:
    """The project's own Python: the packages of the import contract, and manage.py."""
    pyproject = tomllib.loads((PROJECT / "pyproject.toml").read_text())
    packages = pyproject["tool"]["importlinter"]["root_packages"]
    files = [PROJECT / "manage.py"]
    for package in packages:
        files += sorted((PROJECT / package).rglob("*.py"))
    return files


def literal(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def os_environ_reads(tree: ast.AST) -> set[str]:
    """Names read with os.environ.get, os.getenv or os.environ[...] (setdefault is a write)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args and isinstance(node.func, ast.Attribute):
            owner, name = ast.unparse(node.func.value), literal(node.args[0])
            if name and (
                (owner == "os.environ" and node.func.attr == "get")
                or (owner == "os" and node.func.attr == "getenv")
            ):
                names.add(name)
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.ctx, ast.Load)
            and ast.unparse(node.value) == "os.environ"
            and literal(node.slice)
        ):
            names.add(literal(node.slice))
    return names


def env_call(node: ast.AST, readers: set[str]) -> bool:
    """A call of env, env.<cast> or one of the settings' own readers."""
    if not isinstance(node, ast.Call):
        return False
    function = node.func
    if isinstance(function, ast.Attribute) and isinstance(function.value, ast.Name):
        return function.value.id == "env" and function.attr not in ("read_env", "db_url_config")
    return isinstance(function, ast.Name) and function.id in readers


def settings_reads() -> tuple[list[str], list[str]]:
    """The names config/settings.py reads, once for each read, and the reads whose
    name is no literal outside the readers (which the page could not be checked for)."""
    tree = ast.parse(SETTINGS.read_text())
    helpers = [
        node
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
        and any(env_call(inner, set()) for inner in ast.walk(node))
    ]
    readers = {"env"} | {helper.name for helper in helpers}
    inside_helpers = {id(inner) for helper in helpers for inner in ast.walk(helper)}
    names, unnamed = [], []
    for node in ast.walk(tree):
        if not env_call(node, readers) or id(node) in inside_helpers:
            continue
        name = literal(node.args[0]) if node.args else None
        if name:
            names.append(name)
        else:
            unnamed.append(f"line {node.lineno}: {ast.unparse(node)}")
    return names, unnamed


def read_by_the_site() -> set[str]:
    names, _ = settings_reads()
    read = set(names)
    for path in site_files():
        read |= os_environ_reads(ast.parse(path.read_text()))
    for template in (PROJECT / "deploy").rglob("*.template"):
        read |= set(TEMPLATE_VARIABLE.findall(template.read_text()))
    return read


def read_by_the_suite_and_benchmarks() -> set[str]:
    read = set()
    for folder in ("tests", "bench"):
        for path in (PROJECT / folder).rglob("*.py"):
            read |= os_environ_reads(ast.parse(path.read_text()))
    return read - SYSTEM


def sections() -> dict[str, str]:
    """The page's text under each of its "## " headings."""
    parts = re.split(r"^## (.+)$", PAGE.read_text(), flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def documented() -> Counter[str]:
    return Counter(ENTRY.findall(PAGE.read_text()))


def test_every_read_of_the_environment_in_the_settings_names_its_variable():
    names, unnamed = settings_reads()

    assert unnamed == []
    assert [name for name, count in Counter(names).items() if count > 1] == []


def test_every_variable_has_exactly_one_entry():
    entries = documented()

    assert sorted(name for name, count in entries.items() if count > 1) == []
    assert sorted(read_by_the_site() - set(entries)) == []


def test_no_entry_for_a_variable_nothing_reads():
    site = read_by_the_site()
    suite = read_by_the_suite_and_benchmarks() - site
    outside_the_suite = set(
        ENTRY.findall("".join(text for title, text in sections().items() if title != SUITE_SECTION))
    )

    assert sorted(outside_the_suite - site) == []
    assert sorted(set(ENTRY.findall(sections()[SUITE_SECTION]))) == sorted(suite)


def test_the_fixed_values_are_settings_no_longer_read():
    fixed = set(re.findall(r"`([A-Z][A-Z0-9_]+)`", sections()[FIXED_SECTION]))
    assigned = {
        target.id
        for node in ast.parse(SETTINGS.read_text()).body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
        for target in node.targets
        if isinstance(target, ast.Name)
    }

    assert fixed
    assert sorted(fixed & read_by_the_site()) == []
    assert sorted(fixed - assigned) == []


def load_settings(**environment: str) -> subprocess.CompletedProcess:
    """config.settings imported in a process of its own, as every process starts."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "GOOGLE_"))}
    code = (
        "import config.settings as s; "
        "print(s.EMAIL_PORT, s.LOG_LEVEL, s.PAGE_RATE_LIMIT, s.SUMMARY_RATE_LIMIT, "
        "s.SECURE_SSL_REDIRECT, s.ARXIV_DELAY_SECONDS)"
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=PROJECT,
        env={**env, "DEBUG": "1", **environment},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("INDEX_CARDS_CACHE_SIZE", "-1", "is a number of fragments, 0 or more, not -1."),
        ("PAPER_CARD_CACHE_SIZE", "lots", "is a number of fragments, 0 or more, not 'lots'."),
        ("EMAIL_PORT", "twenty-five", "is a port, from 1 to 65535, not 'twenty-five'."),
        ("ARXIV_DELAY_SECONDS", "3s", "is a number of seconds, 0 or more, not '3s'."),
        ("LLM_TIMEOUT", "0", "is a number of seconds, more than 0, not 0."),
        ("DIGEST_HOUR", "24", "is an hour of the day, from 0 to 23, not 24."),
        ("SENTRY_TRACES_SAMPLE_RATE", "1.5", "is a share of requests, from 0 to 1, not 1.5."),
        ("INGEST_RUN_STALE_SECONDS", "0", "is a number of seconds, 1 or more, not 0."),
        ("SECURE_SSL_REDIRECT", "ture", "is 1 or 0 (true or false, on or off), not 'ture'."),
        ("LOG_LEVEL", "loud", "is 'DEBUG', 'INFO', 'WARNING', 'ERROR' or 'CRITICAL', not 'loud'."),
        ("SUMMARY_BACKEND", "gpt", "is 'extractive' or 'openai', not 'gpt'."),
        ("PAGE_RATE_LIMIT", "300 per minute", "is a rate such as 60/m, or empty for none"),
        ("SUMMARY_RATE_LIMIT", "0/m", "is a rate such as 10/m, or empty for none, not '0/m'."),
        ("ARXIV_ABS_URL", "https://arxiv.org/abs/", "needs {id} in it"),
        ("SITE_ROOT", "papers.example.org", "is an http:// or https:// address"),
        ("GITHUB_CLIENT_ID", "an-id", "and GITHUB_SECRET go together: set both, or neither."),
    ],
)
def test_a_bad_value_stops_the_settings_from_loading(name, value, message):
    loaded = load_settings(**{name: value})

    assert loaded.returncode != 0
    assert f"ImproperlyConfigured: {name} {message}" in loaded.stderr


def test_a_model_backend_without_its_model_stops_the_settings_from_loading():
    loaded = load_settings(SUMMARY_BACKEND="openai", LLM_MODEL="")

    assert loaded.returncode != 0
    assert "SUMMARY_BACKEND=openai needs LLM_MODEL." in loaded.stderr


def test_values_spelled_other_ways_load_and_empty_ones_are_the_defaults():
    loaded = load_settings(
        EMAIL_PORT="",
        LOG_LEVEL="warning",
        PAGE_RATE_LIMIT="100/5m",
        SUMMARY_RATE_LIMIT="0.5/s",
        SECURE_SSL_REDIRECT="off",
        ARXIV_DELAY_SECONDS="1e1",
    )

    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout.split() == ["25", "WARNING", "100/5m", "0.5/s", "False", "10.0"]
