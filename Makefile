# bughunt — every command creates the virtual environment and installs the
# locked dependencies first when they are missing or out of date.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.DEFAULT_GOAL := help
.PHONY: help install deps run test test-fast lint complexity format bench lock docs clean

help: ## List the make targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml requirements.lock
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@# The lock holds every package: --no-deps installs exactly it. Resolving again would let an
	@# extra (httpx[http2] from prefect) reach for a newer release than the lock pins.
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --require-hashes -r requirements.lock
	$(BIN)/python -m pip check --disable-pip-version-check
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	@touch $@

install: $(STAMP) ## Create .venv and install the locked dependencies

# System packages from Debian: debootstrap builds the sandbox image's base (no
# registry is reachable), chromium renders the HTML report in its test.
# The seccomp profile of sandbox cells is the containers allowlist Debian ships.
SYSTEM_TOOLS := debootstrap:debootstrap chromium:chromium git:git
SYSTEM_FILES := /usr/share/containers/seccomp.json:golang-github-containers-common
deps: ## Install the Debian packages bughunt needs (debootstrap, chromium, the cells' seccomp profile), if missing
	@missing=""; for pair in $(SYSTEM_TOOLS); do cmd=$${pair%%:*}; pkg=$${pair##*:}; \
	  command -v $$cmd >/dev/null 2>&1 || missing="$$missing $$pkg"; done; \
	for pair in $(SYSTEM_FILES); do path=$${pair%%:*}; pkg=$${pair##*:}; \
	  [ -e $$path ] || missing="$$missing $$pkg"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

run: $(STAMP) deps ## Run the nightly flow on the demo corpus (local Prefect, .bughunt/ledger.duckdb)
	$(BIN)/bughunt sandbox build
	$(BIN)/bughunt run nightly --corpus corpus/demo

# Tests run on every core (pytest-xdist), a test module's tests on one worker
# (--dist loadscope), so a module's shared fixtures (a sandbox stage over every
# cheat, a demo nightly) are computed once; the slowest are listed at the end.
# Engine tests run on several workers at once: each tolerates another test's
# run start sweeping what dead owners left.
test: $(STAMP) deps ## Run the whole test suite with branch coverage (builds the sandbox image if missing)
	$(BIN)/bughunt sandbox build
	$(BIN)/python -m pytest -n auto --maxprocesses 4 --dist loadscope --durations 25 --cov --cov-report=term $(PYTEST_ARGS)

# The edit loop: every test that needs neither the Docker engine nor Prefect nor Dask (those
# tests/conftest.py marks `engine`). CI runs `make test`, which runs them all.
test-fast: $(STAMP) ## Run the tests that need no engine (no Docker, Prefect or Dask): the edit loop
	$(BIN)/python -m pytest -n auto --maxprocesses 4 --dist loadscope -m "not engine" --durations 10 $(PYTEST_ARGS)

# ruff's C901 holds every function to ten paths counting branches; radon counts each boolean
# operator as a path too, and no function may pass 20 on that count: radon's grade C is 11-20,
# so `--min D` lists exactly the functions over the ceiling.
CHECKED ?= bughunt cli flows tasks judging corpus ledger gateway harness benchmarks tests
lint: $(STAMP) ## ruff, ruff format --check, mypy (strict, tests too), the import contracts, the complexity ceiling
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	@$(MAKE) --no-print-directory complexity

complexity: $(STAMP) ## No function over 20 paths, boolean operators counted (radon)
	@over=$$($(BIN)/radon cc --show-complexity --min D --exclude 'corpus/demo/*,tests/fixtures/inflection/*' $(CHECKED)); \
	if [ -n "$$over" ]; then echo "$$over"; echo "radon: the functions above are over the complexity ceiling (20, boolean operators counted)"; exit 1; fi

format: $(STAMP) ## Format the code with ruff
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: $(STAMP) ## Run the benchmarks and write benchmarks/results.md
	$(BIN)/python -m benchmarks.run_all

docs: $(STAMP) ## Regenerate docs/cli.md from the CLI's --help
	$(BIN)/python -m cli.docs > docs/cli.md

lock: ## Re-resolve requirements.lock from pyproject.toml (needs uv)
	uv pip compile pyproject.toml --extra dev --python-version 3.11 --generate-hashes -q -o requirements.lock

clean: ## Remove the virtual environment and local run state
	rm -rf $(VENV) .bughunt .pytest_cache .mypy_cache .ruff_cache
