# Papershelf: `make run` serves the demo on http://127.0.0.1:8000, `make test` runs the suite.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PG_URL ?= postgres://root@127.0.0.1:5432/papershelf
HOST ?= 127.0.0.1
PORT ?= 8000

export DEBUG ?= 1

.PHONY: run test lint format migrate demo worker beat clean bench-import

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# Reinstall whenever a requirements file changes.
$(VENV)/.installed: $(BIN)/python requirements.txt requirements-dev.txt
	$(BIN)/pip install --quiet -r requirements-dev.txt
	touch $@

run: $(VENV)/.installed
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py load_demo
	$(BIN)/python manage.py runserver $(HOST):$(PORT)

test: $(VENV)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	DATABASE_URL=$${DATABASE_URL:-$(PG_URL)} $(BIN)/pytest
	# The embedded default: the demo must also come up on a bare SQLite file.
	DATABASE_URL=sqlite:///$(CURDIR)/.smoke.sqlite3 $(BIN)/pytest tests/test_demo_smoke.py
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

clean:
	rm -rf $(VENV) db.sqlite3 .smoke.sqlite3 staticfiles
