"""Bounded downloads from arXiv, each in the one shared arXiv turn (core.pacing)."""

import time
from dataclasses import dataclass

import requests
from django.conf import settings

from core.pacing import TurnNotTaken, arxiv_turn


class Unreadable(Exception):
    """Nothing to read there (missing, refused, too large); retrying won't help."""


class NotFound(Unreadable):
    """The address answered 404."""


class DownloadFailed(Exception):
    """The download failed just now (busy, slow, cut off); worth retrying later."""


@dataclass(frozen=True)
class Download:
    content: bytes
    # Where the answer came from, after redirects: relative links resolve against it.
    url: str
    content_type: str


def download(*, url: str, what: str, limit: int, timeout: float) -> Download:
    """The body at url, refused past `limit` bytes or `timeout` seconds in all;
    `what` names it in the errors ("PDF", "HTML page")."""
    headers = {"User-Agent": settings.ARXIV_USER_AGENT}
    try:
        with arxiv_turn(max_wait=4 * (timeout + settings.ARXIV_DELAY_SECONDS)):
            return _download(url, what=what, headers=headers, limit=limit, timeout=timeout)
    except TurnNotTaken as exc:
        raise DownloadFailed(str(exc)) from exc


def _download(
    url: str, *, what: str, headers: dict[str, str], limit: int, timeout: float
) -> Download:
    deadline = time.monotonic() + timeout
    try:
        with requests.get(url, headers=headers, timeout=timeout, stream=True) as response:
            if response.status_code == 404:
                raise NotFound(f"no {what} at {url}")
            if response.status_code == 429 or response.status_code >= 500:
                raise DownloadFailed(f"{url} answered HTTP {response.status_code}")
            if response.status_code != 200:
                raise Unreadable(f"{url} answered HTTP {response.status_code}")
            declared = response.headers.get("Content-Length", "")
            if declared.isdigit() and int(declared) > limit:
                raise Unreadable(f"the {what} is {declared} bytes, over the {limit} limit")
            chunks, size = [], 0
            for chunk in response.iter_content(chunk_size=64 * 1024):
                size += len(chunk)
                if size > limit:
                    raise Unreadable(f"the {what} is over the {limit} byte limit")
                if time.monotonic() > deadline:
                    raise DownloadFailed(f"the {what} took longer than {timeout:g}s")
                chunks.append(chunk)
            return Download(
                content=b"".join(chunks),
                url=response.url,
                content_type=response.headers.get("Content-Type", ""),
            )
    except requests.RequestException as exc:
        raise DownloadFailed(f"could not fetch {url}: {exc}") from exc
