"""Papershelf settings, read from the environment (docs/configuration.md lists every variable)."""

import ipaddress
import math
import re
import tempfile
from email.utils import getaddresses
from pathlib import Path
from typing import Any, TypeVar

import environ
from django.core.exceptions import ImproperlyConfigured

from config.schedule import BEAT_SCHEDULE

BASE_DIR = Path(__file__).resolve().parent.parent

Number = TypeVar("Number", int, float)

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

# Each variable is read once, below, through env or one of these readers. A
# value that cannot be right (a negative size, an unknown choice, a switch
# that is neither on nor off) stops the site from starting, with the
# variable named; an empty number, switch or choice is its default.
# docs/configuration.md has an entry for each (tests/test_configuration.py
# keeps them in step).


def switch(name: str, default: bool) -> bool:
    """An on/off variable: 1, true, on or yes; 0, false, off or no."""
    value = env.str(name, default="").strip().lower()
    if not value:
        return default
    if value in ("1", "true", "on", "yes"):
        return True
    if value in ("0", "false", "off", "no"):
        return False
    raise ImproperlyConfigured(f"{name} is 1 or 0 (true or false, on or off), not {value!r}.")


def number(
    name: str,
    default: Number,
    *,
    unit: str,
    at_least: float | None = None,
    more_than: float | None = None,
    at_most: float | None = None,
) -> Number:
    """A number within its bounds, whole if the default is: e.g.
    number("X", 5, unit="a number of seconds", at_least=1)."""
    raw = env.str(name, default="").strip()
    if not raw:
        return default
    try:
        value = type(default)(raw)
    except ValueError:
        value = None
    if (
        value is None
        or not math.isfinite(value)
        or (at_least is not None and value < at_least)
        or (more_than is not None and value <= more_than)
        or (at_most is not None and value > at_most)
    ):
        if at_least is not None and at_most is not None:
            bounds = f"from {at_least:g} to {at_most:g}"
        elif at_least is not None:
            bounds = f"{at_least:g} or more"
        else:
            bounds = f"more than {more_than:g}"
        shown = raw if value is not None else repr(raw)
        raise ImproperlyConfigured(f"{name} is {unit}, {bounds}, not {shown}.")
    return value


def choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    """One of a few words, in any case; the word as the choices spell it."""
    value = env.str(name, default="").strip() or default
    for known in choices:
        if value.lower() == known.lower():
            return known
    named = [repr(known) for known in choices]
    allowed = f"{', '.join(named[:-1])} or {named[-1]}"
    raise ImproperlyConfigured(f"{name} is {allowed}, not {value!r}.")


# A per-client limit (django-ratelimit): a count and a period of s, m, h or d,
# with an optional multiple: 60/m, 1000/h, 100/5m.
request_rate = re.compile(r"\d+/\d*[smhd][a-z]*", re.IGNORECASE)
# A pace of calls to a model (core/pacing.py): a count per s, m or h: 10/m, 0.5/s.
call_rate = re.compile(r"\d+(\.\d+)?/[smh][a-z]*", re.IGNORECASE)


def rate(name: str, default: str, *, form: re.Pattern[str] = request_rate) -> str:
    """A rate such as 60/m; empty lifts the limit."""
    value: str = env.str(name, default=default).strip()
    if value and (not form.fullmatch(value) or not float(value.split("/")[0])):
        example = "60/m" if form is request_rate else "10/m"
        raise ImproperlyConfigured(
            f"{name} is a rate such as {example}, or empty for none, not {value!r}."
        )
    return value


def link_pattern(name: str, default: str, placeholder: str) -> str:
    """An address with a {placeholder} to fill in, e.g. https://arxiv.org/abs/{id}."""
    value: str = env.str(name, default=default).strip()
    if "{" + placeholder + "}" not in value:
        raise ImproperlyConfigured(f"{name} needs {{{placeholder}}} in it, not {value!r}.")
    return value


DEBUG = switch("DEBUG", default=False)
SECRET_KEY = env("SECRET_KEY", default="dev-only-insecure-key-change-me" if DEBUG else None)
if SECRET_KEY is None:
    # Development without a key is allowed only with DEBUG on, so a forgotten
    # key can never reach production silently.
    raise ImproperlyConfigured("Set SECRET_KEY (or DEBUG=1 for development).")
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])
SITE_NAME = env("SITE_NAME", default="Papershelf")
SITE_ROOT = env("SITE_ROOT", default="http://127.0.0.1:8000")
if not SITE_ROOT.startswith(("http://", "https://")):
    raise ImproperlyConfigured(f"SITE_ROOT is an http:// or https:// address, not {SITE_ROOT!r}.")
CONTACT_EMAIL = env("CONTACT_EMAIL", default="admin@papershelf.example")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "django.contrib.humanize",
    "django_filters",
    "django_celery_beat",
    "csp",
    "django_ratelimit",
    "core",
    "catalog",
    "ingest",
    "enrichment",
    "discovery",
    "editions",
    "allauth",
    "allauth.account",
    "allauth.socialaccount",
    "accounts",
    "discussion",
    "answers",
    "curation",
    # The API (api/) and ninja's own static files for its docs page.
    "ninja",
    "api",
]

MIDDLEWARE = [
    # Forwarded headers from anyone but TRUSTED_PROXIES dropped, the request's id
    # and log line, /healthz answered before the host check and the HTTPS
    # redirect, a view failing for want of the database answered 503 with
    # Retry-After, and the Content-Security-Policy: one layer.
    "config.middleware.EntryMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Under /api/: JSON for every error, whoever raised it, and CORS for anonymous reads.
    "api.middleware.ApiMiddleware",
    # Pages compressed (with Django's BREACH mitigation), event streams not (core.middleware);
    # whitenoise compresses static files.
    "core.middleware.GZipMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "allauth.account.middleware.AccountMiddleware",
    # The reader's saved language, and their answers marked private.
    "accounts.middleware.ReaderMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "core.middleware.RejectNullBytesMiddleware",
    "django_ratelimit.middleware.RatelimitMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "django.template.context_processors.i18n",
                "catalog.context_processors.site",
                "catalog.page_cache.template_reader_parts",
            ],
        },
    },
]

