# make demo: create .venv, install ragmeter, run the main job on the bundled example.
# make test: create .venv, install the dev extras, lint, run the whole suite.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip --disable-pip-version-check

.PHONY: demo test lint format bench clean

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

# For now: both systems of the synthetic retrieval example against its qrels (a later issue
# grows this into the whole runner).
demo: $(VENV)/.core-installed
	@for system in bm25 hybrid; do \
	  echo "== $$system: examples/retrieval/$$system.run (synthetic example)"; \
	  $(BIN)/ragmeter trec -m map -m nDCG@10 -m RR@10 -m R@50 -m P.10 \
	    examples/retrieval/qrels.txt examples/retrieval/$$system.run || exit $$?; \
	done

test: $(VENV)/.dev-installed
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
	rm -rf $(VENV) .pytest_cache .ruff_cache build dist
