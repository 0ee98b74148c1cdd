"""The site as deployed: gunicorn with production settings (HTTPS redirect on,
one allowed host), previews on local disk under MEDIA_ROOT."""

import os
import secrets

import pytest
import requests
import yaml

from tests.faults.processes import PROJECT, database_url, free_port, gunicorn, manage, nginx

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64


@pytest.fixture
def production_env(tmp_path) -> dict[str, str]:
    media = tmp_path / "media"
    (media / "previews" / "7").mkdir(parents=True)
    (media / "previews" / "7" / "page.png").write_bytes(PNG)
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "REDIS_URL": "",
        "DEBUG": "0",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "papershelf.example",
        "MEDIA_ROOT": str(media),
        "STATIC_ROOT": str(tmp_path / "static"),
        "LOG_LEVEL": "WARNING",
    }
    collected = manage(env, "collectstatic", "--noinput")
    assert collected.returncode == 0, collected.stderr
    return env


def test_health_probe_and_previews_under_gunicorn(production_env):
    with gunicorn(production_env) as base:
        # The load balancer's probe: plain HTTP, addressed to the instance itself.
        probe = requests.get(f"{base}/healthz", allow_redirects=False, timeout=10)
        assert probe.status_code == 200
        assert probe.json() == {"status": "ok", "database": "ok", "cache": "off", "broker": "off"}

        site = {"Host": "papershelf.example"}
        page = requests.get(f"{base}/", headers=site, allow_redirects=False, timeout=10)
        assert page.status_code == 301
        assert page.headers["Location"] == "https://papershelf.example/"

        behind_proxy = {**site, "X-Forwarded-Proto": "https"}
        image = requests.get(f"{base}/media/previews/7/page.png", headers=behind_proxy, timeout=10)
        assert image.status_code == 200
        assert image.headers["Content-Type"] == "image/png"
        assert image.content == PNG
        missing = requests.get(
            f"{base}/media/previews/7/none.png", headers=behind_proxy, timeout=10
        )
        assert missing.status_code == 404
        assert "Not found" in missing.text


def test_compose_gives_web_and_workers_one_media_folder():
    compose = yaml.safe_load((PROJECT / "docker-compose.yml").read_text())
    services = compose["services"]

    # Workers render previews into MEDIA_ROOT (/app/media in the image); web serves them.
    assert "media:/app/media" in services["web"]["volumes"]
    assert "media:/app/media" in services["worker-enrichment"]["volumes"]
    assert "media" in compose["volumes"]
    assert services["web"]["environment"]["DEBUG"] == "0"


def problem_of(response: requests.Response, status: int) -> dict:
    assert response.status_code == status, response.text[:200]
    assert response.headers["Content-Type"] == "application/problem+json"
    problem = response.json()
    assert problem["status"] == status and problem["detail"]
    return problem


def test_nginx_answers_the_apis_errors_as_problem_details(production_env):
    api = {"Host": "papershelf.example"}
    with gunicorn(production_env) as base, nginx(base.removeprefix("http://")) as proxy:
        # Past gunicorn's request line (8190), within nginx's buffers: gunicorn's
        # HTML 414, replaced.
        long_query = f"{proxy}/api/v1/papers?q={'x' * 9000}"
        problem_of(requests.get(long_query, headers=api, timeout=10), 414)
        # Past nginx's own buffers, whatever the path.
        problem_of(requests.get(f"{proxy}/api/v1/papers?q={'x' * 20000}", timeout=10), 414)
        too_large = requests.post(
            f"{proxy}/api/v1/papers/1/comments", data=b"x" * 2_000_000, headers=api, timeout=10
        )
        problem_of(too_large, 413)
        # The site's own answers pass as they are: here its redirect to HTTPS,
        # and gunicorn's 414 for a page of the site.
        redirect = requests.get(
            f"{proxy}/api/v1/papers", headers=api, allow_redirects=False, timeout=10
        )
        assert redirect.status_code == 301
        site_page = requests.get(f"{proxy}/?q={'x' * 9000}", headers=api, timeout=10)
        assert site_page.status_code == 414
        assert "json" not in site_page.headers.get("Content-Type", "")
    # A gunicorn that is not there.
    with nginx(f"127.0.0.1:{free_port()}", upstream_up=False) as proxy:
        problem_of(requests.get(f"{proxy}/api/v1/papers", timeout=10), 502)