# SQLite is the embedded default so the site runs on a bare machine;
# production and the test suite use PostgreSQL through DATABASE_URL.
DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}")}
DATABASES["default"]["CONN_MAX_AGE"] = number(
    "CONN_MAX_AGE", 60, unit="a number of seconds", at_least=0
)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
# A PostgreSQL read replica takes the reads (config/db_routers.py); a client's
# reads stay on the primary for REPLICA_STICKY_SECONDS after it writes.
DATABASE_REPLICA_URL = env("DATABASE_REPLICA_URL", default="")
REPLICA_STICKY_SECONDS = number(
    "REPLICA_STICKY_SECONDS", 15, unit="a number of seconds", at_least=0
)
if DATABASE_REPLICA_URL:
    DATABASES["replica"] = {
        **env.db_url_config(DATABASE_REPLICA_URL),
        "CONN_MAX_AGE": DATABASES["default"]["CONN_MAX_AGE"],
        "CONN_HEALTH_CHECKS": True,
        "TEST": {"MIRROR": "default"},
    }
    DATABASE_ROUTERS = ["config.db_routers.ReplicaRouter"]
    MIDDLEWARE.insert(
        MIDDLEWARE.index("django.middleware.security.SecurityMiddleware") + 1,
        "config.db_routers.PrimaryAfterWriteMiddleware",
    )
# The database URLs point at a pooler that lends a server connection for one
# transaction at a time (PgBouncer's pool_mode=transaction): nothing may keep
# state on a connection between transactions, so no server-side cursors, and
# core.pacing holds its turns inside a transaction of their own.
DATABASE_TRANSACTION_POOLING = switch("DATABASE_TRANSACTION_POOLING", False)
for _database in DATABASES.values():
    if DATABASE_TRANSACTION_POOLING:
        _database["DISABLE_SERVER_SIDE_CURSORS"] = True
    if "postgresql" in _database["ENGINE"]:
        # A database host that does not answer costs a request 5 s, then a 503
        # (core.outages), rather than the system's minutes-long TCP timeout.
        _database.setdefault("OPTIONS", {}).setdefault("connect_timeout", 5)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env("REDIS_URL", default="")
