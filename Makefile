# Papershelf: `make run` serves the demo on http://127.0.0.1:8000, `make test` runs the suite,
# `make check` the fast loop.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
UV := $(BIN)/uv
PG_URL ?= postgres://root@127.0.0.1:5432/papershelf
HOST ?= 127.0.0.1
PORT ?= 8000

export DEBUG ?= 1
# Links in mail (digests) point where `make run` serves; set SITE_ROOT to override.
export SITE_ROOT ?= http://$(if $(filter 0.0.0.0,$(HOST)),127.0.0.1,$(HOST)):$(PORT)

.PHONY: run test check lint format lock migrate demo worker beat clean bench-import bench profile
.PHONY: bench-replica bench-freshness bench-code-links bench-similar bench-search bench-discovery bench-fulltext
.PHONY: bench-hybrid
.PHONY: api-fuzz fuzz

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# The installer: uv puts a lock into the venv in seconds where pip takes a minute
# or two, checking every file against its hash as pip does, and compiling the
# bytecode as pip does (else each process compiles what it imports, every time
# where PYTHONDONTWRITEBYTECODE is set). It comes from PyPI itself, pinned with
# its hashes (requirements-uv.lock).
$(UV): $(BIN)/python requirements-uv.lock
	$(BIN)/pip install --quiet --require-hashes -r requirements-uv.lock
	touch $@

# Exactly the locked versions, each checked against its hash; reinstalled
# whenever a lock changes. What the site needs to run (`make run`, the workers,
# beat): requirements.lock alone.
$(VENV)/.installed-site: $(UV) requirements.lock
	VIRTUAL_ENV=$(CURDIR)/$(VENV) $(UV) pip install --quiet --require-hashes -r requirements.lock --compile-bytecode
	touch $@

# The same venv with the test, lint, benchmark and locking tools added (`make
# test` and the targets below): the dev lock, whose runtime pins are the same.
$(VENV)/.installed: $(VENV)/.installed-site requirements-dev.lock
	VIRTUAL_ENV=$(CURDIR)/$(VENV) $(UV) pip install --quiet --require-hashes -r requirements-dev.lock --compile-bytecode
	touch $@

# After editing requirements.txt, requirements-dev.txt or requirements-uv.txt:
# pin them and all they pull in, with hashes, into requirements.lock (the
# image's and `make run`'s), requirements-dev.lock (`make test`'s, with the same
# runtime pins) and requirements-uv.lock (the installer). Pins already
# in a lock are kept; `make lock UPGRADE=1` moves everything to the newest
# release. Resolved on Python 3.11 (3.11.3 or newer, as in the image) against PyPI alone, so that
# every hash is one PyPI serves whatever mirror pip is set up with here.
PIP_COMPILE = env -u PIP_INDEX_URL -u PIP_EXTRA_INDEX_URL -u PIP_FIND_LINKS \
	PIP_CONFIG_FILE=/dev/null $(BIN)/pip-compile --quiet --generate-hashes --allow-unsafe \
	--strip-extras --no-emit-index-url --no-emit-find-links $(if $(UPGRADE),--upgrade)
lock: $(VENV)/.installed
	$(PIP_COMPILE) --output-file requirements.lock requirements.txt
	$(PIP_COMPILE) --constraint requirements.lock --output-file requirements-dev.lock \
	  requirements-dev.txt
	$(PIP_COMPILE) --output-file requirements-uv.lock requirements-uv.txt

# Commands typed in another shell (manage.py createsuperuser, send_digests...) read
# .env: `make run` writes one for development on first use and never changes it.
.env:
	printf '# Development settings, written by `make run`. Production sets DEBUG=0 and SECRET_KEY.\nDEBUG=1\nSITE_ROOT=%s\n' "$(SITE_ROOT)" > $@

run: $(VENV)/.installed-site .env
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py load_demo
	$(BIN)/python manage.py runserver $(HOST):$(PORT)

# Browser tests drive Debian's Chromium, the load and flood tests Debian's wrk,
# the production-shape tests Debian's nginx and PgBouncer, each installed when
# missing (never a browser build of Playwright's own).
CHROMIUM := /usr/bin/chromium
WRK := /usr/bin/wrk
NGINX := /usr/sbin/nginx
PGBOUNCER := /usr/sbin/pgbouncer
$(CHROMIUM) $(WRK) $(NGINX) $(PGBOUNCER):
	apt-get install -y $(notdir $@) || (apt-get update && apt-get install -y $(notdir $@))
# The exports' BibTeX is typeset by pdflatex and bibtex in the suite (TeX Live's base).
PDFLATEX := /usr/bin/pdflatex
TEXLIVE := texlive-latex-base texlive-latex-recommended
$(PDFLATEX):
	apt-get install -y --no-install-recommends $(TEXLIVE) || \
	  (apt-get update && apt-get install -y --no-install-recommends $(TEXLIVE))

