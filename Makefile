# Two entry points for a fresh machine with Python 3.11+ and make:
#   make demo  -> creates .venv, installs ctxwatch, opens the live demo dashboard
#   make test  -> same set-up with the test extras, runs the whole suite
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip >/dev/null

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -e . 
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -e '.[test]'
	touch $@ $(VENV)/.installed

demo: $(VENV)/.installed
	$(BIN)/ctxwatch demo

test: $(VENV)/.installed-test
	$(BIN)/ruff check ctxwatch tests
	$(BIN)/python -m pytest -q

lint: $(VENV)/.installed-test
	$(BIN)/ruff check ctxwatch tests

bench: $(VENV)/.installed-test
	$(BIN)/python tests/benchmarks/bench_ingest.py
	$(BIN)/python tests/benchmarks/bench_follow.py

clean:
	rm -rf $(VENV) build dist *.egg-info
