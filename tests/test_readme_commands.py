"""The README's commands work as written when pasted into a new shell after
`make run`: no DEBUG or SECRET_KEY exported, only the .env that `make run` wrote."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

pytestmark = pytest.mark.slow
PROJECT = Path(settings.BASE_DIR)
PYTHON = Path(sys.executable)


@pytest.fixture
def fresh_clone(tmp_path) -> Path:
    clone = tmp_path / "papershelf"
    shutil.copytree(
        PROJECT,
        clone,
        ignore=shutil.ignore_patterns(
            ".git",
            ".venv",
            ".env",
            "*.sqlite3",
            "media",
            "staticfiles",
            "test-artifacts",
            "node_modules",
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
