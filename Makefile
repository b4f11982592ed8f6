# Two entry points for a fresh machine with Python 3.11+ and make:
#   make demo  -> creates .venv, installs ctxwatch, opens the live demo dashboard
#   make test  -> same set-up with the test extras: ruff, mypy, import contracts, the whole suite
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip >/dev/null

# An editable install leaves ctxwatch's own modules uncompiled (a regular install compiles them); compiling
# them once saves every start the time to do it again (more where PYTHONDONTWRITEBYTECODE is set).
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -e . 
	$(BIN)/python -m compileall -q ctxwatch >/dev/null
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -e '.[test]'
	$(BIN)/python -m compileall -q ctxwatch >/dev/null
	touch $@ $(VENV)/.installed

demo: $(VENV)/.installed
	$(BIN)/ctxwatch demo

test: $(VENV)/.installed-test
	$(BIN)/ruff check ctxwatch tests
	$(BIN)/mypy ctxwatch
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -q

lint: $(VENV)/.installed-test
	$(BIN)/ruff check ctxwatch tests
	$(BIN)/mypy ctxwatch
	$(BIN)/lint-imports

bench: $(VENV)/.installed-test
	$(BIN)/python tests/benchmarks/bench_ingest.py
	$(BIN)/python tests/benchmarks/bench_follow.py
	$(BIN)/python tests/benchmarks/bench_long_text.py
	$(BIN)/python tests/benchmarks/bench_first_screen.py

clean:
	rm -rf $(VENV) build dist *.egg-info