if REDIS_URL:
    # The cache only speeds things up: with Redis down, reads miss and writes
    # are dropped rather than failing the page, and each process logs one
    # warning a minute about it (config/redis_cache.py).
    CACHES = {
        "default": {
            "BACKEND": "config.redis_cache.FailOpenRedisCache",
            "LOCATION": REDIS_URL,
            "TIMEOUT": 300,
            "OPTIONS": {
                "IGNORE_EXCEPTIONS": True,
                "SOCKET_CONNECT_TIMEOUT": 1,
                "SOCKET_TIMEOUT": 1,
            },
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
# Shared reads and anonymous pages of the catalog (see catalog/cache.py). Only a
# cache every process shares can be invalidated, so without Redis nothing is kept;
# a Redis that is down or slow (over CATALOG_CACHE_TIMEOUT seconds) counts as a miss.
CATALOG_CACHE_URL = env("CATALOG_CACHE_URL", default=REDIS_URL)
CATALOG_CACHE_SECONDS = number("CATALOG_CACHE_SECONDS", 600, unit="a number of seconds", at_least=0)
# The reader's parts of a page (toggles, the account menu), made for each request
# by this factory (catalog/page_cache.py): the catalog never imports accounts.
READER_PARTS = "accounts.reader_parts.reader_parts"
# Who found a paper (its suggesters, the curator who added it), added to the paper
# page's query by this function (catalog/credits.py): the catalog never imports curation.
PAPER_CREDITS = "curation.credits.with_credits"
# The papers nearest in meaning to a search, which the list's search ranks beside
# the papers matching its words (catalog/search.py): the catalog never imports discovery.
SEARCH_NEIGHBOURS = "discovery.search.papers_near"


# Each store of fragments each process keeps rendered (core/fragments.py) is
# sized on its own; 0 renders every one on every request. Paper cards for
# lists (catalog/cards.py), about 3 KB each:
PAPER_CARD_CACHE_SIZE = number(
    "PAPER_CARD_CACHE_SIZE", 5000, unit="a number of fragments", at_least=0
)
# the tag and category indexes' cards, one per language and state of the catalog:
INDEX_CARDS_CACHE_SIZE = number(
    "INDEX_CARDS_CACHE_SIZE", 20, unit="a number of fragments", at_least=0
)
# list filters, one per choice of values (catalog/filters.py):
FILTER_FORM_CACHE_SIZE = number(
    "FILTER_FORM_CACHE_SIZE", 1000, unit="a number of fragments", at_least=0
)
# the reader's toggles and menus (accounts/reader_parts.py), one per state, tag
# or category and language, and one account menu per reader:
READER_PARTS_CACHE_SIZE = number(
    "READER_PARTS_CACHE_SIZE", 5000, unit="a number of fragments", at_least=0
)
# why a paper is on For you, one per saved paper or followed tag named and language:
FOR_YOU_REASONS_CACHE_SIZE = number(
    "FOR_YOU_REASONS_CACHE_SIZE", 2000, unit="a number of fragments", at_least=0
)
# a discussion's comments (discussion/rendering.py), one per state of a comment,
# language and time zone, about 1 KB each:
COMMENT_CACHE_SIZE = number("COMMENT_CACHE_SIZE", 5000, unit="a number of fragments", at_least=0)
# A Redis on the same network answers in a millisecond or two; one slower than
# this counts as down (a miss), so that a sick cache costs each lookup a
# quarter of a second at most.
CATALOG_CACHE_TIMEOUT = 0.25
# In production the catalog cache is a Redis of its own, capped with maxmemory
# and evicting least recently used keys (docker-compose.yml's "cache"): anyone
# can make it store pages, and it must never crowd out the Celery broker.
CATALOG_CACHE_REDIS = {
    "BACKEND": "config.redis_cache.QuietRedisCache",
    "LOCATION": CATALOG_CACHE_URL,
    "KEY_PREFIX": "papershelf",
    "OPTIONS": {
        "IGNORE_EXCEPTIONS": True,
        "SOCKET_CONNECT_TIMEOUT": CATALOG_CACHE_TIMEOUT,
        "SOCKET_TIMEOUT": CATALOG_CACHE_TIMEOUT,
        # Pages shrink three- to tenfold, and as many times more fit in memory.
        "COMPRESSOR": "django_redis.compressors.zlib.ZlibCompressor",
    },
}
CACHES["catalog"] = (
    CATALOG_CACHE_REDIS
    if CATALOG_CACHE_URL
    else {"BACKEND": "django.core.cache.backends.dummy.DummyCache"}
)
# Sessions live in the database, read through the page cache's Redis when there
# is one (in production a Redis of its own, capped and evicting: never the
# broker's): a logged-in page spends no query on its session, and an evicted
# one is read from its row. Only a cache every process shares will do, or a
# logout in one process would stay unseen by the others. Expired sessions are
# deleted nightly (config/schedule.py).
if CATALOG_CACHE_URL:
    CACHES["sessions"] = {**CATALOG_CACHE_REDIS, "KEY_PREFIX": "papershelf-session"}
    SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
    SESSION_CACHE_ALIAS = "sessions"
# Errors the Redis caches ignore go to config.redis_cache.outage_log.
DJANGO_REDIS_LOG_IGNORED_EXCEPTIONS = True

PASSWORD_HASHERS = [
    "django.contrib.auth.hashers.Argon2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
]
# OWASP ASVS level 1: at least 12 characters, and none of the 20,000 most
# common passwords (Django's bundled list, checked offline).
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {
        "NAME": "django.contrib.auth.password_validation.MinimumLengthValidator",
        "OPTIONS": {"min_length": 12},
    },
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("ko", "한국어"), ("zh-hans", "简体中文")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = env.path("STATIC_ROOT", default=BASE_DIR / "staticfiles")
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES: dict[str, dict[str, Any]] = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}
MEDIA_URL = "/media/"
MEDIA_ROOT = env.path("MEDIA_ROOT", default=BASE_DIR / "media")
# Uploaded media (preview images) go to an S3-compatible bucket when one is named,
# and otherwise live under MEDIA_ROOT, which the site serves itself at MEDIA_URL
# unless SERVE_MEDIA is off because a proxy in front serves that folder.
STORAGE_BUCKET = env("STORAGE_BUCKET", default="")
if STORAGE_BUCKET:
    STORAGES["default"] = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": STORAGE_BUCKET,
            "endpoint_url": env("STORAGE_ENDPOINT_URL", default=None),
            "region_name": env("STORAGE_REGION", default=None),
            "access_key": env("STORAGE_ACCESS_KEY", default=None),
            "secret_key": env("STORAGE_SECRET_KEY", default=None),
            "custom_domain": env("STORAGE_CUSTOM_DOMAIN", default=None),
            "querystring_auth": False,
            "file_overwrite": False,
        },
    }
SERVE_MEDIA = switch("SERVE_MEDIA", default=not STORAGE_BUCKET)

EMAIL_BACKEND = env(
    "EMAIL_BACKEND",
    default="django.core.mail.backends.console.EmailBackend"
    if DEBUG
    else "django.core.mail.backends.smtp.EmailBackend",
)
EMAIL_HOST = env("EMAIL_HOST", default="localhost")
EMAIL_PORT = number("EMAIL_PORT", 25, unit="a port", at_least=1, at_most=65535)
EMAIL_HOST_USER = env("EMAIL_HOST_USER", default="")
EMAIL_HOST_PASSWORD = env("EMAIL_HOST_PASSWORD", default="")
EMAIL_USE_TLS = switch("EMAIL_USE_TLS", default=False)
# A mail server that stops answering must not hold a request or a worker forever.
EMAIL_TIMEOUT = number("EMAIL_TIMEOUT", 30, unit="a number of seconds", at_least=1)
DEFAULT_FROM_EMAIL = env("DEFAULT_FROM_EMAIL", default=f"{SITE_NAME} <noreply@papershelf.example>")
SERVER_EMAIL = DEFAULT_FROM_EMAIL

# The reverse proxies in front of the site (addresses or networks: the nginx
# of docker-compose.yml), the only peers whose X-Forwarded-For,
# X-Forwarded-Proto and X-Request-ID are believed (core.http). Every
# per-address limit reads the client's address through core.http.client_ip.
TRUSTED_PROXIES = env.list("TRUSTED_PROXIES", default=[])
for _proxy in TRUSTED_PROXIES:
    try:
        ipaddress.ip_network(_proxy, strict=False)
    except ValueError as _error:
        raise ImproperlyConfigured(f"TRUSTED_PROXIES: {_error}") from _error
