"""The store's tables: the canonical run and request columns, the live tables (schema 3: scrapes and
the windows between them; schema 4: per-request acceptance and the synthetic flag; schema 5: the draft
overhead of a window; schema 6: the mean prompt, output and context of a window's finished requests;
schema 8: the speculation a user stated for a file that said nothing of it), and the frozen migrations.

A run is one benchmark measurement (one load point of one deployment); a request is one request of
a run where the file has them. Times are in milliseconds, acceptance rates are fractions.

Each schema version is the literal SQL of its own step in :data:`MIGRATIONS`: a released step is
never edited (a store written by it must upgrade the same way forever); a new version appends a
step, adding columns with ``ALTER TABLE ... ADD COLUMN``. :data:`RUN_COLUMNS` and
:data:`REQUEST_COLUMNS` describe the newest schema; ``tests/test_schema.py`` checks they match what
the migrations build.
"""

from __future__ import annotations

__all__ = ["LATENCY_METRICS", "STATISTICS", "RUN_COLUMNS", "REQUEST_COLUMNS",
           "TEXT_COLUMNS", "INTEGER_COLUMNS", "SNAPSHOT_COLUMNS", "WINDOW_FIGURES", "WINDOW_COLUMNS", "MIGRATIONS",
           "SCHEMA_VERSION", "ORIGINS", "LIVE_FORMAT", "STATED_METHODS", "CONCURRENCY_MOST"]

LATENCY_METRICS = ("ttft", "itl", "tpot", "e2el")
STATISTICS = ("mean", "p50", "p90", "p99")

# Canonical run columns and their DuckDB types, in the order of the newest schema.
RUN_COLUMNS: dict[str, str] = {
    "run_id": "VARCHAR", "source_file": "VARCHAR", "source_format": "VARCHAR",
    "imported_at": "TIMESTAMP", "content_hash": "VARCHAR", "label": "VARCHAR", "workload": "VARCHAR",
    "engine": "VARCHAR", "engine_version": "VARCHAR", "target_model": "VARCHAR", "draft_model": "VARCHAR",
    "spec_method": "VARCHAR", "num_speculative_tokens": "INTEGER", "gpu": "VARCHAR",
    "temperature": "DOUBLE", "concurrency": "DOUBLE", "request_rate": "DOUBLE",
    "num_requests": "BIGINT", "failed_requests": "BIGINT", "duration_s": "DOUBLE",
    "request_throughput": "DOUBLE", "output_throughput": "DOUBLE", "total_token_throughput": "DOUBLE",
    **{f"{s}_{m}_ms": "DOUBLE" for m in LATENCY_METRICS for s in STATISTICS},
    "acceptance_rate": "DOUBLE", "acceptance_length": "DOUBLE", "per_position_acceptance": "DOUBLE[]",
    "zero_accept_rate": "DOUBLE", "extra": "JSON",
    # schema 2: the client's endpoint type (openai-chat, openai_http), apart from the serving engine
    "endpoint": "VARCHAR",
    # schema 4: the acceptance was set by the benchmark, not measured (:mod:`specviz.results.synthetic`)
    "synthetic_acceptance": "BOOLEAN",
    # schema 8: what of the run's speculation is the user's word, not its file's
    # (:meth:`specviz.results.store.Store.state_speculation`): ``method`` (its file gave a γ or an
    # acceptance but no method), ``method_gamma`` (its file said nothing of speculation), else NULL
    "speculation_by_user": "VARCHAR",
}
REQUEST_COLUMNS: dict[str, str] = {
    "run_id": "VARCHAR", "ttft_ms": "DOUBLE", "itl_ms": "DOUBLE", "tpot_ms": "DOUBLE", "e2el_ms": "DOUBLE",
    "input_tokens": "DOUBLE", "output_tokens": "DOUBLE", "extra": "JSON",
    # schema 4: a request's own speculative decoding: verify steps, tokens drafted and accepted, their
    # ratio (a fraction) and the mean tokens a step emitted (1 + accepted / drafts)
    "drafts": "DOUBLE", "draft_tokens": "DOUBLE", "accepted_tokens": "DOUBLE", "acceptance_rate": "DOUBLE",
    "acceptance_length": "DOUBLE"}
