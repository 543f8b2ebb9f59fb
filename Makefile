# The two commands of the README: `make run` (the service, embedded default) and `make test`.
PYTHON_VERSION := $(shell cat .python-version)
PYTHON ?= $(shell command -v python$(basename $(PYTHON_VERSION)) 2>/dev/null || (command -v pyenv >/dev/null && echo "$$(pyenv root)/versions/$(PYTHON_VERSION)/bin/python") || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install run test lint bench clean

$(STAMP): pyproject.toml constraints.txt
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 12), f"Python >= 3.12 needed, found {sys.version}"'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c constraints.txt -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/python manage.py serve

test: $(STAMP)
	$(BIN)/pytest -n 2 --dist loadgroup

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy .

clean:
	rm -rf $(VENV) var