RATELIMIT_IP_META_KEY = "core.http.client_ip"
# Per-address limits on anonymous readers (core/limits.py), counted in the
# default cache; an empty value lifts one. Logged-in readers are not limited.
RATELIMIT_ENABLE = switch("RATELIMIT_ENABLE", default=True)
RATELIMIT_VIEW = "core.views.too_many_requests"
# The cache fails open (config/redis_cache.py): with Redis down nothing is limited.
RATELIMIT_FAIL_OPEN = True
PAGE_RATE_LIMIT = rate("PAGE_RATE_LIMIT", "300/m")
SEARCH_RATE_LIMIT = rate("SEARCH_RATE_LIMIT", "60/m")
FEED_RATE_LIMIT = rate("FEED_RATE_LIMIT", "60/m")
# Upvotes and their taking back, per reader, on the site and in the API alike.
VOTE_RATE_LIMIT = rate("VOTE_RATE_LIMIT", "30/m")
# Comments a reader may post, and comments one address may post (discussion.services).
COMMENT_READER_RATE_LIMIT = rate("COMMENT_READER_RATE_LIMIT", "5/m")
COMMENT_ADDRESS_RATE_LIMIT = rate("COMMENT_ADDRESS_RATE_LIMIT", "20/h")
# A comment's length, how long its author may edit it, and the links an account
# younger than DISCUSSION_NEW_ACCOUNT_DAYS may put in one.
COMMENT_MAX_LENGTH = number("COMMENT_MAX_LENGTH", 5000, unit="a number of characters", at_least=1)
COMMENT_EDIT_MINUTES = number("COMMENT_EDIT_MINUTES", 15, unit="a number of minutes", at_least=0)
DISCUSSION_NEW_ACCOUNT_DAYS = number(
    "DISCUSSION_NEW_ACCOUNT_DAYS", 3, unit="a number of days", at_least=0
)
DISCUSSION_NEW_ACCOUNT_LINKS = number(
    "DISCUSSION_NEW_ACCOUNT_LINKS", 0, unit="a number of links", at_least=0
)
# Questions a reader may ask of papers (answers.services), and the answers the
# model may be asked for in a day across the site; 0 shows readers the passages alone.
ASK_READER_RATE_LIMIT = rate("ASK_READER_RATE_LIMIT", "20/h")
ASK_DAILY_BUDGET = number("ASK_DAILY_BUDGET", 1000, unit="a number of answers", at_least=0)
SILENCED_SYSTEM_CHECKS = [
    # django-ratelimit knows django-redis's cache, not our subclasses of it.
    "django_ratelimit.W001",
    # Without Redis (development) each process counts for itself.
    *([] if REDIS_URL else ["django_ratelimit.E003"]),
]

# Production hardening; each switch follows DEBUG unless set explicitly.
# Only a proxy can say the client came over HTTPS: from anyone else the header
# is dropped (config.middleware.EntryMiddleware).
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if TRUSTED_PROXIES else None
SECURE_SSL_REDIRECT = switch("SECURE_SSL_REDIRECT", default=not DEBUG)
SESSION_COOKIE_SECURE = switch("SESSION_COOKIE_SECURE", default=not DEBUG)
CSRF_COOKIE_SECURE = switch("CSRF_COOKIE_SECURE", default=not DEBUG)
SECURE_HSTS_SECONDS = number(
    "SECURE_HSTS_SECONDS", 0 if DEBUG else 31536000, unit="a number of seconds", at_least=0
)
SECURE_HSTS_INCLUDE_SUBDOMAINS = not DEBUG
SECURE_HSTS_PRELOAD = not DEBUG
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# The site's own templates use no inline script or style, and neither does the
# admin; keep it so. Forms may post on to the OAuth providers' sign-in pages.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        # Preview images may come from a storage bucket's own domain.
        "img-src": ["'self'", "data:", "https:"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "frame-ancestors": ["'none'"],
        "form-action": ["'self'", "https://github.com", "https://accounts.google.com"],
    }
}

# Links derived from an arXiv id, kept here so the patterns can change by setting.
ARXIV_ABS_URL = link_pattern("ARXIV_ABS_URL", "https://arxiv.org/abs/{id}", "id")
ARXIV_PDF_URL = link_pattern("ARXIV_PDF_URL", "https://arxiv.org/pdf/{id}", "id")
PAPER_COMMUNITY_URL = link_pattern(
    "PAPER_COMMUNITY_URL", "https://huggingface.co/papers/{id}", "id"
)

PAPERS_PER_PAGE = 20
# A form may send this many fields (Django's default: 1,000). The admin's form
# of a busy day's edition sends five for each of its hundreds of papers; past
# the limit Django refuses the whole form with a 400 and the curator could not
# save it.
DATA_UPLOAD_MAX_NUMBER_FIELDS = 10_000
# Sorting a search by relevance ranks only its newest matches, this many: ranking
# every match of a common word (half the catalog) takes seconds. The list says so.
SEARCH_RELEVANCE_CANDIDATES = number(
    "SEARCH_RELEVANCE_CANDIDATES", 2000, unit="a number of papers", at_least=1
)

