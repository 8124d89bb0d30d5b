# The two set-up commands of the README: `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test test-slow bench clean dist lock

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

# layers, types, the documents as a site, then every test but the slow ones: four workers on
# two cores, since many tests wait on devices and processes rather than compute; tests marked
# with one xdist_group share a worker (and what it has computed once)
PYTEST := $(BIN)/pytest -n 4 --dist loadgroup

# On a fresh checkout the modules are compiled once, here, before the workers start: not by
# each of them (and by the first tablectl processes) at the same time; the tests' own compiled
# form (pytest's, with its asserts rewritten) by one collection when there is none yet
test: $(STAMP)
	$(BIN)/lint-imports
	$(BIN)/mypy
	$(BIN)/mkdocs build --strict -q
	$(BIN)/python -m compileall -q controller drivers simulators bench
	$(if $(wildcard tests/__pycache__/conftest.*-pytest-*.pyc),,-$(BIN)/pytest -q --collect-only >/dev/null)
	$(PYTEST) -m "not slow"

# the long end-to-end runs `make test` leaves out (kill -9 across processes, the wheel built
# and installed, whole crash sweeps, multi-table PostgreSQL and Chromium runs); CI runs both
test-slow: $(STAMP)
	$(PYTEST) -m slow

# the release: dist/tablectl-VERSION-py3-none-any.whl (with its shipped files, setup.py) and
# the table PC's lock beside it
dist: $(STAMP)
	rm -rf dist
	$(BIN)/python -m pip wheel -q --no-deps --no-build-isolation -w dist .
	cp requirements/table-pc.txt dist/

# the table PC's lock: every distribution the service runs on, pinned with its hashes (pure
# Python wheels: one lock for every Linux table PC with Python >= 3.11); `make lock` keeps
# the pins, `make lock UPGRADE=1` takes the newest each range allows
lock: $(STAMP)
	$(BIN)/uv pip compile pyproject.toml --generate-hashes --universal --python-version 3.11 \
		--custom-compile-command "make lock" $(if $(UPGRADE),--upgrade) -q \
		-o requirements/table-pc.txt

bench: $(STAMP)
	$(BIN)/python bench/engine.py
	$(BIN)/python bench/simulate.py
	$(BIN)/python bench/latency.py --protocol beetek
	$(BIN)/python bench/cold.py
	$(BIN)/python bench/flood.py
	$(BIN)/python bench/odds.py
	$(BIN)/python bench/recovery.py
	$(BIN)/python bench/roads.py
	$(BIN)/python bench/fuzz.py
	$(BIN)/python bench/feed.py
	$(BIN)/python bench/floor_store.py
	$(BIN)/python bench/shuffle_fpr.py
	$(BIN)/python bench/memory.py

clean:
	rm -rf $(VENV) build dist *.egg-info
