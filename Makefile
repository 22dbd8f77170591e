# Two entry points for a fresh machine: `make demo` (the main job, offline on the
# embedded simulator) and `make test` (lint, types, tests). Both build .venv themselves.
PY ?= python3
# Python caches its bytecode, as on any machine: a setting that forbids it (some images
# set PYTHONDONTWRITEBYTECODE) makes every test process and every subprocess a test
# starts compile toolstand again (the import-cycle test alone: 19 s against 9 s)
unexport PYTHONDONTWRITEBYTECODE
VENV := .venv
BIN := $(VENV)/bin

# The venv is built by uv when it can be had (~25 s on 2 busy cores against ~70-100 s for
# venv + pip: pip asks each index about each package in turn, uv asks them all at once),
# by venv and pip otherwise (no uv for this platform, no index that has it). uv is a
# build tool here, not a dependency: nothing of toolstand imports or runs it; pip is put
# in the venv as well, for the BFCL wheel below and for whoever uses the venv by hand.
# --compile-bytecode as pip does by default: uv leaves the packages' bytecode to the
# first import, and where PYTHONDONTWRITEBYTECODE is set (this image) every start of
# toolstand then compiled textual and rich again (first paint ~0.9 s against ~0.5 s).
UV := .cache/uv/bin/uv

$(BIN)/toolstand: pyproject.toml
	@if $(PY) -m pip install -q --disable-pip-version-check --upgrade --target .cache/uv uv \
		&& $(UV) venv -q --clear --python $(PY) $(VENV) \
		&& $(UV) pip install -q --compile-bytecode --python $(BIN)/python -e '.[test]' pip; then \
		echo "uv: built $(VENV) with '.[test]'"; \
	else \
		echo "uv could not build $(VENV): venv and pip instead"; \
		rm -rf $(VENV) && $(PY) -m venv $(VENV) \
		&& $(BIN)/pip install -q --upgrade pip \
		&& $(BIN)/pip install -q -e '.[test]' || exit 1; \
	fi
	touch $(BIN)/toolstand

# BFCL's data and checker, fetched once as a wheel with pip (nothing installed: bfcl-eval
# pins its own tree-sitter and pulls torch-sized dependencies). The agreement test loads
# its checker from this file and is skipped, saying why, when it is absent (offline).
BFCL_VERSION := 2026.3.23
BFCL_WHEEL := .cache/bfcl/bfcl_eval-$(BFCL_VERSION)-py3-none-any.whl

$(BFCL_WHEEL): | $(BIN)/toolstand
	-$(BIN)/pip download -q --no-deps bfcl-eval==$(BFCL_VERSION) -d .cache/bfcl

.PHONY: demo demo-repair gate test lint bfcl-wheel
bfcl-wheel: $(BFCL_WHEEL)

demo: $(BIN)/toolstand
	$(BIN)/toolstand check --quiet
	rm -f runs/demo.jsonl
	$(BIN)/toolstand run --config config.example.json --output runs/demo.jsonl
	$(BIN)/toolstand report runs/demo.jsonl

# The repair comparison (README, "Repair turns"): sim-sloppy's invalid first calls
# answered with each of the four feedback styles, up to three repair turns, offline.
demo-repair: $(BIN)/toolstand
	rm -f runs/demo-repair.jsonl
	$(BIN)/toolstand run --config config.repair.json --output runs/demo-repair.jsonl
	$(BIN)/toolstand report runs/demo-repair.jsonl

# The CI gate of the README: run, publish JUnit and the error table, compare to the
# stored baseline; exits 1 only on a regression the counts make significant.
gate: $(BIN)/toolstand
	rm -f runs/current.jsonl
	$(BIN)/toolstand run --config config.example.json --output runs/current.jsonl
	$(BIN)/toolstand report runs/current.jsonl --junit runs/junit.xml --errors-csv runs/errors.csv > /dev/null
	$(BIN)/toolstand compare baselines/demo.report.json runs/current.jsonl > runs/compare.txt; status=$$?; tail -n 1 runs/compare.txt; exit $$status

lint: $(BIN)/toolstand
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports

# The suite on every core (pytest-xdist; a file's tests stay on one worker, so its
# module-scoped servers start once; in the order tests/conftest.py gives, not by count of
# tests), then the 15 slowest tests, so a slow newcomer shows.
# One worker more than the cores: a Pilot test spends part of its time waiting on the app's
# timers and workers, and the extra worker fills those gaps (here, 2 cores: pytest 265 s
# with 3 workers against 314 s with 2, in two fresh-clone runs at load 0.3-3).
WORKERS ?= $(shell n=$$(nproc 2>/dev/null) && echo $$((n + 1)) || echo auto)
PYTEST_ARGS ?= -n $(WORKERS) --dist loadfile --no-loadscope-reorder --durations=15

# `make lint`'s steps, with mypy (its slow part: ~40 s of CPU on a clone without its
# cache) run beside the rest: it needs only the venv, so it starts first, before BFCL's
# wheel is fetched and the linters run, and then fills what the suite leaves of the cores
# (subprocesses, servers, the TUI's timers). mypy's report is printed after the suite's;
# any step failing fails the target (a linter's failure stops it at once).
test: $(BIN)/toolstand
	@mkdir -p .cache
	@echo "$(BIN)/mypy > .cache/mypy.log &"
	@$(BIN)/mypy > .cache/mypy.log 2>&1 & types=$$!; \
	$(MAKE) --no-print-directory bfcl-wheel \
	&& $(BIN)/ruff check src tests bench \
	&& $(BIN)/ruff format --check src tests bench \
	&& $(BIN)/lint-imports \
	|| { kill $$types; wait $$types; exit 1; }; \
	echo "$(BIN)/pytest $(PYTEST_ARGS)"; \
	$(BIN)/pytest $(PYTEST_ARGS); tests=$$?; \
	wait $$types; typed=$$?; cat .cache/mypy.log; \
	[ $$tests -eq 0 ] && [ $$typed -eq 0 ] || exit $$(( tests ? tests : typed ))