# arXiv access. arXiv's terms ask for at most one request every three seconds,
# one connection at a time, and a User-Agent saying who is asking.
ARXIV_API_URL = env("ARXIV_API_URL", default="https://export.arxiv.org/api/query")
ARXIV_OAI_URL = env("ARXIV_OAI_URL", default="https://oaipmh.arxiv.org/oai")
ARXIV_USER_AGENT = env(
    "ARXIV_USER_AGENT", default=f"{SITE_NAME} ({SITE_ROOT}; mailto:{CONTACT_EMAIL})"
)
ARXIV_DELAY_SECONDS = number("ARXIV_DELAY_SECONDS", 3.0, unit="a number of seconds", at_least=0)
ARXIV_REQUEST_TIMEOUT = number(
    "ARXIV_REQUEST_TIMEOUT", 30.0, unit="a number of seconds", more_than=0
)
# The API gives at most 2,000 entries a request.
ARXIV_PAGE_SIZE = number(
    "ARXIV_PAGE_SIZE", 100, unit="a number of entries", at_least=1, at_most=2000
)
# Failed requests are retried with exponential backoff and jitter, never
# waiting longer than ARXIV_RETRY_MAX_WAIT, even when Retry-After asks for more:
# waits of 5, 10, 20, 40 and 80 s, two and a half minutes of 429s, 5xx or
# timeouts before the source counts as unreadable until its next run. Fixed:
# they follow arXiv's behaviour, not a deployment's.
ARXIV_MAX_RETRIES = 5
ARXIV_RETRY_BASE_WAIT = 5.0
ARXIV_RETRY_MAX_WAIT = 300.0
# A command someone waits for at a terminal (add_papers) stops retrying after
# this long and says arXiv could not be read; workers keep the retries above.
# Twenty seconds is as long as anyone watches a prompt that says nothing.
ARXIV_COMMAND_RETRY_SECONDS = 20.0
# A paper appears in the API hours to days after its "updated" time (arXiv
# announces in daily batches, not over weekends), so each run pages back this
# far before the previous successful run: four days cover a long weekend.
ARXIV_UPDATED_LOOKBACK_HOURS = 96.0
# The other sources adding by link reads papers from, each paced by a turn of
# its own (ingest.http), with the arXiv client's User-Agent, timeout and
# retries. Crossref's public API asks clients that name a mailto in the
# User-Agent (its "polite" pool) to stay within its published rate limit;
# OpenReview and the ACL Anthology publish none, so they are asked as gently.
CROSSREF_API_URL = env("CROSSREF_API_URL", default="https://api.crossref.org")
CROSSREF_DELAY_SECONDS = number(
    "CROSSREF_DELAY_SECONDS", 1.0, unit="a number of seconds", at_least=0
)
OPENREVIEW_API_URL = env("OPENREVIEW_API_URL", default="https://api2.openreview.net")
OPENREVIEW_DELAY_SECONDS = number(
    "OPENREVIEW_DELAY_SECONDS", 1.0, unit="a number of seconds", at_least=0
)
ACL_ANTHOLOGY_URL = env("ACL_ANTHOLOGY_URL", default="https://aclanthology.org")
ACL_ANTHOLOGY_DELAY_SECONDS = number(
    "ACL_ANTHOLOGY_DELAY_SECONDS", 1.0, unit="a number of seconds", at_least=0
)
# Listing feeds: {categories} is "cs.CL+cs.LG". arXiv announces at 20:00 US
# Eastern and rebuilds the feeds around midnight Eastern; until a source's
# listing is out its query brings what the API already has, and a listing
# still missing LISTING_LATE_MINUTES after the announcement is reported: five
# hours is an hour past arXiv's own midnight rebuild, at 01:00 Eastern.
ARXIV_LISTING_URL = link_pattern(
    "ARXIV_LISTING_URL", "https://rss.arxiv.org/rss/{categories}", "categories"
)
LISTING_LATE_MINUTES = 300
# Announced papers the API does not give yet are asked for again at every
# check for this long, then reported as given up (the query catches them later):
# a day, until the next announcement.
LISTING_AWAIT_HOURS = 24.0
# A running ingest run writes a heartbeat several times within this many
# seconds (at least every minute); one whose heartbeat is older belongs to a
# worker that died: it is marked interrupted and its source's claim released,
# by the next claim of the source or by the sweep beat runs every minute.
INGEST_RUN_STALE_SECONDS = number(
    "INGEST_RUN_STALE_SECONDS", 180, unit="a number of seconds", at_least=1
)

# Logs (config/logging.py): one line an event on stderr, with its time, level,
# logger and the request or Celery task it belongs to; LOG_FORMAT=json writes
# one JSON object a line for log shippers. The web server (config/gunicorn.py)
# and Celery (config/celery.py) log through this same configuration. Errors
# are mailed to ADMINS ("Name <address>, address"), each distinct one at most
# once every ERROR_MAIL_INTERVAL seconds a process, and reach Sentry when
# SENTRY_DSN is set.
LOG_LEVEL = choice("LOG_LEVEL", "INFO", ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"))
LOG_FORMAT = choice("LOG_FORMAT", "text", ("text", "json"))
ADMINS = [
    (name or address, address)
    for name, address in getaddresses([env("ADMINS", default="")])
    if name or address
]
if any("@" not in address for _, address in ADMINS):
    raise ImproperlyConfigured("ADMINS is a comma-separated list of email addresses.")
ERROR_MAIL_INTERVAL = number("ERROR_MAIL_INTERVAL", 600, unit="a number of seconds", at_least=0)
EMAIL_SUBJECT_PREFIX = f"[{SITE_NAME}] "
LOGGING_CONFIG = "config.logging.configure"
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {
        "context": {"()": "config.logging.ContextFilter"},
        "require_debug_false": {"()": "django.utils.log.RequireDebugFalse"},
    },
    "formatters": {
        "text": {"()": "config.logging.TextFormatter"},
        "json": {"()": "config.logging.JsonFormatter"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": LOG_FORMAT,
            "filters": ["context"],
        },
        "mail_admins": {
            "class": "config.logging.ThrottledAdminEmailHandler",
            "level": "ERROR",
            "filters": ["require_debug_false", "context"],
            # The mail opens with the log line: its time and request or task id.
            "formatter": "text",
        },
    },
    "root": {"handlers": ["console", "mail_admins"], "level": LOG_LEVEL},
    "loggers": {
        # Django's and gunicorn's own handlers are replaced: their lines go
        # through the root's, like everyone else's.
        **{
            name: {"handlers": [], "level": "NOTSET", "propagate": True}
            for name in ("django", "gunicorn.error")
        },
        # The site logs every request with its status itself (papershelf.access,
        # with the request id, secret URL tokens masked); gunicorn's access
        # lines, and Django's and runserver's for client errors, would repeat
        # them. Server errors are still logged, with their traceback.
        "gunicorn.access": {"handlers": [], "propagate": False},
        "django.request": {"handlers": [], "level": "ERROR", "propagate": True},
        "django.server": {"handlers": [], "level": "ERROR", "propagate": True},
        # Requests naming a host the site does not serve are scanners' noise,
        # a client error: logged, never mailed.
        "django.security.DisallowedHost": {"handlers": ["console"], "propagate": False},
        # faiss tells at INFO which of its builds it loads, starting with "Could
        # not load library with AVX512 support" on every CPU without AVX512: no
        # fault (if no build loads, importing faiss raises). Its warnings still show.
        "faiss.loader": {"level": "WARNING"},
    },
}
SENTRY_DSN = env("SENTRY_DSN", default="")
SENTRY_TRACES_SAMPLE_RATE = number(
    "SENTRY_TRACES_SAMPLE_RATE", 0.0, unit="a share of requests", at_least=0, at_most=1
)
if SENTRY_DSN:
    import sentry_sdk
    from sentry_sdk.integrations.celery import CeleryIntegration
    from sentry_sdk.integrations.django import DjangoIntegration
    from sentry_sdk.integrations.logging import ignore_logger

    sentry_sdk.init(
        dsn=SENTRY_DSN,
        environment=env("SENTRY_ENVIRONMENT", default="production"),
        release=env("SENTRY_RELEASE", default=None),
        integrations=[DjangoIntegration(), CeleryIntegration()],
        traces_sample_rate=SENTRY_TRACES_SAMPLE_RATE,
        send_default_pii=False,
    )
    ignore_logger("django.security.DisallowedHost")

