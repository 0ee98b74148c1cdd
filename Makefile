# Papershelf: `make run` serves the demo on http://127.0.0.1:8000, `make test` runs the suite.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PG_URL ?= postgres://root@127.0.0.1:5432/papershelf
HOST ?= 127.0.0.1
PORT ?= 8000

export DEBUG ?= 1
# Links in mail (digests) point where `make run` serves; set SITE_ROOT to override.
export SITE_ROOT ?= http://$(if $(filter 0.0.0.0,$(HOST)),127.0.0.1,$(HOST)):$(PORT)

.PHONY: run test lint format migrate demo worker beat clean bench-import bench

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# Reinstall whenever a requirements file changes.
$(VENV)/.installed: $(BIN)/python requirements.txt requirements-dev.txt
	$(BIN)/pip install --quiet -r requirements-dev.txt
	touch $@

# Commands typed in another shell (manage.py createsuperuser, send_digests...) read
# .env: `make run` writes one for development on first use and never changes it.
.env:
	printf '# Development settings, written by `make run`. Production sets DEBUG=0 and SECRET_KEY.\nDEBUG=1\nSITE_ROOT=%s\n' "$(SITE_ROOT)" > $@

run: $(VENV)/.installed .env
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py load_demo
	$(BIN)/python manage.py runserver $(HOST):$(PORT)

# Browser tests drive Debian's Chromium and the load test Debian's wrk, each
# installed when missing (never a browser build of Playwright's own).
CHROMIUM := /usr/bin/chromium
WRK := /usr/bin/wrk
$(CHROMIUM) $(WRK):
	apt-get install -y $(notdir $@) || (apt-get update && apt-get install -y $(notdir $@))

test: $(VENV)/.installed $(CHROMIUM)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	DATABASE_URL=$${DATABASE_URL:-$(PG_URL)} $(BIN)/pytest
	# The embedded default: the demo must also come up on a bare SQLite file,
	# and search there must find what it finds on PostgreSQL.
	DATABASE_URL=sqlite:///$(CURDIR)/.smoke.sqlite3 $(BIN)/pytest tests/test_demo_smoke.py tests/test_search.py
	rm -f .smoke.sqlite3

lint: $(VENV)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(VENV)/.installed
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

worker: $(VENV)/.installed
	$(BIN)/celery -A config worker --loglevel=info

beat: $(VENV)/.installed
	$(BIN)/celery -A config beat --loglevel=info

# Snapshot import speed against a raw COPY, in a scratch database (see BENCHMARKS.md).
bench-import: $(VENV)/.installed
	DATABASE_URL=$${DATABASE_URL:-$(PG_URL)} $(BIN)/python -m bench.snapshot_import

# The catalog at arXiv's size: N synthetic papers in a scratch database, every
# page timed, the list loaded with wrk, the snapshot import benchmark; writes
# BENCHMARKS.md (about 25 minutes at a million papers).
N ?= 1000000
bench: $(VENV)/.installed $(WRK)
	DATABASE_URL=$${DATABASE_URL:-$(PG_URL)} $(BIN)/python -m bench.run --papers $(N)

clean:
	rm -rf $(VENV) db.sqlite3 .smoke.sqlite3 staticfiles

.PHONY: e2e reliability load audit lighthouse
# The browser tests alone; they also run in `make test`.
e2e: $(VENV)/.installed $(CHROMIUM)
	DATABASE_URL=$${DATABASE_URL:-$(PG_URL)} $(BIN)/pytest tests/e2e

# Lighthouse scores of the demo under gunicorn with production settings (see BENCHMARKS.md);
# Lighthouse 12 comes from npm through npx, and audits in Debian's Chromium.
lighthouse: $(VENV)/.installed $(CHROMIUM)
	DATABASE_URL=$${DATABASE_URL:-$(PG_URL)} CHROME_PATH=$(CHROMIUM) $(BIN)/python -m bench.lighthouse --runs 3

# The fault tests (also in `make test`) and the load test; see RELIABILITY.md.
reliability: $(VENV)/.installed load
	DATABASE_URL=$${DATABASE_URL:-$(PG_URL)} $(BIN)/pytest tests/faults

load: $(VENV)/.installed $(WRK)
	DATABASE_URL=$${DATABASE_URL:-$(PG_URL)} $(BIN)/python bench/load.py --duration 60 --connections 32

# Known vulnerabilities in the installed packages, then bandit: medium findings
# are listed for review (accepted ones are explained in RELIABILITY.md), high ones fail.
audit: $(VENV)/.installed
	$(BIN)/pip-audit --progress-spinner off
	$(BIN)/bandit -q -r accounts catalog config ingest -x '*/migrations/*' --severity-level medium --exit-zero
	$(BIN)/bandit -q -r accounts catalog config ingest -x '*/migrations/*' --severity-level high