# The checks that read the code without running it: lint and format, types
# (mypy, configured in pyproject.toml), and no model change without its
# migration (checked against an empty database in memory, so that none needs
# to be running). The layers' import contract is a test (tests/test_architecture.py).
lint: $(VENV)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	DATABASE_URL=sqlite://:memory: $(BIN)/python manage.py makemigrations --check --dry-run

# The suite runs on every core (pytest-xdist), each file's tests in one worker
# (a file's servers and Redis database are its own); the slowest 25 are listed.
PYTEST_WORKERS ?= 2
PYTEST = DATABASE_URL=$${DATABASE_URL:-$(PG_URL)} $(BIN)/pytest -n $(PYTEST_WORKERS) --dist loadfile

# The loop while working (under three minutes): the static checks, then the
# tests not marked slow (none starts a process, server or browser, fuzzes, or
# times password hashes; pyproject.toml's markers).
check: lint
	$(PYTEST) -m "not slow and not long"

test: lint $(CHROMIUM) $(NGINX) $(WRK) $(PDFLATEX) $(PGBOUNCER)
	# Tests marked long (faults timed over minutes) run in `make reliability`.
	$(PYTEST) -m "not long" --durations=25
	# The embedded default: the demo must also come up on a bare SQLite file,
	# search there must find and mark what it does on PostgreSQL, its triggers keep
	# counts and the change log, writes move the rows' versions, and a search of
	# the full texts finds and marks the passages it does on PostgreSQL, and the
	# search box's suggestions and "did you mean" agree with PostgreSQL's.
	DATABASE_URL=sqlite:///$(CURDIR)/.smoke.sqlite3 $(BIN)/pytest tests/test_demo_smoke.py tests/test_search.py \
	  tests/test_search_results.py tests/test_paper_counts.py tests/test_catalog_changes.py tests/test_sync.py \
	  tests/test_fulltext_search.py tests/test_search_suggestions.py
	rm -f .smoke.sqlite3

format: $(VENV)/.installed
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# Every queue in one process for development; production runs a worker per queue
# (docker-compose.yml).
worker: $(VENV)/.installed-site
	$(BIN)/celery -A config worker -Q ingest,enrichment,mail,celery

beat: $(VENV)/.installed-site
	$(BIN)/celery -A config beat

# Snapshot import speed against a raw COPY, in a scratch database (see BENCHMARKS.md).
bench-import: $(VENV)/.installed
	DATABASE_URL=$${DATABASE_URL:-$(PG_URL)} $(BIN)/python -m bench.snapshot_import

# From arXiv's announcement to the paper on / and in the personal feed, with
# gunicorn, a Celery worker and the fake arXiv; needs Redis (REDIS_URL, or
# database 15 of the local one). See BENCHMARKS.md.
bench-freshness: $(VENV)/.installed
	DATABASE_URL=$${DATABASE_URL:-$(PG_URL)} $(BIN)/python -m bench.freshness

# Precision and recall of the code-link extractor on the labelled abstracts.
bench-code-links: $(VENV)/.installed
	$(BIN)/python -m bench.code_links --show-misses

# How topical similar papers and For you are: precision@5 against hand
# judgments of 397 real abstracts, then with the catalog arriving after a
# model fitted on the demo alone (see BENCHMARKS.md).
bench-similar: $(VENV)/.installed
	$(BIN)/python -m bench.similar_quality --show
	$(BIN)/python -m bench.similar_quality --stale

# The list's search on judged queries over the demo and the recorded arXiv
# answers: nDCG@10, precision@5 and searches with no result, on SQLite then
# on PostgreSQL (see BENCHMARKS.md).
bench-search: $(VENV)/.installed
	$(BIN)/python -m bench.search_quality --show
	DATABASE_URL=$${DATABASE_URL:-$(PG_URL)} $(BIN)/python -m bench.search_quality --postgres

# The hybrid search, the search box's suggestions and "did you mean" timed at
# HYBRID_PAPERS synthetic papers, their vectors and neighbours built (BENCHMARKS.md).
HYBRID_PAPERS ?= 100000
bench-hybrid: $(VENV)/.installed
	DATABASE_URL=$${DATABASE_URL:-$(PG_URL)} $(BIN)/python -m bench.hybrid --papers $(HYBRID_PAPERS)

# Search inside papers at FULLTEXTS synthetic stored full texts, in a scratch
# database: build time, storage, index size and the full-text search's p95
# (see BENCHMARKS.md; about 20 minutes at 100,000).
FULLTEXTS ?= 100000
bench-fulltext: $(VENV)/.installed
	DATABASE_URL=$${DATABASE_URL:-$(PG_URL)} $(BIN)/python -m bench.fulltext --papers $(FULLTEXTS)