# Celery: Redis is the broker when REDIS_URL is set; without it tasks run
# eagerly in-process so the site works on a bare machine.
CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_RESULT_BACKEND = None
CELERY_TASK_ALWAYS_EAGER = switch("CELERY_TASK_ALWAYS_EAGER", default=not REDIS_URL)
CELERY_TASK_EAGER_PROPAGATES = True
# Without a broker, work started from a page runs in a thread beside the request
# (see core/background.py) rather than holding the page until it is done.
EAGER_TASKS_IN_THREADS = switch("EAGER_TASKS_IN_THREADS", default=True)
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# A message a worker holds (until its task is done: acks late) is handed to
# another worker once untouched for BROKER_VISIBILITY_TIMEOUT seconds. Workers
# touch theirs every 10 s (config/worker.py), so only a dead worker's are:
# every task it held runs again within the timeout plus one restore sweep
# (unacked_restore_interval; every sweep scans: throttle 1), two minutes and a
# bit, however long tasks run. The restore lock a worker killed while holding
# it leaves behind expires after a minute.
BROKER_VISIBILITY_TIMEOUT = 120
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": BROKER_VISIBILITY_TIMEOUT,
    "unacked_restore_interval": 10,
    "unacked_restore_throttle": 1,
    "unacked_mutex_expire": 60,
}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A task published while Redis is briefly away (a restart, a failover) is
# retried for about 15 seconds before the error reaches the caller.
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 10,
    "interval_start": 0,
    "interval_step": 0.5,
    "interval_max": 2,
}
# One queue a kind of work, each served by its own workers in production, so a
# slow model or a long harvest never delays the digests (`make worker` serves all).
CELERY_TASK_ROUTES = {
    # The sweep for runs whose worker died must not wait behind long ingest runs.
    "ingest.tasks.interrupt_stale_runs": {"queue": "celery"},
    "ingest.tasks.*": {"queue": "ingest"},
    "enrichment.tasks.*": {"queue": "enrichment"},
    "discovery.tasks.*": {"queue": "enrichment"},
    # The nightly recommendations are heavy reading, not mail: they must not
    # hold up digests.
    "accounts.tasks.refresh_recommendations": {"queue": "enrichment"},
    # Upvote counts are recounted beside trending, not behind the digests.
    "accounts.tasks.refresh_vote_counts": {"queue": "celery"},
    "accounts.tasks.*": {"queue": "mail"},
    "discussion.tasks.*": {"queue": "mail"},
}
CELERY_TASK_DEFAULT_QUEUE = "celery"
# django-celery-beat's scheduler, leaving a heartbeat for the health check.
CELERY_BEAT_SCHEDULER = "config.beat:HeartbeatScheduler"
CELERY_BEAT_SCHEDULE = BEAT_SCHEDULE
BEAT_HEARTBEAT_FILE = env.path(
    "BEAT_HEARTBEAT_FILE", default=Path(tempfile.gettempdir()) / "papershelf-beat-heartbeat"
)
CELERY_TIMEZONE = TIME_ZONE

