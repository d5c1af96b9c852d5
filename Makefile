# bughunt — every command creates the virtual environment and installs the
# locked dependencies first when they are missing or out of date.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.DEFAULT_GOAL := help
.PHONY: help install run test lint format bench lock docs clean

help: ## List the make targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml requirements.lock
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --require-hashes -r requirements.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	@touch $@

install: $(STAMP) ## Create .venv and install the locked dependencies

run: $(STAMP) ## Run the nightly flow on the demo corpus (local Prefect, .bughunt/ledger.duckdb)
	$(BIN)/bughunt run nightly --corpus corpus/demo

test: $(STAMP) ## Run the whole test suite
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: $(STAMP) ## ruff, ruff format --check, mypy (strict)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: $(STAMP) ## Format the code with ruff
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: $(STAMP) ## Run the benchmarks and write benchmarks/results.md
	$(BIN)/python -m benchmarks.run_all

docs: $(STAMP) ## Regenerate docs/cli.md from the CLI's --help
	$(BIN)/python -m bughunt.cli.docs > docs/cli.md

lock: ## Re-resolve requirements.lock from pyproject.toml (needs uv)
	uv pip compile pyproject.toml --extra dev --python-version 3.11 --generate-hashes -q -o requirements.lock

clean: ## Remove the virtual environment and local run state
	rm -rf $(VENV) .bughunt .pytest_cache .mypy_cache .ruff_cache
