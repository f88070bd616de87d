"""Results: what was measured, and the store that keeps it.

- ``store``: the DuckDB file of runs, per-request rows, imports and the live tables (snapshots and
  windows), with short-lived connections so that the app, the command line and a recorder share it.
- ``schema``: the run, request and live columns and the frozen migrations, which the importers
  share with the store (so that neither imports the other in a circle).
- ``importers``: one module per benchmark result format behind a registry that detects by content.
- ``sandbox``: the SQL console: a user's statement, read-only, bounded in time, rows, bytes and memory.
- ``query_server``: the console's fork server, which forks one process per query with DuckDB and Arrow loaded.
- ``frame_bytes``: what a result's rows cost once shown (the console's byte bound), and the frame they become.
- ``explorer``: stored runs analysed: baselines paired, load axes, acceptance by workload.
- ``prediction``: paired runs beside the step model's predictions, and its calibrations to them.
- ``synthetic``: runs whose acceptance the benchmark set, not measured (flagged at import).
- ``schedule``: the best γ at each batch, measured from a grid of runs (an engine's schedule).
- ``export``: runs written out (CSV, or llm-d's benchmark report: ``benchmark_report``).
- ``extra``: a run's other values (its ``extra`` JSON) by dotted path, as the explorer groups and shows them.
- ``request_acceptance``: per-request acceptance, its spread and what it does to the latency tail.
- ``recorder``: polls a metrics source into the store's live tables.

May import: specviz.errors, specviz.i18n, specviz.settings, specviz.names, specviz.model,
specviz.scenario, specviz.calculator, specviz.workload, specviz.live.
Must not import: specviz.advice, specviz.cli, specviz.charts, or Streamlit.
"""