# schema 3: live metrics. ``snapshots``: one row per recognised series of a scrape (``metric`` is its
# role in :data:`specviz.live.roles.ROLES`, ``engine`` the engine as :class:`specviz.live.states.SpecDecodeState`
# names it, ``labels`` every label of the series). ``windows``: per model, the figures between a scrape
# and the one before it of the same source (:func:`specviz.live.states.spec_decode_states` of the two).
SNAPSHOT_COLUMNS: dict[str, str] = {
    "time": "TIMESTAMP", "source": "VARCHAR", "engine": "VARCHAR", "model": "VARCHAR", "metric": "VARCHAR",
    "labels": "JSON", "value": "DOUBLE"}
WINDOW_FIGURES: dict[str, str] = {
    "drafts": "DOUBLE", "draft_tokens": "DOUBLE", "accepted_tokens": "DOUBLE", "acceptance_rate": "DOUBLE",
    "acceptance_length": "DOUBLE", "num_speculative_tokens": "DOUBLE", "alpha_iid": "DOUBLE",
    "zero_accept_rate": "DOUBLE", "per_position_acceptance": "DOUBLE[]", "running_requests": "DOUBLE",
    "waiting_requests": "DOUBLE", "generation_throughput": "DOUBLE", "kv_cache_usage": "DOUBLE",
    "itl_p50_ms": "DOUBLE", "itl_p99_ms": "DOUBLE",
    # schema 5: the share of an iteration's time the draft model took (TensorRT-LLM's gauge),
    # appended after counter_reset by its ALTER TABLE
    "draft_overhead": "DOUBLE",
    # schema 6: the mean prompt and output tokens of the requests that finished in the window, and the
    # mean context P + O/2 the verdict ran at, appended after draft_overhead
    "mean_prompt_tokens": "DOUBLE", "mean_output_tokens": "DOUBLE", "mean_context": "DOUBLE"}
# The figures each ALTER TABLE appended after counter_reset, in their order.
_APPENDED = ("draft_overhead", "mean_prompt_tokens", "mean_output_tokens", "mean_context")
WINDOW_COLUMNS: dict[str, str] = {
    "time_start": "TIMESTAMP", "time_end": "TIMESTAMP", "source": "VARCHAR", "engine": "VARCHAR", "model": "VARCHAR",
    **{k: v for k, v in WINDOW_FIGURES.items() if k not in _APPENDED}, "counter_reset": "BOOLEAN",
    **{k: WINDOW_FIGURES[k] for k in _APPENDED}}
TEXT_COLUMNS = frozenset(k for k, v in RUN_COLUMNS.items() if v == "VARCHAR")
INTEGER_COLUMNS = frozenset(k for k, v in RUN_COLUMNS.items() if v in ("INTEGER", "BIGINT"))

ORIGINS = ("user", "example")
"""``imports.origin``: a user's file, or one of the examples shipped in ``data/examples``."""
LIVE_FORMAT = "live"
"""``runs.source_format`` of a run saved from recorded live windows (:meth:`specviz.results.store.Store.save_live_run`)."""
CONCURRENCY_MOST = 10**7
"""The most requests at once a stored run may name (``concurrency``): past it a figure is no load a
benchmark client ran (an attack pass: 1e23 had wrapped to a negative batch in the measured
schedule, and 1e15 had broken the step model's calibration), and is kept in ``extra`` only."""
STATED_METHODS = ("none", "eagle3", "eagle", "mtp", "draft_model", "ngram", "suffix", "medusa")
"""What a user may state a file's runs ran where the file says nothing of speculation
(:meth:`specviz.results.store.Store.state_speculation`): ``none`` for plain decoding, else vLLM's
``--speculative-config`` method names (SGLang's and TensorRT-LLM's map onto them: EAGLE3, NEXTN)."""

