"""PostgreSQL stopped, and crashed, under the production shape (gunicorn behind
nginx, production settings): every page answers a short 503 with Retry-After
at once, the API its JSON 503, /healthz names the database as down; each
process logs one line a minute, no traceback; the same processes answer 200
as soon as the server is back. Runs against a private cluster on its own
port, never the shared one."""

import time
from urllib.parse import urlsplit

import pytest
import requests

from tests.faults.processes import gunicorn, manage, nginx, site_env

pytestmark = [pytest.mark.slow, pytest.mark.long]
PAGES = ["/", "/?q=reasoning", "/tags/", "/categories/", "/trending/"]
EMAIL, PASSWORD = "reader@example.com", "a long enough passphrase"
CREATE_READER = (
    "from allauth.account.models import EmailAddress\n"
    "from django.contrib.auth import get_user_model\n"
    f"user = get_user_model().objects.create_user('reader', '{EMAIL}', '{PASSWORD}')\n"
    f"EmailAddress.objects.create(user=user, email='{EMAIL}', verified=True, primary=True)\n"
)


def logged_in(base: str) -> requests.Session:
    reader = requests.Session()
    reader.get(f"{base}/accounts/login/", timeout=10).raise_for_status()
    answer = reader.post(
        f"{base}/accounts/login/",
        data={
            "login": EMAIL,
            "password": PASSWORD,
            "csrfmiddlewaretoken": reader.cookies["csrftoken"],
        },
        timeout=30,
    )
    assert answer.url.endswith("/feed/"), answer.url
    return reader


def ask_everything(base: str, reader: requests.Session) -> dict[str, requests.Response]:
    answers = {path: requests.get(base + path, timeout=10) for path in PAGES}
    answers["/feed/ (logged in)"] = reader.get(f"{base}/feed/", timeout=10, allow_redirects=False)
    answers["/api/v1/papers"] = requests.get(f"{base}/api/v1/papers", timeout=10)
    answers["/healthz"] = requests.get(f"{base}/healthz", timeout=10)
    return answers


@pytest.mark.parametrize("mode", ["fast", "immediate"], ids=["stopped", "crashed"])
def test_pages_answer_503_while_the_database_is_down_and_200_once_it_is_back(
    cluster, mode, tmp_path
):
    env = site_env(database=cluster.create_database("papershelf"))
    for command in (["migrate", "--noinput"], ["load_demo"], ["shell", "-c", CREATE_READER]):
        result = manage(env, *command)
        assert result.returncode == 0, result.stderr
    log = tmp_path / "gunicorn.log"

    with gunicorn(env, log=log) as web, nginx(urlsplit(web).netloc) as base:
        reader = logged_in(base)
        before = ask_everything(base, reader)
        cluster.pg_ctl("stop", mode=mode)
        started = time.monotonic()
        during = ask_everything(base, reader)
        answered_in = time.monotonic() - started
        cluster.pg_ctl("start")
        back = time.monotonic()
        while requests.get(f"{base}/", timeout=10).status_code != 200:
            assert time.monotonic() - back < 60, "the site did not come back"
            time.sleep(0.2)
        recovered_in = time.monotonic() - back
        after = ask_everything(base, reader)

    print(
        f"database {mode} stop: {len(during)} requests answered "
        f"{sorted({r.status_code for r in during.values()})} in {answered_in:.1f} s; "
        f"200 again {recovered_in:.1f} s after the server was back"
    )
    assert {path: r.status_code for path, r in before.items()} == dict.fromkeys(before, 200)
    assert {path: r.status_code for path, r in during.items()} == dict.fromkeys(during, 503)
    assert all(r.headers["Retry-After"] == "30" for r in during.values())
    assert answered_in < 10
    assert "back in a moment" in during["/"].text
    assert during["/api/v1/papers"].json()["detail"].startswith("The service is briefly")
    assert during["/healthz"].json() == {
        "status": "down",
        "database": "down",
        "cache": "off",
        "broker": "off",
    }
    assert {path: r.status_code for path, r in after.items()} == dict.fromkeys(after, 200)
    assert recovered_in < 10
    lines = log.read_text()
    assert "Traceback" not in lines
    # One line a minute from each of gunicorn's two workers at most.
    assert 1 <= lines.count("The database cannot be reached") <= 2
