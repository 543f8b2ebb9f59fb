# The two commands of the README: `make run` (the service, embedded default) and `make test`.
PYTHON_VERSION := $(shell cat .python-version)
PYTHON ?= $(shell command -v python$(basename $(PYTHON_VERSION)) 2>/dev/null || (command -v pyenv >/dev/null && echo "$$(pyenv root)/versions/$(PYTHON_VERSION)/bin/python") || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
RUN_STAMP := $(VENV)/.installed-run
DEMO_STAMP := $(VENV)/.installed-demo

.PHONY: install run demo test lint bench clean

# `make run` installs what running needs; `make test` (and lint) add the test and lint tools.
$(VENV)/bin/python:
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 12), f"Python >= 3.12 needed, found {sys.version}"'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(RUN_STAMP): pyproject.toml constraints.txt | $(VENV)/bin/python
	$(BIN)/pip install --quiet -c constraints.txt -e .
	touch $(RUN_STAMP)

$(DEMO_STAMP): pyproject.toml constraints.txt | $(VENV)/bin/python
	$(BIN)/pip install --quiet -c constraints.txt -e ".[demo]"
	touch $(RUN_STAMP) $(DEMO_STAMP)

$(STAMP): pyproject.toml constraints.txt | $(VENV)/bin/python
	$(BIN)/pip install --quiet -c constraints.txt -e ".[dev,demo]"
	touch $(RUN_STAMP) $(DEMO_STAMP) $(STAMP)

install: $(STAMP)

# `make run` and `make demo` are for this machine: the demo's and the quickstart's webhook receiver
# listens on loopback over http, which the service refuses unless allowed (README, Quickstart). A
# value already set in the environment wins.
run demo: export WEBHOOK_ALLOW_INSECURE_URLS ?= true

run: $(RUN_STAMP)
	$(BIN)/python manage.py serve

# The demo organisation (seed_demo), for a newcomer to look around the console and the API.
demo: $(DEMO_STAMP)
	$(BIN)/python manage.py migrate -v0
	$(BIN)/python manage.py seed_demo

test: $(STAMP)
	$(BIN)/pytest -n 2 --dist loadgroup

# xenon: every app and config, not tests/ nor bench/ (see .ci/run)
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy .
	$(BIN)/lint-imports --no-cache
	$(BIN)/xenon --max-absolute C --ignore migrations,tests,bench .

clean:
	rm -rf $(VENV) var
