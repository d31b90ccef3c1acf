PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
DOCS_STAMP := $(VENV)/.installed-docs
# pytest's worker processes (pytest-xdist): one per core this process may run on. Tests of one xdist_group (a
# costly fixture they share: a Dask cluster, the report's runs, the docs' commands) run on one worker.
PYTEST_WORKERS ?= $(shell nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
PYTEST := $(BIN)/python -m pytest -q -n $(PYTEST_WORKERS) --dist loadgroup

.PHONY: demo test test-fast checks lint bench clean docs

# The environment, with uv (from PyPI, into the environment itself) as its installer: it installs the test
# extras several times faster than pip. Where uv cannot be installed or fails, pip does the work.
$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q uv || $(BIN)/python -m pip install -q --upgrade pip

# $(call install,ARGS): uv pip install ARGS into the environment, or pip install ARGS if uv is missing or fails.
# Both write the installed modules' bytecode (uv's --compile-bytecode; pip does it by default): without it every
# process (each test worker, each command a test starts) compiles numpy, pandas, OR-Tools... from source where
# PYTHONDONTWRITEBYTECODE is set.
install = { [ -x $(BIN)/uv ] && $(BIN)/uv pip install -q --compile-bytecode --python $(BIN)/python $(1); } \
	|| $(BIN)/python -m pip install -q $(1)

$(STAMP): $(BIN)/python pyproject.toml
	$(call install,-e .)
	touch $(STAMP)

# The test extras include the package itself: one install serves make test and make demo.
$(TEST_STAMP): $(BIN)/python pyproject.toml
	$(call install,-e '.[test]')
	touch $(STAMP) $(TEST_STAMP)

demo: $(STAMP)
	$(BIN)/python -m dse.solvers.warmup
	$(BIN)/dse solve problems/quickstart.yaml --out out/quickstart
	@$(BIN)/dse report out/quickstart --out out/quickstart/report.html > /dev/null
	@echo "report: $(CURDIR)/out/quickstart/report.html (open it in a browser; it works offline)"
	@echo "next: . .venv/bin/activate  (then: dse --help; dse solve quickstart --solver nsga2 --out out/nsga2;"
	@echo "      dse certify out/nsga2; jupyter needs pip install -e '.[notebook]'; more in the README)"

# What both test tiers run first: the package's bytecode (compileall writes it even where PYTHONDONTWRITEBYTECODE
# is set, so that the processes the tests start - commands, notebook kernels, Dask workers - do not
# each compile the package again), then ruff and mypy, while the dag kernels compile (once per environment,
# cached on disk) in the background, so that no test process compiles them. The import-linter contracts are checked
# once, by the suite (tests/project/test_layers.py runs lint-imports' checker).
checks: $(TEST_STAMP)
	@$(BIN)/python -m compileall -q -j 0 dse > /dev/null
	@$(BIN)/python -m dse.solvers.warmup --quiet & kernels=$$!; \
	echo "$(BIN)/ruff check dse tests benchmarks && $(BIN)/mypy"; \
	$(BIN)/ruff check dse tests benchmarks && $(BIN)/mypy; status=$$?; \
	wait $$kernels || status=1; exit $$status

lint: checks

# The whole suite, the slow tests included: what the README and CI run.
test: checks
	$(PYTEST)

# The tier to run on every change: the same checks, and every test not marked slow.
test-fast: checks
	$(PYTEST) -m "not slow"

# The documentation site, built into out/site (the docs extra is never part of make test's install).
$(DOCS_STAMP): $(STAMP)
	$(call install,-e '.[docs]')
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 DISABLE_MKDOCS_2_WARNING=true $(BIN)/mkdocs build -q -f mkdocs.yml -d out/site
	@echo "documentation in out/site/index.html"

bench: $(TEST_STAMP)
	$(BIN)/python benchmarks/eval_throughput.py
	$(BIN)/python benchmarks/exact_vs_approx.py

clean:
	rm -rf $(VENV) out .pytest_cache .ruff_cache build *.egg-info
