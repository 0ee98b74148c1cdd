"""The production shape: the image (Dockerfile, .dockerignore) and the services
docker-compose.yml runs from it."""

import fnmatch
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from django.conf import settings

PROJECT = Path(__file__).resolve().parent.parent
COMPOSE_TEXT = (PROJECT / "docker-compose.yml").read_text()
COMPOSE = yaml.safe_load(COMPOSE_TEXT)
SERVICES = COMPOSE["services"]
# The services run from the site's own image.
APP_SERVICES = {name: s for name, s in SERVICES.items() if s.get("build") == "."}
WORKERS = {name: s for name, s in APP_SERVICES.items() if " worker " in f" {s['command']} "}
QUEUES = {"ingest", "enrichment", "mail", "celery"}


def served_queues(command: str) -> list[str]:
    match = re.search(r"-Q (\S+)", command)
    assert match, f"{command!r} names no queues"
    return match[1].split(",")


def test_the_site_runs_as_web_a_worker_per_queue_and_one_beat():
    assert {"migrate", "web", "beat", "postgres", "redis"} <= SERVICES.keys()
    assert len(WORKERS) >= 3
    queues = [queue for worker in WORKERS.values() for queue in served_queues(worker["command"])]
    assert sorted(queues) == sorted(QUEUES), "each queue served by exactly one worker service"
    assert SERVICES["beat"]["deploy"]["replicas"] == 1


def test_make_worker_serves_every_queue_in_one_process():
    makefile = (PROJECT / "Makefile").read_text()
    [command] = re.findall(r"^\t\$\(BIN\)/celery -A config worker .*$", makefile, re.MULTILINE)
    assert set(served_queues(command)) == QUEUES


def routed_queues(routes: object) -> set[str]:
    """The queues named in Celery's task_routes: maps (or a list of maps) from
    task names or patterns to a queue name or to options naming one."""
    maps = routes if isinstance(routes, list | tuple) else [routes]
    queues = set()
    for mapping in maps:
        for route in mapping.values() if isinstance(mapping, dict) else ():
            queues.add(route if isinstance(route, str) else route.get("queue", "celery"))
    return queues


def test_every_routed_queue_has_a_worker():
    routes = getattr(settings, "CELERY_TASK_ROUTES", None) or {}
    assert routed_queues(routes) <= QUEUES
    assert getattr(settings, "CELERY_TASK_DEFAULT_QUEUE", "celery") in QUEUES


def test_every_service_has_a_health_check():
    for name, service in SERVICES.items():
        if name != "migrate":
            assert service["healthcheck"]["test"], name
    for name, worker in WORKERS.items():
        # $$ is compose's escape: the container's shell expands $HOSTNAME.
        assert worker["healthcheck"]["test"] == [
            "CMD-SHELL",
            "celery -A config inspect ping --timeout 10 -d celery@$$HOSTNAME",
        ], name
    assert SERVICES["web"]["healthcheck"]["test"][-3:] == ["-m", "config.healthcheck", "web"]
    assert SERVICES["beat"]["healthcheck"]["test"][-3:] == ["-m", "config.healthcheck", "beat"]


def test_the_schema_is_migrated_once_before_the_site_starts():
    assert SERVICES["migrate"]["command"] == "python manage.py migrate --noinput"
    assert SERVICES["migrate"]["restart"] == "no"
    for name, service in APP_SERVICES.items():
        if name != "migrate":
            completed = service["depends_on"]["migrate"]["condition"]
            assert completed == "service_completed_successfully", name


def test_the_file_is_complete_without_a_dotenv_file():
    for service in APP_SERVICES.values():
        assert service["env_file"] == [{"path": ".env", "required": False}]
    # Compose interpolates ${VAR} from the shell and .env: each needs a default.
    for variable in re.findall(r"(?<!\$)\$\{([^}]*)\}", COMPOSE_TEXT):
        assert ":-" in variable, f"${{{variable}}} has no default"


def test_media_and_vectors_are_volumes_shared_by_the_site_and_its_workers():
    assert {"media", "vectors"} <= set(COMPOSE["volumes"])
    for name, service in APP_SERVICES.items():
        assert "media:/app/media" in service["volumes"], name
        assert "vectors:/app/data/vectors" in service["volumes"], name


def docker_compose_installed() -> bool:
    if not shutil.which("docker"):
        return False
    return subprocess.run(["docker", "compose", "version"], capture_output=True).returncode == 0


@pytest.mark.skipif(not docker_compose_installed(), reason="docker compose is not installed")
def test_docker_compose_accepts_the_file_without_a_dotenv_file(tmp_path):
    shutil.copy(PROJECT / "docker-compose.yml", tmp_path)
    result = subprocess.run(
        ["docker", "compose", "config", "--quiet"], cwd=tmp_path, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr


def dockerfile_stages() -> list[list[str]]:
    stages: list[list[str]] = []
    text = (PROJECT / "Dockerfile").read_text().replace("\\\n", " ")
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("FROM "):
            stages.append([])
        if stages and line and not line.startswith("#"):
            stages[-1].append(line)
    return stages


def test_the_image_builds_wheels_apart_and_runs_unprivileged():
    *build, runtime = dockerfile_stages()
    assert build, "a separate stage builds the wheels"
    assert any("pip wheel --require-hashes" in line for line in build[0])
    users = [line.split()[1] for line in runtime if line.startswith("USER ")]
    uid, gid = users[-1].split(":")
    assert int(uid) > 0 and int(gid) > 0
    assert any(f"useradd --uid {uid} " in line for line in runtime)
    # The runtime user owns the folders the volumes are mounted on.
    assert any(f"chown {uid}:{gid} media data/vectors" in line for line in runtime)
    assert runtime[-1].startswith("CMD ") and "config.gunicorn" in runtime[-1]


def excluded_from_image(path: str) -> bool:
    """Whether .dockerignore keeps path out of the build context, by Docker's
    rules: a pattern excludes what it matches and everything under it, the
    last matching pattern wins, and **/ matches any number of folders."""
    patterns = [
        line.strip()
        for line in (PROJECT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    parts = path.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    excluded = False
    for pattern in patterns:
        negated = pattern.startswith("!")
        pattern = pattern.removeprefix("!")
        candidates = {pattern, pattern.removeprefix("**/")}
        if any(fnmatch.fnmatchcase(p, c) for p in prefixes for c in candidates):
            excluded = not negated
    return excluded


@pytest.mark.parametrize(
    "path",
    [
        ".env",
        ".env.production",
        ".git/config",
        ".venv/bin/python",
        "tests/test_docker.py",
        "bench/run.py",
        "media/previews/2505.15034.png",
        "db.sqlite3",
        "catalog/__pycache__/models.cpython-311.pyc",
    ],
)
def test_secrets_local_state_tests_and_bench_stay_out_of_the_image(path):
    assert excluded_from_image(path)


@pytest.mark.parametrize(
    "path",
    [
        "manage.py",
        "requirements.lock",
        "config/settings.py",
        "catalog/models.py",
        "templates/base.html",
        "static/js/htmx.min.js",
        "locale/ko/LC_MESSAGES/django.mo",
    ],
)
def test_what_the_site_runs_on_goes_into_the_image(path):
    assert (PROJECT / path).exists()
    assert not excluded_from_image(path)