# Accounts: sign-up and log-in by email (django-allauth), feeds and digests.
# One backend for every log-in form, the admin's included: one password hash
# per attempt, whatever the outcome (accounts/backends.py).
AUTHENTICATION_BACKENDS = ["accounts.backends.AuthenticationBackend"]
ACCOUNT_ADAPTER = "accounts.adapter.AccountAdapter"
LOGIN_URL = "account_login"
LOGIN_REDIRECT_URL = "accounts:feed"
ACCOUNT_LOGIN_METHODS = {"email"}
ACCOUNT_SIGNUP_FIELDS = ["email*", "password1*", "password2*"]
ACCOUNT_UNIQUE_EMAIL = True
ACCOUNT_EMAIL_VERIFICATION = "mandatory"
ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION = True
ACCOUNT_CHANGE_EMAIL = True
ACCOUNT_EMAIL_SUBJECT_PREFIX = f"[{SITE_NAME}] "
ACCOUNT_DEFAULT_HTTP_PROTOCOL = SITE_ROOT.split(":", 1)[0]
# Readers are named by the address they signed up with, never by the username
# allauth generates for Django's user table.
ACCOUNT_USER_DISPLAY = "accounts.models.reader_name"
# After LOGIN_FAILURES_ALLOWED wrong passwords for one account from one address
# within LOGIN_LOCKOUT_SECONDS, further attempts from there are refused until the
# window passes; one address may fail 20 times a minute whatever the accounts.
# The admin's log-in shares these counts (accounts/forms.py).
LOGIN_FAILURES_ALLOWED = number(
    "LOGIN_FAILURES_ALLOWED", 5, unit="a number of attempts", at_least=1
)
LOGIN_LOCKOUT_SECONDS = number("LOGIN_LOCKOUT_SECONDS", 900, unit="a number of seconds", at_least=1)
ACCOUNT_RATE_LIMITS = {
    "login_failed": f"20/m/ip,{LOGIN_FAILURES_ALLOWED}/{LOGIN_LOCKOUT_SECONDS}s/key",
}
# Log-in with GitHub or Google, for each whose OAuth app is given: its client
# id and secret, both or neither.
SOCIALACCOUNT_PROVIDERS = {}
_oauth_apps = {
    "github": (
        env("GITHUB_CLIENT_ID", default=""),
        env("GITHUB_SECRET", default=""),
        ["user:email"],
    ),
    "google": (
        env("GOOGLE_CLIENT_ID", default=""),
        env("GOOGLE_SECRET", default=""),
        ["profile", "email"],
    ),
}
for _provider, (_client_id, _secret, _scope) in _oauth_apps.items():
    if bool(_client_id) != bool(_secret):
        _prefix = _provider.upper()
        raise ImproperlyConfigured(
            f"{_prefix}_CLIENT_ID and {_prefix}_SECRET go together: set both, or neither."
        )
    if _client_id:
        INSTALLED_APPS.append(f"allauth.socialaccount.providers.{_provider}")
        SOCIALACCOUNT_PROVIDERS[_provider] = {
            "APPS": [{"client_id": _client_id, "secret": _secret}],
            "SCOPE": _scope,
        }
# Digests go out at this hour (UTC): daily ones every day, weekly ones on Mondays.
DIGEST_HOUR = number("DIGEST_HOUR", 6, unit="an hour of the day", at_least=0, at_most=23)
# A digest's one-click unsubscribe link works for this long after it is sent:
# a quarter, longer than anyone leaves a digest unread, short enough that a
# leaked link does not work forever.
DIGEST_UNSUBSCRIBE_LINK_DAYS = 90
EMAIL_FILE_PATH = env("EMAIL_FILE_PATH", default=str(BASE_DIR / "sent-emails"))
# Papers a reader may suggest to the curators in a day.
SUGGESTIONS_PER_DAY = number("SUGGESTIONS_PER_DAY", 20, unit="a number of papers", at_least=0)
# API tokens a reader may hold at once (see api/ and the subscriptions page):
# one for each script or feed reader they run, with room to rotate them.
API_TOKENS_PER_READER = 10
# Requests to /api/: anonymous ones per client address, token ones per token.
API_RATE_LIMIT = rate("API_RATE_LIMIT", "120/m")
API_TOKEN_RATE_LIMIT = rate("API_TOKEN_RATE_LIMIT", "600/m")
# The most papers one export (BibTeX, RIS, CSL-JSON) holds.
EXPORT_MAX_PAPERS = number("EXPORT_MAX_PAPERS", 1000, unit="a number of papers", at_least=1)

# Enrichment: summaries, key takeaways and translations of the abstract, and
# preview images of the paper (see docs/operations.md).
# SUMMARY_BACKEND "extractive" needs no model; "openai" talks to any
# OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, Ollama...).
SUMMARY_BACKEND = choice("SUMMARY_BACKEND", "extractive", ("extractive", "openai"))
LLM_BASE_URL = env("LLM_BASE_URL", default="")
LLM_API_KEY = env("LLM_API_KEY", default="")
LLM_MODEL = env("LLM_MODEL", default="")
if SUMMARY_BACKEND == "openai" and not LLM_MODEL:
    raise ImproperlyConfigured("SUMMARY_BACKEND=openai needs LLM_MODEL.")
