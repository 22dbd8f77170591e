# Two entry points for a fresh machine: `make demo` (the main job, offline on the
# embedded simulator) and `make test` (lint, types, tests). Both build .venv themselves.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

$(BIN)/toolstand: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	touch $(BIN)/toolstand

.PHONY: demo test lint bench
demo: $(BIN)/toolstand
	$(BIN)/toolstand check
	$(BIN)/toolstand run --config config.example.json --output runs/demo.jsonl
	$(BIN)/toolstand report runs/demo.jsonl

lint: $(BIN)/toolstand
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy

test: lint
	$(BIN)/pytest