MIGRATIONS: tuple[str, ...] = (
    # 1: runs, requests and imports
    """
    CREATE TABLE imports (content_hash VARCHAR PRIMARY KEY, source_file VARCHAR, source_format VARCHAR,
                          imported_at TIMESTAMP, runs INTEGER, requests BIGINT, warnings JSON);
    CREATE TABLE runs (run_id VARCHAR, source_file VARCHAR, source_format VARCHAR, imported_at TIMESTAMP,
        content_hash VARCHAR, label VARCHAR, workload VARCHAR, engine VARCHAR, engine_version VARCHAR,
        target_model VARCHAR, draft_model VARCHAR, spec_method VARCHAR, num_speculative_tokens INTEGER,
        gpu VARCHAR, temperature DOUBLE, concurrency DOUBLE, request_rate DOUBLE, num_requests BIGINT,
        failed_requests BIGINT, duration_s DOUBLE, request_throughput DOUBLE, output_throughput DOUBLE,
        total_token_throughput DOUBLE, mean_ttft_ms DOUBLE, p50_ttft_ms DOUBLE, p90_ttft_ms DOUBLE,
        p99_ttft_ms DOUBLE, mean_itl_ms DOUBLE, p50_itl_ms DOUBLE, p90_itl_ms DOUBLE, p99_itl_ms DOUBLE,
        mean_tpot_ms DOUBLE, p50_tpot_ms DOUBLE, p90_tpot_ms DOUBLE, p99_tpot_ms DOUBLE, mean_e2el_ms DOUBLE,
        p50_e2el_ms DOUBLE, p90_e2el_ms DOUBLE, p99_e2el_ms DOUBLE, acceptance_rate DOUBLE,
        acceptance_length DOUBLE, per_position_acceptance DOUBLE[], zero_accept_rate DOUBLE, extra JSON,
        PRIMARY KEY (run_id));
    CREATE TABLE requests (run_id VARCHAR, ttft_ms DOUBLE, itl_ms DOUBLE, tpot_ms DOUBLE, e2el_ms DOUBLE,
                           input_tokens DOUBLE, output_tokens DOUBLE, extra JSON);
    """,
    # 2: the endpoint type apart from the engine; examples marked by origin, not by file name.
    # Schema 1 stored vLLM's --backend and GuideLLM's backend type in ``engine``: in their runs, the
    # values that are not engines (openai, openai-chat, openai_http, ...) move to ``endpoint``.
    # Schema 1 seeded one example file (data/examples/example_sweep.csv, this content hash) under the
    # name examples/<file>; a user's file of another content keeps origin 'user' whatever its name.
    """
    ALTER TABLE runs ADD COLUMN endpoint VARCHAR;
    UPDATE runs SET endpoint = engine, engine = NULL
        WHERE source_format IN ('vllm-bench', 'guidellm') AND engine IS NOT NULL
          AND engine NOT IN ('vllm', 'sglang', 'tgi', 'lmdeploy', 'deepspeed-mii', 'tensorrt-llm', 'scalellm',
                             'llama.cpp');
    UPDATE runs SET engine = 'trt-llm' WHERE engine = 'tensorrt-llm';
    ALTER TABLE imports ADD COLUMN origin VARCHAR DEFAULT 'user';
    UPDATE imports SET origin = 'user';
    UPDATE imports SET origin = 'example'
        WHERE source_file = 'examples/example_sweep.csv'
          AND content_hash = '9b34511f0aeb45dc240e2da0096feee3860de2f5a02b39ee4f596211f7ee2720';
    """,
    # 3: live metrics (issue 9): the recognised series of each scrape, and the windows between scrapes.
    """
    CREATE TABLE snapshots (time TIMESTAMP, source VARCHAR, engine VARCHAR, model VARCHAR, metric VARCHAR,
                            labels JSON, value DOUBLE);
    CREATE TABLE windows (time_start TIMESTAMP, time_end TIMESTAMP, source VARCHAR, engine VARCHAR, model VARCHAR,
        drafts DOUBLE, draft_tokens DOUBLE, accepted_tokens DOUBLE, acceptance_rate DOUBLE, acceptance_length DOUBLE,
        num_speculative_tokens DOUBLE, alpha_iid DOUBLE, zero_accept_rate DOUBLE, per_position_acceptance DOUBLE[],
        running_requests DOUBLE, waiting_requests DOUBLE, generation_throughput DOUBLE, kv_cache_usage DOUBLE,
        itl_p50_ms DOUBLE, itl_p99_ms DOUBLE, counter_reset BOOLEAN);
    """,
    # 4: per-request acceptance (issue 23) and runs whose acceptance the benchmark set (synthetic).
    """
    ALTER TABLE runs ADD COLUMN synthetic_acceptance BOOLEAN;
    ALTER TABLE requests ADD COLUMN drafts DOUBLE;
    ALTER TABLE requests ADD COLUMN draft_tokens DOUBLE;
    ALTER TABLE requests ADD COLUMN accepted_tokens DOUBLE;
    ALTER TABLE requests ADD COLUMN acceptance_rate DOUBLE;
    ALTER TABLE requests ADD COLUMN acceptance_length DOUBLE;
    """,
    # 5: TensorRT-LLM's draft overhead in live windows (issue 23).
    """
    ALTER TABLE windows ADD COLUMN draft_overhead DOUBLE;
    """,
    # 6: the mean prompt, output and context of the requests that finished in a live window.
    """
    ALTER TABLE windows ADD COLUMN mean_prompt_tokens DOUBLE;
    ALTER TABLE windows ADD COLUMN mean_output_tokens DOUBLE;
    ALTER TABLE windows ADD COLUMN mean_context DOUBLE;
    """,
    # 7: ITL and TPOT as vLLM defines them. AIPerf's, genai-perf's and GuideLLM's "inter-token latency"
    # are a request's (latency - TTFT) / (tokens - 1), vLLM's TPOT, and had been stored as ITL (the gaps
    # between streamed chunks): moved to TPOT. GuideLLM's own time per output token (over every token,
    # the first's wait in it from 0.4) goes to an extra that is an object. llmperf's TPOT is had from its
    # means, (e2e - TTFT) / (tokens - 1), over a finite count of 2 or more (as its importer reads it),
    # where schema 1 had stored its end-to-end time per token as ITL.
    """
    UPDATE runs SET extra = json_merge_patch(coalesce(extra, '{}'), json_object('time_per_output_token_ms',
        json_object('mean', mean_tpot_ms, 'p50', p50_tpot_ms, 'p90', p90_tpot_ms, 'p99', p99_tpot_ms)))
    WHERE source_format = 'guidellm' AND mean_tpot_ms IS NOT NULL AND (extra IS NULL OR json_type(extra) = 'OBJECT');
    UPDATE runs SET mean_tpot_ms = mean_itl_ms, p50_tpot_ms = p50_itl_ms, p90_tpot_ms = p90_itl_ms,
        p99_tpot_ms = p99_itl_ms, mean_itl_ms = NULL, p50_itl_ms = NULL, p90_itl_ms = NULL, p99_itl_ms = NULL
    WHERE source_format IN ('aiperf', 'genai-perf', 'guidellm');
    UPDATE runs SET mean_tpot_ms = CASE WHEN isfinite(tokens) AND tokens >= 2 AND mean_e2el_ms >= mean_ttft_ms
                                        THEN (mean_e2el_ms - mean_ttft_ms) / (tokens - 1) END,
        mean_itl_ms = NULL, p50_itl_ms = NULL, p90_itl_ms = NULL, p99_itl_ms = NULL
    FROM (SELECT run_id AS id, TRY_CAST(json_extract_string(extra, '$.results_number_output_tokens_mean') AS DOUBLE)
                 AS tokens FROM runs) AS llmperf
    WHERE source_format = 'llmperf' AND run_id = llmperf.id;
    UPDATE requests SET tpot_ms = itl_ms, itl_ms = NULL
    WHERE run_id IN (SELECT run_id FROM runs WHERE source_format IN ('aiperf', 'guidellm'));
    """,
    # 8: a run's speculation as the user states it where its file says nothing of it (AIPerf's,
    # genai-perf's: the client does not know what the server ran).
    """
    ALTER TABLE runs ADD COLUMN speculation_by_user VARCHAR;
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)
