# The two set-up commands of the README: `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test bench clean

# The tests start many tablectl processes: let Python keep its compiled modules (__pycache__,
# ignored by git) so that each compiles the controller once, not once a process
unexport PYTHONDONTWRITEBYTECODE

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/tablectl run --config config/table.toml

# layers, types, then every test: four workers on two cores, since many tests wait on devices
# and processes rather than compute
test: $(STAMP)
	$(BIN)/lint-imports
	$(BIN)/mypy
	$(BIN)/pytest -n 4

bench: $(STAMP)
	$(BIN)/python bench/engine.py
	$(BIN)/python bench/latency.py --protocol beetek
	$(BIN)/python bench/flood.py
	$(BIN)/python bench/odds.py
	$(BIN)/python bench/recovery.py
	$(BIN)/python bench/roads.py
	$(BIN)/python bench/fuzz.py
	$(BIN)/python bench/feed.py
	$(BIN)/python bench/shuffle_fpr.py
	$(BIN)/python bench/memory.py

clean:
	rm -rf $(VENV) build *.egg-info
