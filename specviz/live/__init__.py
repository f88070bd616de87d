"""Live metrics: what a running server's ``/metrics`` (or a Prometheus server in front of a fleet) says
about speculative decoding now.

- ``roles``: the metric families read, by role, and what each engine (vLLM, SGLang, llama.cpp,
  TensorRT-LLM) exports under what name.
- ``exposition``: Prometheus exposition text parsed into a snapshot of those series.
- ``states``: the speculative-decoding state of each model since start or over a window between two
  snapshots.
- ``processes``: which process answered two snapshots of one address: the same, one restarted, or
  another server (no window between them).
- ``promql``: Prometheus's arithmetic on counters (an increase across a restart) and histograms
  (a quantile), as its query functions compute it.
- ``scrape``: the safe fetch of a metrics URL or file (schemes, redirects, size and time limits).
- ``access``: where a metrics URL may point: the hosts and networks an administrator allows.
- ``prometheus``: the same figures over time from a Prometheus server's HTTP API, summed over a fleet.
- ``prometheus_api``: a strict client of that API (durations, instant and range queries, each answer checked).
- ``replay``: an exporter that serves recorded metrics on 127.0.0.1 (``python -m specviz.live.replay``).
- ``windows``: what the windows mean for the scenario: paying now or not, replicas, calibration.

Recording into the store is :mod:`specviz.results.recorder`: the store keeps the live tables, so it
sits above this package.

May import: specviz.errors, specviz.i18n, specviz.settings, specviz.model, specviz.scenario,
specviz.calculator, specviz.workload.
Must not import: specviz.results, specviz.advice, specviz.cli, specviz.charts, or Streamlit.
"""
