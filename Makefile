PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test

.PHONY: demo test lint bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -q -e .
	touch $(STAMP)

$(TEST_STAMP): $(STAMP)
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(TEST_STAMP)

demo: $(STAMP)
	$(BIN)/dse solve problems/quickstart.yaml --out out/quickstart

test: $(TEST_STAMP)
	$(BIN)/ruff check dse tests benchmarks
	$(BIN)/mypy
	$(BIN)/python -m pytest -q

bench: $(TEST_STAMP)
	$(BIN)/python benchmarks/eval_throughput.py
	$(BIN)/python benchmarks/exact_vs_approx.py

clean:
	rm -rf $(VENV) out .pytest_cache .ruff_cache build *.egg-info
