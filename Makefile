# `make run` and `make test` build the same .venv from the pinned requirements, then run.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: run test chromium bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(VENV)/.run-deps: requirements.txt | $(PY)
	$(PY) -m pip install -q -r requirements.txt
	touch $@

$(VENV)/.test-deps: requirements.txt requirements-dev.txt | $(PY)
	$(PY) -m pip install -q -r requirements-dev.txt
	touch $@

run: $(VENV)/.run-deps
	$(PY) -m streamlit run app.py \
		--server.address "$$($(PY) -m specviz.settings SPECVIZ_HOST)" \
		--server.port "$$($(PY) -m specviz.settings SPECVIZ_PORT)" \
		--server.headless true --browser.gatherUsageStats false

# The browser tests drive Debian's Chromium (SPECVIZ_CHROMIUM): installed here when it is missing.
chromium: $(VENV)/.run-deps
	@browser="$$($(PY) -m specviz.settings SPECVIZ_CHROMIUM)"; \
	if [ -x "$$browser" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing Debian's chromium for the browser tests (apt-get install chromium)"; \
		DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	else \
		echo "The browser tests need Chromium at $$browser. Install it with:" >&2; \
		echo "    sudo apt-get install chromium    (Debian/Ubuntu)" >&2; \
		echo "or set SPECVIZ_CHROMIUM to a Chromium binary, then run make test again." >&2; \
		exit 1; \
	fi

test: $(VENV)/.test-deps chromium
	$(PY) -m pytest

bench: $(VENV)/.test-deps
	$(PY) bench/bench_grid.py
	$(PY) bench/bench_rerun.py
	$(PY) bench/bench_ingest.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
