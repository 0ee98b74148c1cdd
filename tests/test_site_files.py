"""What browsers, crawlers and load balancers ask of any site: the health probe,
robots.txt, the favicon, uploaded media, and pages sent compressed."""

import gzip

import pytest
from django.core.files.base import ContentFile
from django.test import Client, override_settings

from catalog.models import PaperImage
from tests.factories import PaperFactory

pytestmark = pytest.mark.django_db
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64


@override_settings(SECURE_SSL_REDIRECT=True, ALLOWED_HOSTS=["papershelf.example"])
def test_health_probe_is_answered_over_plain_http_at_any_host():
    # A load balancer asks the instance by its own address, without TLS.
    response = Client().get("/healthz", HTTP_HOST="10.0.3.7:8000")

    assert response.status_code == 200
    # Without Redis (as here) the caches and the broker are off, not down.
    assert response.json() == {"status": "ok", "database": "ok", "cache": "off", "broker": "off"}
    assert response["Cache-Control"] == "no-store"
    assert Client().head("/healthz", HTTP_HOST="10.0.3.7").status_code == 200
    assert Client().post("/healthz", HTTP_HOST="10.0.3.7").status_code == 405
    # Every other page still redirects to HTTPS and checks the host.
    assert Client().get("/", HTTP_HOST="papershelf.example").status_code == 301
    assert Client().get("/", HTTP_HOST="10.0.3.7").status_code == 400


def test_robots_txt_lets_crawlers_read_the_catalog_but_not_accounts(client):
    response = client.get("/robots.txt")

    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    lines = response.content.decode().splitlines()
    assert lines[0] == "User-agent: *"
    assert "Disallow: /admin/" in lines
    assert "Disallow: /accounts/" in lines
    assert "Disallow: /" not in lines


def test_favicon_is_served_where_browsers_look(client):
    response = client.get("/favicon.ico")

    assert response.status_code == 200
    assert response["Content-Type"] == "image/x-icon"
    assert b"".join(response.streaming_content)[:4] == b"\x00\x00\x01\x00"
    assert "max-age=" in response["Cache-Control"]
    assert 'rel="icon" href="/static/favicon.svg"' in client.get("/").content.decode()


@pytest.fixture
def preview(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    image = PaperImage(paper=PaperFactory(), kind=PaperImage.Kind.FIRST_PAGE, width=8, height=8)
    image.image.save("page.png", ContentFile(PNG))
    return image


def test_uploaded_previews_are_served_at_their_url(client, preview):
    assert preview.image.url.startswith("/media/previews/")

    response = client.get(preview.image.url)

    assert response.status_code == 200
    assert response["Content-Type"] == "image/png"
    assert b"".join(response.streaming_content) == PNG
    assert "sandbox" in response["Content-Security-Policy"]
    assert client.get("/media/previews/none.png").status_code == 404
    assert client.get("/media/../config/settings.py").status_code == 400
    assert client.get("/media/previews/").status_code == 404


def test_pages_are_sent_compressed_to_browsers_that_accept_it(client):
    PaperFactory.create_batch(5)

    response = client.get("/", HTTP_ACCEPT_ENCODING="gzip, deflate, br")

    assert response["Content-Encoding"] == "gzip"
    html = gzip.decompress(response.content).decode()
    assert "Latest papers" in html
    assert len(response.content) < len(html) / 3
