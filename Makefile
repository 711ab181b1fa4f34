# trainkb — two commands matter: `make run` (open kb) and `make test` (everything CI runs).
# `make setup CHECKS=1` (or `make test CHECKS=1`) also installs the libraries some checks exercise.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
TORCH  := torch==2.13.0
# The libraries some checks exercise (pyproject's `checks` extra: transformers, accelerate, peft, trl,
# diffusers, lightning) are large and no test needs them; `make setup CHECKS=1` adds them. Without them those
# checks are skipped, each with the reason (docs/checks.md lists them).
CHECKS ?=
comma  := ,
EXTRAS := test$(if $(filter 1 yes true,$(CHECKS)),$(comma)checks)
STAMP  := $(VENV)/.installed-$(subst $(comma),-,$(EXTRAS))
# Where pip finds torch. Unset, pip uses its configured index (here: a CPU build on local disk). On an
# ordinary Linux machine PyPI's torch is the multi-GB CUDA build; for the CPU one run
#   make setup TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
TORCH_INDEX_URL ?=
TORCH_INDEX := $(if $(TORCH_INDEX_URL),--index-url $(TORCH_INDEX_URL))

.PHONY: setup run test quick lint check ruff mypy imports pytest schema snapshots bench clean

setup: $(STAMP)

# torch first, pinned (from TORCH_INDEX_URL when set): an unpinned torch pulled in by a
# dependency would download a multi-GB CUDA build instead. The next line's pin is then already met.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet $(TORCH_INDEX) "$(TORCH)"
	$(BIN)/python -m pip install --quiet -e ".[$(EXTRAS)]" "$(TORCH)"
	$(BIN)/python -m trainkb.search._prebuild  # the catalogue's search index, so a first `kb search` needs no build
	touch $(STAMP)

run: setup
	$(BIN)/kb

# `ruff format` owns the layout: run `$(BIN)/ruff format src tests benchmarks` before committing.
ruff: setup
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

# strict over src/ (pyproject.toml [tool.mypy])
mypy: setup
	$(BIN)/mypy

# the import layering declared in pyproject.toml [tool.importlinter]
imports: setup
	$(BIN)/lint-imports --no-cache

pytest: setup
	$(BIN)/pytest -q

# the edit-and-test loop: every test except the slow and the browser ones, which `make test` runs too; two
# pytest-xdist workers per core, since much of the tier waits (on kb processes, on Textual's timers) and a second
# worker uses the core meanwhile; a test module's tests kept on one worker so its module fixtures are built once,
# and the modules that use the warm check pool kept on one worker together (tests/conftest.py groups them).
# Bytecode is written even where the environment turns it off: each worker would otherwise rewrite and compile
# every test module again, and each of the many kb processes the tier starts would compile trainkb again.
QUICK_WORKERS ?= $(shell echo $$(( $$(nproc) * 2 )))
quick: setup
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/pytest -q -n $(QUICK_WORKERS) --dist loadgroup -m "not slow and not browser"

lint: setup
	$(BIN)/kb lint

check: setup
	mkdir -p build
	$(BIN)/kb check -o build/kb-check.json --junit build/kb-check.xml

schema: setup
	$(BIN)/kb schema -o catalogue/schema.json

# rewrite the TUI's SVG snapshots after a deliberate UI change (review the diff before committing)
snapshots: setup
	$(BIN)/pytest -q tests/tui/test_snapshots.py --snapshot-update

# --mutants: every declared counterfactual must fail, in the same run and warm pool.
test: setup ruff mypy imports lint pytest
	mkdir -p build
	$(BIN)/kb check --mutants -o build/kb-check.json --junit build/kb-check.xml

bench: setup
	$(BIN)/python benchmarks/check_overhead.py

clean:
	rm -rf $(VENV) dist build .pytest_cache .ruff_cache .mypy_cache
