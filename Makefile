# `make run` and `make test` build the same .venv from the pinned requirements, then run.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: run test chromium prometheus screenshots docs bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(VENV)/.run-deps: requirements.txt | $(PY)
	$(PY) -m pip install -q -r requirements.txt
	touch $@

# --no-compile: pip's bytecode for every file it installs took 16 of the 32 s this install takes here;
# the tests compile only the modules they import (some 6 s of it, written by `test` below for
# `make run` to reuse).
$(VENV)/.test-deps: requirements.txt requirements-dev.txt | $(PY)
	$(PY) -m pip install -q --no-compile -r requirements-dev.txt
	touch $@

# specviz app: streamlit run app.py on SPECVIZ_HOST:SPECVIZ_PORT, headless (specviz/cli/app.py).
run: $(VENV)/.run-deps
	$(PY) -m specviz app

# $(call need,SETTING,package,who needs it): the Debian package whose binary the setting names,
# installed when it is missing (as root with apt-get), or a message that says how.
define need
	@path="$$($(PY) -m specviz.settings $(1))"; \
	if [ -x "$$path" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing Debian's $(2) for $(3) (apt-get install $(2))"; \
		DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(2) >/dev/null; \
	else \
		echo "$(3) need $(2) at $$path. Install it with:" >&2; \
		echo "    sudo apt-get install $(2)    (Debian/Ubuntu)" >&2; \
		echo "or set $(1) to its binary; then run make test again." >&2; \
		exit 1; \
	fi
endef

# The browser tests drive Debian's Chromium (SPECVIZ_CHROMIUM).
chromium: $(VENV)/.run-deps
	$(call need,SPECVIZ_CHROMIUM,chromium,the browser tests)

# The Prometheus API tests start Debian's Prometheus server (SPECVIZ_PROMETHEUS).
prometheus: $(VENV)/.run-deps
	$(call need,SPECVIZ_PROMETHEUS,prometheus,the Prometheus API tests)

# One pytest worker per core (pytest-xdist): on this 2-core machine 631-756 s, against 955-971 s in one.
# Work stealing: a worker that runs out takes tests queued for the other, so no long test ends the run
# alone. Bytecode is written even where the environment says not to (PYTHONDONTWRITEBYTECODE): without
# it pytest rewrites every test module's asserts again in each worker, 7.5 s of a worker's start. The
# slowest twenty are listed at the end: the suite's budget is 10 minutes.
test: $(VENV)/.test-deps chromium prometheus
	PYTHONDONTWRITEBYTECODE= $(PY) -m pytest -n auto --dist worksteal --durations=20

# The user guide's screenshots (docs/guide.md): the user-guide browser tests take them in Chromium; copied into docs/.
screenshots: $(VENV)/.test-deps chromium
	rm -f tests/artifacts/guide/*.png
	$(PY) -m pytest -q tests/test_browser.py -k UserGuide
	mkdir -p docs/screenshots
	cp tests/artifacts/guide/*.png docs/screenshots/

# docs/cli.md and docs/settings.md, made from the argument parser and the settings table (a test fails when stale).
docs: $(VENV)/.run-deps
	$(PY) -m specviz.cli.docs

bench: $(VENV)/.test-deps
	$(PY) bench/bench_grid.py
	$(PY) bench/bench_rerun.py
	$(PY) bench/bench_ingest.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