LLM_TIMEOUT = number("LLM_TIMEOUT", 120.0, unit="a number of seconds", more_than=0)
# HTTP-level retries (429, 5xx, timeouts) done by the client with backoff,
# and whole attempts when the answer fails validation.
LLM_MAX_RETRIES = number("LLM_MAX_RETRIES", 3, unit="a number of retries", at_least=0)
LLM_ATTEMPTS = number("LLM_ATTEMPTS", 3, unit="a number of attempts", at_least=1)
LLM_MAX_TOKENS = number("LLM_MAX_TOKENS", 3000, unit="a number of tokens", at_least=1)
# Translations of the abstract are made into each of these languages.
SUMMARY_LANGUAGES = env.list("SUMMARY_LANGUAGES", default=["zh-hans", "ko"])
# New papers are enriched as ingest brings them: all of them, or only those in
# these tags (slugs). Machine output is a draft for a curator to publish unless
# SUMMARY_AUTO_PUBLISH is on.
SUMMARY_AUTO = switch("SUMMARY_AUTO", default=True)
SUMMARY_AUTO_TAGS = env.list("SUMMARY_AUTO_TAGS", default=[])
SUMMARY_AUTO_PUBLISH = switch("SUMMARY_AUTO_PUBLISH", default=False)
SUMMARY_RATE_LIMIT = rate("SUMMARY_RATE_LIMIT", "10/m", form=call_rate)
PREVIEW_AUTO = switch("PREVIEW_AUTO", default=True)
# Show each paper's first page, where it has one, as a thumbnail in lists.
PREVIEW_LIST_THUMBNAILS = switch("PREVIEW_LIST_THUMBNAILS", default=True)
# Larger or slower PDFs are reported and skipped.
PREVIEW_MAX_PDF_BYTES = number(
    "PREVIEW_MAX_PDF_BYTES", 40 * 1024 * 1024, unit="a number of bytes", at_least=1
)
PREVIEW_TIMEOUT = number("PREVIEW_TIMEOUT", 60.0, unit="a number of seconds", more_than=0)
# The preview images the paper page and the lists show (enrichment/previews.py):
# the first page rendered 1000 px wide, and up to 3 of the largest figures of
# the first 4 pages. Fixed: the page's layout is made for them.
PREVIEW_PAGE_WIDTH = 1000
PREVIEW_MAX_FIGURES = 3
PREVIEW_FIGURE_PAGES = 4
# Full texts (enrichment/fulltext.py): arXiv's HTML rendering of a paper, else
# its PDF's text, read for curated papers (those in a tag) or for all of them.
ARXIV_HTML_URL = link_pattern("ARXIV_HTML_URL", "https://arxiv.org/html/{id}", "id")
FULLTEXT_PAPERS = choice("FULLTEXT_PAPERS", "curated", ("curated", "all"))
FULLTEXT_AUTO = switch("FULLTEXT_AUTO", default=True)
# Larger or slower downloads (a page, a PDF, a figure) are reported and skipped.
FULLTEXT_MAX_BYTES = number(
    "FULLTEXT_MAX_BYTES", 40 * 1024 * 1024, unit="a number of bytes", at_least=1
)
FULLTEXT_TIMEOUT = number("FULLTEXT_TIMEOUT", 60.0, unit="a number of seconds", more_than=0)
# Bounds on what one paper may hold, so that an odd one cannot fill the
# workers' memory or the database: a longer text, a PDF of more pages or one
# whose text takes longer to read is reported rather than stored in part.
# Figures past the first 40 keep their caption alone (each picture is a
# request to arXiv), and
# each is stored at most 1600 px wide.
FULLTEXT_MAX_CHARACTERS = 2_000_000
FULLTEXT_MAX_PDF_PAGES = 300
FULLTEXT_PARSE_SECONDS = 60.0
FULLTEXT_MAX_FIGURES = 40
FULLTEXT_FIGURE_WIDTH = 1600

# Discovery: every paper gets a text vector, its nearest neighbours are
# precomputed into catalog.SimilarPaper, and readers get recommendations
# (see docs/operations.md). EMBEDDING_BACKEND "tfidf" needs nothing outside the project;
# "openai" asks any OpenAI-compatible /v1/embeddings endpoint.
EMBEDDING_BACKEND = choice("EMBEDDING_BACKEND", "tfidf", ("tfidf", "openai"))
EMBEDDING_BASE_URL = env("EMBEDDING_BASE_URL", default="")
EMBEDDING_API_KEY = env("EMBEDDING_API_KEY", default="")
EMBEDDING_MODEL = env("EMBEDDING_MODEL", default="")
if EMBEDDING_BACKEND == "openai" and not EMBEDDING_MODEL:
    raise ImproperlyConfigured("EMBEDDING_BACKEND=openai needs EMBEDDING_MODEL.")
# Every answer must have exactly this many dimensions (the tf-idf backend
# reduces to at most this many).
EMBEDDING_DIMENSIONS = number(
    "EMBEDDING_DIMENSIONS", 256, unit="a number of dimensions", at_least=1
)
EMBEDDING_TIMEOUT = number("EMBEDDING_TIMEOUT", 60.0, unit="a number of seconds", more_than=0)
EMBEDDING_MAX_RETRIES = number("EMBEDDING_MAX_RETRIES", 3, unit="a number of retries", at_least=0)
EMBEDDING_ATTEMPTS = number("EMBEDDING_ATTEMPTS", 3, unit="a number of attempts", at_least=1)
EMBEDDING_BATCH_SIZE = number("EMBEDDING_BATCH_SIZE", 64, unit="a number of papers", at_least=1)
EMBEDDING_RATE_LIMIT = rate("EMBEDDING_RATE_LIMIT", "60/m", form=call_rate)
# The fitted tf-idf model and the neighbour index, written by workers and read
# by workers only (never by the web): a volume the worker containers share.
VECTOR_DIR = env.path("VECTOR_DIR", default=BASE_DIR / "data" / "vectors")
# The nightly dump of the catalog (api.dump), written by a worker and served by
# the web: a folder both see.
DUMP_DIR = env.path("DUMP_DIR", default=BASE_DIR / "data" / "dumps")
# The tf-idf model is fitted on at most this many papers (a random sample; the
# fit's memory grows with it).
VECTOR_FIT_SAMPLE = number("VECTOR_FIT_SAMPLE", 200_000, unit="a number of papers", at_least=1)
# It is fitted again when the catalog has moved on from it, as measured
# (discovery.vectors.refit_reason): grown by a quarter, or its new papers
# knowing a tenth less of their words in the vocabulary than the fitted ones
# did. A refit makes every vector stale, so not for less: a million papers'
# catalog grows by a quarter in about a year; the demo grown into the judged
# pool (bench.similar_quality --stale) by six times.
VECTOR_REFIT_GROWTH = 0.25
VECTOR_REFIT_DRIFT = 0.1
# Neighbours kept for each paper: the paper page shows this many similar papers.
SIMILAR_PAPERS = 10
# New and changed papers get their vectors and neighbours by a task as they
# arrive, and `load_demo` builds the demo's at once.
DISCOVERY_AUTO = switch("DISCOVERY_AUTO", default=True)
# For you: recent papers ranked for each reader, recomputed nightly, over this
# many days: the longest period the list's filter offers ("365d", catalog/filters.py).
FOR_YOU_DAYS = 365
