"""nginx's access log (deploy/nginx/default.conf.template) keeps no secret a
URL carries: private feed tokens, unsubscribe links, email confirmation and
password reset keys, and query strings naming a token or a key."""

import pytest
import requests

from tests.faults.processes import gunicorn, nginx, site_env

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
SECRET = "s3cr3tvalue42"
PATHS = [
    f"/feeds/private/{SECRET}.rss",
    f"/feeds/private/{SECRET}.atom?page=2",
    f"/digests/unsubscribe/{SECRET}/",
    f"/accounts/confirm-email/{SECRET}/",
    f"/accounts/password/reset/key/1a-{SECRET}/",
    f"/api/v1/papers?token={SECRET}",
    f"/?q=a&api_key={SECRET}",
    f"/?Token={SECRET}&q=a",
]


def test_the_access_log_masks_every_secret_of_a_url(tmp_path):
    log = tmp_path / "access.log"
    with gunicorn(site_env()) as web, nginx(web.removeprefix("http://"), access_log=log) as base:
        for path in PATHS:
            requests.get(base + path, allow_redirects=False, timeout=10)
        requests.get(f"{base}/?q=tokens", timeout=10)

    lines = log.read_text().splitlines()
    logged = [line for line in lines if "/healthz" not in line]
    print("\n".join(logged))
    assert len(logged) == len(PATHS) + 1
    assert not [line for line in logged if SECRET in line]
    assert sum("***" in line for line in logged) == len(PATHS)
    # What holds no secret is logged as it came.
    assert '"GET /?q=tokens HTTP/1.1" 200' in logged[-1]
