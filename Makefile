# `make demo` and `make test` set themselves up (scripts/setup.sh) on a fresh machine.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.goldy-setup-done

# Backends (and tools) whose absence is a test failure rather than a skip: CI has all of
# these, ptxas (with cuobjdump) and IPython from the test extra, and cc (a C compiler: the cpu
# backend's compiled form; scripts/setup.sh installs gcc). torch stays optional (scripts/setup.sh).
GOLDY_REQUIRE_BACKENDS ?= cpu,wgpu,slang,ptxas,ipython,cc
export GOLDY_REQUIRE_BACKENDS

.PHONY: demo test setup clean

setup: $(STAMP)

$(STAMP): pyproject.toml scripts/setup.sh
	bash scripts/setup.sh
	touch $@

demo: setup
	$(PY) -m goldy_import.demo

# One pytest worker per core (pytest-xdist): the suite is CPU-bound (lavapipe, slang's CPU
# device, the numpy oracle). TEST_WORKERS=0 runs it in one process.
TEST_WORKERS ?= auto

test: setup
	$(PY) -m pytest -q -rs -p no:cacheprovider -n $(TEST_WORKERS) tests

clean:
	rm -rf build .pytest_cache
