"""The direction of imports between the apps, and no module importing its own importer."""

import subprocess
import sys
from pathlib import Path

import grimp

PROJECT = Path(__file__).resolve().parent.parent
PACKAGES = (
    "config",
    "api",
    "curation",
    "accounts",
    "answers",
    "tools",
    "ingest",
    "enrichment",
    "discovery",
    "editions",
    "catalog",
    "core",
)


def test_apps_import_only_the_layers_below_them():
    # The layers are the import-linter contract in pyproject.toml.
    linted = subprocess.run(
        [str(Path(sys.executable).with_name("lint-imports"))],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert linted.returncode == 0, linted.stdout + linted.stderr


def test_no_two_modules_import_each_other():
    graph = grimp.build_graph(*PACKAGES)
    circles = {
        " -> ".join(chain)
        for module in graph.modules
        for imported in graph.find_modules_directly_imported_by(module)
        if (chain := graph.find_shortest_chain(importer=imported, imported=module))
    }
    assert not circles
