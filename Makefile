# trainkb — two commands matter: `make run` (open kb) and `make test` (everything CI runs).
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
TORCH  := torch==2.13.0

.PHONY: setup run test lint check ruff pytest schema bench clean

setup: $(STAMP)

# torch first, pinned: pip takes the CPU build from local disk; an unpinned torch pulled in
# by a dependency would download a multi-GB CUDA build instead.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet "$(TORCH)"
	$(BIN)/python -m pip install --quiet -e ".[test,checks]" "$(TORCH)"
	touch $(STAMP)

run: setup
	$(BIN)/kb

ruff: setup
	$(BIN)/ruff check src tests benchmarks

pytest: setup
	$(BIN)/pytest -q

lint: setup
	$(BIN)/kb lint

check: setup
	mkdir -p build
	$(BIN)/kb check --json build/kb-check.json --junit build/kb-check.xml

schema: setup
	$(BIN)/kb schema -o catalogue/schema.json

# --mutants: every declared counterfactual must fail, in the same run and warm pool.
test: setup ruff lint pytest
	mkdir -p build
	$(BIN)/kb check --mutants --json build/kb-check.json --junit build/kb-check.xml

bench: setup
	$(BIN)/python benchmarks/check_overhead.py

clean:
	rm -rf $(VENV) dist build .pytest_cache .ruff_cache
