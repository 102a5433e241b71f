# make demo: create .venv, install ragmeter, run the main job on the bundled example.
# make test: create .venv, install the dev extras, lint, run the whole suite.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip --disable-pip-version-check

.PHONY: demo test lint format bench clean oracle

# graphrag-eval 6.6.1, the test oracle and benchmark anchor of ragmeter.steps, requires
# Python 3.12: it lives in its own git-ignored venv and is called through a subprocess.
PYTHON312 ?= $(shell for p in python3.12 $(HOME)/.pyenv/versions/3.12*/bin/python3.12 \
  /root/.pyenv/versions/3.12*/bin/python3.12; do $$p -c 'import sys; assert sys.version_info[:2] == (3, 12)' \
  2>/dev/null && { echo $$p; break; }; done)
ORACLE_VENV := .venv-graphrag-eval

$(BIN)/python:
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 10), "ragmeter needs Python >= 3.10"'
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

$(VENV)/.core-installed: pyproject.toml | $(BIN)/python
	$(PIP) install --quiet -e .
	touch $@

# torch first, pinned to the CPU build: otherwise sentence-transformers pulls several GB of CUDA.
$(VENV)/.dev-installed: pyproject.toml | $(BIN)/python
	$(PIP) install --quiet torch==2.13.0
	$(PIP) install --quiet -e '.[dev]'
	touch $@ $(VENV)/.core-installed

$(ORACLE_VENV)/.installed:
	@if [ -z "$(PYTHON312)" ]; then \
	  echo "graphrag-eval oracle: no python3.12 found (set PYTHON312=...); its tests skip"; \
	  if [ "$$RAGMETER_REQUIRE_SYSTEM_DEPS" = 1 ]; then exit 1; fi; \
	else \
	  $(PYTHON312) -m venv $(ORACLE_VENV) && \
	  $(ORACLE_VENV)/bin/python -m pip install --quiet --disable-pip-version-check \
	    graphrag-eval==6.6.1 PyYAML==6.0.3 && \
	  touch $@; \
	fi

oracle: $(ORACLE_VENV)/.installed

# For now: both systems of the synthetic retrieval example against its qrels (a later issue
# grows this into the whole runner).
demo: $(VENV)/.core-installed
	@for system in bm25 hybrid; do \
	  echo "== $$system: examples/retrieval/$$system.run (synthetic example)"; \
	  $(BIN)/ragmeter trec -m map -m nDCG@10 -m RR@10 -m R@50 -m P.10 \
	    examples/retrieval/qrels.txt examples/retrieval/$$system.run || exit $$?; \
	done

test: $(VENV)/.dev-installed $(ORACLE_VENV)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest

lint: $(VENV)/.dev-installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(VENV)/.dev-installed
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean:
	rm -rf $(VENV) $(ORACLE_VENV) .pytest_cache .ruff_cache build dist
