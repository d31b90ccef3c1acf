PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test

.PHONY: demo test lint bench clean docs

DOCS_STAMP := $(VENV)/.installed-docs

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
	$(BIN)/python -m dse.solvers.warmup
	$(BIN)/dse solve problems/quickstart.yaml --out out/quickstart
	@$(BIN)/dse report out/quickstart --out out/quickstart/report.html > /dev/null
	@echo "report: $(CURDIR)/out/quickstart/report.html (open it in a browser; it works offline)"
	@echo "next: . .venv/bin/activate  (then: dse --help; dse solve quickstart --solver nsga2 --out out/nsga2;"
	@echo "      dse certify out/nsga2; jupyter needs pip install -e '.[notebook]'; more in the README)"

test: $(TEST_STAMP)
	$(BIN)/ruff check dse tests benchmarks
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -q

# The documentation site, built into out/site (the docs extra is never part of make test's install).
$(DOCS_STAMP): $(STAMP)
	$(BIN)/python -m pip install -q -e '.[docs]'
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 DISABLE_MKDOCS_2_WARNING=true $(BIN)/mkdocs build -q -f mkdocs.yml -d out/site
	@echo "documentation in out/site/index.html"

bench: $(TEST_STAMP)
	$(BIN)/python benchmarks/eval_throughput.py
	$(BIN)/python benchmarks/exact_vs_approx.py

clean:
	rm -rf $(VENV) out .pytest_cache .ruff_cache build *.egg-info
