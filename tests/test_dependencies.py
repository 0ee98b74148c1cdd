"""Installs are reproducible: the lock files pin, with hashes, exactly what the
hand-edited requirements ask for, and every package the code imports is declared."""

import ast
import os
import re
import shutil
import subprocess
import sys
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parent.parent
LOCAL_PACKAGES = {path.parent.name for path in PROJECT.glob("*/__init__.py")}
RUNTIME_CODE = sorted(LOCAL_PACKAGES - {"tests", "bench"})
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^]]*\])?(?:==(\S+))?\s*$")
LOCKED = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+) \\$")


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirements(name: str) -> dict[str, str | None]:
    """The packages a hand-edited requirements file names, with their pins."""
    named = {}
    for line in (PROJECT / name).read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line or line.startswith("-"):
            continue
        match = PIN.match(line)
        assert match, f"{name}: cannot read {line!r}"
        named[normalized(match[1])] = match[2]
    return named


def lock(name: str) -> dict[str, str]:
    """The packages a lock file pins, each of which must carry its hashes."""
    text = (PROJECT / name).read_text()
    pinned = {}
    for block in re.split(r"\n(?=\S)", text):
        match = LOCKED.match(block.split("\n", 1)[0])
        if match:
            assert "--hash=sha256:" in block, f"{name}: {match[1]} has no hash"
            pinned[normalized(match[1])] = match[2]
    assert pinned, f"{name} pins nothing"
    return pinned


@pytest.mark.parametrize(
    ("inputs", "lock_file"),
    [
        (["requirements.txt"], "requirements.lock"),
        (["requirements.txt", "requirements-dev.txt"], "requirements-dev.lock"),
        (["requirements-uv.txt"], "requirements-uv.lock"),
    ],
)
def test_the_lock_pins_what_the_requirements_ask_for(inputs, lock_file):
    pinned = lock(lock_file)
    for name in inputs:
        for package, version in requirements(name).items():
            assert package in pinned, f"{package} is in {name} but not in {lock_file}: make lock"
            if version:
                assert pinned[package] == version, f"{package}: {name} and {lock_file} differ"


def test_the_dev_lock_installs_the_runtime_lock_unchanged():
    runtime, dev = lock("requirements.lock"), lock("requirements-dev.lock")
    assert {package: dev.get(package) for package in runtime} == runtime


def test_installs_use_the_lock_and_check_its_hashes():
    makefile = (PROJECT / "Makefile").read_text()
    dockerfile = (PROJECT / "Dockerfile").read_text()
    assert "pip install --quiet --require-hashes -r requirements-dev.lock" in makefile
    assert "--require-hashes" in dockerfile
    assert "requirements.lock" in dockerfile


def planned_commands(target: str, tmp_path: Path) -> list[str]:
    """What `make TARGET` would run in a fresh clone (make --dry-run), one command a line."""
    for name in ("Makefile", "requirements.lock", "requirements-dev.lock", "requirements-uv.lock"):
        shutil.copy(PROJECT / name, tmp_path / name)
    planned = subprocess.run(
        ["make", "--dry-run", "--no-print-directory", target],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": os.environ["PATH"]},
    )
    return planned.stdout.splitlines()


def test_make_run_installs_the_runtime_lock_alone_and_make_test_the_dev_lock(tmp_path):
    run = [line for line in planned_commands("run", tmp_path) if "pip install" in line]
    test = [line for line in planned_commands("test", tmp_path) if "pip install" in line]

    assert len(run) == 2 and all("--require-hashes" in line for line in run + test)
    assert "-r requirements-uv.lock" in run[0] and "-r requirements.lock" in run[1]
    assert not any("requirements-dev.lock" in line for line in run)
    assert any("-r requirements-dev.lock" in line for line in test)


def third_party_imports(*roots: str) -> dict[str, set[str]]:
    """Top-level modules imported by the code under roots, outside the standard
    library and the project, with the files importing each."""
    imported: dict[str, set[str]] = {}
    for root in roots:
        for path in (PROJECT / root).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Import):
                    modules = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    modules = [node.module]
                else:
                    continue
                for module in modules:
                    top = module.split(".")[0]
                    if top not in sys.stdlib_module_names and top not in LOCAL_PACKAGES:
                        imported.setdefault(top, set()).add(str(path.relative_to(PROJECT)))
    return imported


@pytest.mark.parametrize(
    ("roots", "declared_in"),
    [
        (RUNTIME_CODE, ["requirements.txt"]),
        (["tests", "bench"], ["requirements.txt", "requirements-dev.txt"]),
    ],
)
def test_every_package_the_code_imports_is_declared(roots, declared_in):
    declared = set().union(*(requirements(name) for name in declared_in))
    distributions = packages_distributions()
    undeclared = {
        module: sorted(files)
        for module, files in third_party_imports(*roots).items()
        if not {normalized(d) for d in distributions.get(module, [])} & declared
    }
    assert undeclared == {}, f"imported but not in {' or '.join(declared_in)}"