# Neighbours of N synthetic paper vectors (time, peak memory, recall) and the
# nightly For-you ranking for READERS readers (see BENCHMARKS.md).
VECTORS ?= 1000000
READERS ?= 2000
bench-discovery: $(VENV)/.installed
	$(BIN)/python -m bench.discovery --vectors $(VECTORS) --readers $(READERS)

# The catalog at arXiv's size: N synthetic papers in a scratch database, every
# page timed, the list loaded with wrk, the snapshot import benchmark; writes
# BENCHMARKS.md (about 25 minutes at a million papers).
N ?= 1000000
bench: $(VENV)/.installed $(WRK)
	DATABASE_URL=$${DATABASE_URL:-$(PG_URL)} $(BIN)/python -m bench.run --papers $(N)

# Reads under load on a real streaming replica (a second private cluster made
# by pg_basebackup), directly and through PgBouncer's transaction pools, with
# the replica's lag and a reader's own writes measured; REPLICA_PAPERS papers in
# private clusters, never the machine's own; runs as root (see BENCHMARKS.md).
REPLICA_PAPERS ?= 100000
bench-replica: $(VENV)/.installed $(WRK) $(PGBOUNCER)
	$(BIN)/python -m bench.replica --papers $(REPLICA_PAPERS)

# Where a page's time goes, on the catalog `make bench` built: make profile PROFILE_ARGS="--reader --path /"
PROFILE_ARGS ?= --path /
profile: $(VENV)/.installed
	DATABASE_URL=$${DATABASE_URL:-$(PG_URL)} $(BIN)/python -m bench.profile $(PROFILE_ARGS)

# The API fuzzed from its OpenAPI schema by schemathesis against a live server on
# 127.0.0.1: no 5xx, no answer that breaks the schema. The suite runs a short
# pass of the same test; this one tries API_FUZZ_EXAMPLES cases per operation.
API_FUZZ_EXAMPLES ?= 200
API_FUZZ_SECONDS ?= 600
api-fuzz: $(VENV)/.installed
	API_FUZZ_EXAMPLES=$(API_FUZZ_EXAMPLES) API_FUZZ_SECONDS=$(API_FUZZ_SECONDS) \
	  DATABASE_URL=$${DATABASE_URL:-$(PG_URL)} $(BIN)/pytest tests/test_api_fuzz.py -q -s

# Every public URL with generated queries and form posts (never a 5xx), at
# FUZZ_SCALE times the suite's depth.
FUZZ_SCALE ?= 10
fuzz: $(VENV)/.installed
	FUZZ_SCALE=$(FUZZ_SCALE) DATABASE_URL=$${DATABASE_URL:-$(PG_URL)} \
	  $(BIN)/pytest tests/test_fuzz_public_urls.py -q

clean:
	rm -rf $(VENV) db.sqlite3 .smoke.sqlite3 staticfiles .mypy_cache

.PHONY: e2e reliability load audit lighthouse
# The browser tests alone; they also run in `make test`.
e2e: $(VENV)/.installed $(CHROMIUM)
	DATABASE_URL=$${DATABASE_URL:-$(PG_URL)} $(BIN)/pytest tests/e2e

# Lighthouse scores of the demo under gunicorn with production settings (see BENCHMARKS.md);
# Lighthouse 12 comes from npm through npx, and audits in Debian's Chromium.
lighthouse: $(VENV)/.installed $(CHROMIUM)
	DATABASE_URL=$${DATABASE_URL:-$(PG_URL)} CHROME_PATH=$(CHROMIUM) $(BIN)/python -m bench.lighthouse --runs 3

# Every fault test, with production settings against the PostgreSQL of
# DATABASE_URL and the Redis of REDIS_URL (the ones that stop or cap a server
# start their own): those marked long, which `make test` leaves out, among
# them. Then the load test; see RELIABILITY.md.
reliability: $(VENV)/.installed $(NGINX) $(WRK) load
	DATABASE_URL=$${DATABASE_URL:-$(PG_URL)} \
	  TEST_REDIS_URL=$${TEST_REDIS_URL:-$${REDIS_URL:-redis://127.0.0.1:6379}} \
	  $(BIN)/pytest tests/faults -s

load: $(VENV)/.installed $(WRK)
	DATABASE_URL=$${DATABASE_URL:-$(PG_URL)} $(BIN)/python bench/load.py --duration 60 --connections 32

# Known vulnerabilities in the installed packages, then bandit: medium findings
# are listed for review (accepted ones are explained in RELIABILITY.md), high ones fail.
audit: $(VENV)/.installed
	$(BIN)/pip-audit --progress-spinner off
	$(BIN)/bandit -q -r accounts api catalog config core curation discovery enrichment ingest -x '*/migrations/*' --severity-level medium --exit-zero
	$(BIN)/bandit -q -r accounts api catalog config core curation discovery enrichment ingest -x '*/migrations/*' --severity-level high
