# `make run` and `make test` build the same .venv from the pinned requirements, then run.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: run test bench clean

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

test: $(VENV)/.test-deps
	$(PY) -m pytest

bench: $(VENV)/.test-deps
	$(PY) bench/bench_grid.py
	$(PY) bench/bench_rerun.py
	$(PY) bench/bench_ingest.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
