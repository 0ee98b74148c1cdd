"""The README's commands work as written when pasted into a new shell after
`make run`: no DEBUG or SECRET_KEY exported, only the .env that `make run` wrote."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

from tests.arxiv_server import recorded_entries, running, with_id

pytestmark = pytest.mark.slow
PROJECT = Path(settings.BASE_DIR)
PYTHON = Path(sys.executable)
README = (PROJECT / "README.md").read_text()
# What a line of the log says when something went wrong, or looks as if it had.
ALARMING = re.compile(r" (WARNING|ERROR|CRITICAL) |Traceback|Could not load")


@pytest.fixture
def fresh_clone(tmp_path) -> Path:
    clone = tmp_path / "papershelf"
    shutil.copytree(
        PROJECT,
        clone,
        # Also what other tests write while this one copies (a parallel run):
        # bytecode and Hypothesis's examples, which no fresh clone has either.
        ignore=shutil.ignore_patterns(
            ".git",
            ".venv",
            ".env",
            "*.sqlite3",
            "media",
            "staticfiles",
            "test-artifacts",
            "node_modules",
            "__pycache__",
            ".hypothesis",
        ),
    )
    # The part of `make run` that prepares the checkout for other shells.
    subprocess.run(["make", "--no-print-directory", ".env"], cwd=clone, check=True, env=os.environ)
    return clone


def new_shell() -> dict[str, str]:
    """A shell that never saw make's exports, nor the test suite's settings."""
    keep = ("PATH", "HOME", "LANG", "TMPDIR")
    return {name: os.environ[name] for name in keep if name in os.environ}


def run(clone: Path, *args: str, extra: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(PYTHON), "manage.py", *args],
        cwd=clone,
        env={**new_shell(), **(extra or {})},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_manage_py_commands_work_in_a_new_shell(fresh_clone):
    assert "DEBUG=1" in (fresh_clone / ".env").read_text().splitlines()

    for args in (
        ["migrate", "--noinput"],
        ["load_demo"],
        ["createsuperuser", "--noinput", "--username", "curator", "--email", "c@example.com"],
        ["send_digests", "--dry-run"],
        ["summarize", "--paper", "2505.15034"],
        ["check"],
    ):
        result = run(fresh_clone, *args, extra={"DJANGO_SUPERUSER_PASSWORD": "a long passphrase"})
        assert result.returncode == 0, (args, result.stderr)


def readme_command_lines(command: str) -> list[str]:
    """The README's shell lines running a manage.py command, as they would be pasted."""
    return [
        line.strip()
        for line in README.splitlines()
        if f".venv/bin/python manage.py {command} " in line and not line.lstrip().startswith("`")
    ]


def test_the_demo_loads_without_alarming_lines_and_readme_add_papers_lines_work(fresh_clone):
    assert run(fresh_clone, "migrate", "--noinput").returncode == 0
    loaded = run(fresh_clone, "load_demo")
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout.startswith("Loaded 60 papers")
    assert not ALARMING.findall(loaded.stderr), loaded.stderr

    lines = readme_command_lines("add_papers")
    assert len(lines) == 2
    named = sorted(set(re.findall(r"\b(\d{4}\.\d{5})\b", " ".join(lines))))
    recorded = recorded_entries()[: len(named)]
    entries = [with_id(entry, arxiv_id) for entry, arxiv_id in zip(recorded, named, strict=True)]
    with running(entries) as arxiv:
        for line in lines:
            pasted = subprocess.run(
                ["bash", "-c", line.replace(".venv/bin/python", str(PYTHON))],
                cwd=fresh_clone,
                env={**new_shell(), "ARXIV_API_URL": arxiv.url, "ARXIV_DELAY_SECONDS": "0"},
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert pasted.returncode == 0, (line, pasted.stdout, pasted.stderr)
            assert "Succeeded" in pasted.stdout, (line, pasted.stdout)


def test_the_readme_names_tags_the_demo_has():
    demo_tags = {
        tag["slug"]
        for tag in json.loads((PROJECT / "catalog/demo/papers.json").read_text())["tags"]
    }
    commands = [line.split(" # ")[0] for line in README.splitlines() if "manage.py" in line]
    named = {slug for line in commands for slug in re.findall(r"--tag ([\w-]+)", line)}
    assert named and named <= demo_tags


def test_the_demo_builder_rebuilds_the_committed_file_as_pasted(fresh_clone):
    command = ".venv/bin/python -m tools.build_demo tests/data/seeds"
    assert f"`{command}`" in README
    committed = (fresh_clone / "catalog/demo/papers.json").read_bytes()

    built = subprocess.run(
        ["bash", "-c", command.replace(".venv/bin/python", str(PYTHON))],
        cwd=fresh_clone,
        env=new_shell(),
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert built.returncode == 0, built.stderr
    assert built.stdout.startswith("Wrote 60 papers, 7 tags")
    assert (fresh_clone / "catalog/demo/papers.json").read_bytes() == committed


def test_without_the_development_env_file_a_key_is_still_required(fresh_clone):
    (fresh_clone / ".env").unlink()

    result = run(fresh_clone, "check")

    assert result.returncode != 0
    assert "Set SECRET_KEY" in result.stderr


def test_mail_links_where_make_run_serves(tmp_path):
    clone = tmp_path / "elsewhere"
    clone.mkdir()
    shutil.copy(PROJECT / "Makefile", clone / "Makefile")
    env = {**new_shell(), "PATH": os.environ["PATH"]}

    subprocess.run(
        ["make", "--no-print-directory", ".env", "PORT=8123"], cwd=clone, env=env, check=True
    )

    assert "SITE_ROOT=http://127.0.0.1:8123" in (clone / ".env").read_text().splitlines()
