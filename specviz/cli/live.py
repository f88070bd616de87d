"""The live commands: ``metrics`` reads a ``/metrics`` URL or a file of exposition text (and, with
``--since``, an earlier one) and prints the speculative-decoding figures per model
(:func:`metrics_rows`); ``record`` polls a source into the store (:func:`specviz.results.recorder.record`):
one progress line per poll on stderr, and a JSON summary on stdout when it ends (after ``--count``
polls, or Ctrl-C); ``prometheus`` reads the same figures over time from a Prometheus server's API."""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any, Sequence

from specviz import settings
from specviz.errors import Notice
from specviz.live import exposition, prometheus, scrape
from specviz.live.states import SpecDecodeState, spec_decode_states
from specviz.live.access import Access
from specviz.results import recorder

from .common import DB, UsageError, count, format_rows, json_text, open_store, positive, words

def prometheus_rows(args: argparse.Namespace) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The ``prometheus`` command's points (one per time, model and ``--by`` label; NaN figures as
    null) and what they rest on: the source, the PromQL run and the notices, in ``args.lang``."""
    frame = prometheus.query_figures(args.base_url, args.range_, args.step, window_s=args.window, by=tuple(args.by),
                                     limits=_limits(args))
    flat = frame.reset_index()
    flat["time"] = flat["time"].map(lambda moment: moment.isoformat())
    about = {"source": frame.attrs["source"], "queries": frame.attrs["queries"],
             "notices": [words(notice, args.lang) for notice in frame.attrs["notices"]]}
    return json.loads(flat.to_json(orient="records")), about


METRICS_KEYS = ("engine", "model_name", "labels", "window", "seconds", "drafts", "draft_tokens", "accepted_tokens",
                "acceptance_rate", "acceptance_length", "alpha_iid", "num_speculative_tokens",
                "per_position_acceptance", "per_position_conditional", "zero_accept_rate", "counter_reset",
                "emitted_tokens", "reported_acceptance_rate", "reported_acceptance_length", "system_efficiency",
                "draft_overhead", "running_requests", "waiting_requests", "generation_tokens", "generation_throughput",
                "kv_cache_usage", "mean_prompt_tokens", "mean_output_tokens", "mean_context", "itl_p50_ms", "itl_p99_ms",
                "summed_labels", "absent", "notices")
"""The keys of each row of ``metrics``: :class:`specviz.live.states.SpecDecodeState`'s fields, the
inter-token latency in milliseconds, ``absent`` (figure → why it is absent) and ``notices``, both in
the reader's language."""
_IN_MS = {"itl_p50": "itl_p50_ms", "itl_p99": "itl_p99_ms"}


def state_row(state: SpecDecodeState, lang: str = "en") -> dict[str, Any]:
    """One model's figures as a JSON-safe dict with :data:`METRICS_KEYS`: an absent figure is
    ``null`` and its reason is in ``absent``; reasons and notices in ``lang``."""
    row: dict[str, Any] = {}
    for key in METRICS_KEYS:
        field_name = next((name for name, shown in _IN_MS.items() if shown == key), key)
        value = getattr(state, field_name)
        if key in _IN_MS.values() and value is not None:
            value *= 1000.0
        row[key] = value
    row["summed_labels"] = list(state.summed_labels)
    row["absent"] = {_IN_MS.get(name, name): words(notice, lang) for name, notice in state.absent.items()}
    row["notices"] = [words(notice, lang) for notice in state.notices]
    return row


def _limits(args: argparse.Namespace) -> scrape.Limits:
    """The scrape limits of the settings, and with --allow-any-host any host but the always-refused
    (the person at the terminal may read what the app's visitors may not)."""
    limits = scrape.Limits.from_settings()
    return replace(limits, access=Access.anywhere()) if args.allow_any_host else limits


def _scraped(source: str, limits: scrape.Limits | None) -> tuple[exposition.Snapshot, Notice | None]:
    """A source fetched and parsed, and where a redirect moved it, said; a URL's scrape carries the time
    its answer came (a file's has none: rates per second need two URL scrapes)."""
    is_url = scrape._scheme(source.strip()) is not None  # as fetch_source tells a URL from a path
    scraped = scrape.fetch_source(source, limits)
    moved = (Notice("scrape.redirected", source=scrape.shown(source), url=scrape.shown(scraped.url))
             if scraped.redirected else None)
    return exposition.parse(scraped.text, time.time() if is_url else None), moved


def metrics_rows(source: str, since: str | None = None, split_by: Sequence[str] = (),
                 limits: scrape.Limits | None = None, lang: str = "en") -> list[dict[str, Any]]:
    """The ``metrics`` subcommand's rows: :func:`state_row` of each model of ``source`` (totals since
    the server started), or of the window since the scrape ``since`` (read first), in ``lang``.

    Raises
    ------
    specviz.live.scrape.ScrapeError, SpecvizError
        For a source that cannot be read, is not exposition text or holds no speculative decoding.
    """
    previous, moved_before = _scraped(since, limits) if since is not None else (None, None)
    current, moved = _scraped(source, limits)
    rows = [state_row(state, lang) for state in spec_decode_states(current, previous, tuple(split_by))]
    if said := [words(notice, lang) for notice in (moved_before, moved) if notice is not None]:
        rows = [{**row, "notices": [*row["notices"], *said]} for row in rows]
    if previous is not None and previous.time is not None and current.time is not None:
        least = settings.get("SPECVIZ_LIVE_MIN_WINDOW_S")
        if (seconds := current.time - previous.time) < least:
            # As short as the store refuses (an SRE's pass: --since of the same URL gave 0.01 s, one
            # draft, acceptance 0): mostly when each scrape was timed, said on each row.
            said = words(Notice("cli.metrics.short_window", seconds=seconds, least=least), lang)
            rows = [{**row, "notices": [*row["notices"], said]} for row in rows]
    return rows


def _figure(value: float | None, lang: str, digits: str) -> str:
    return words(Notice("cli.record.none"), lang) if value is None else format(value, digits)


def poll_line(poll: recorder.Poll, count: int | None = None, lang: str = "en") -> str:
    """One progress line of ``record`` in ``lang``: the poll's number, time (UTC) and outcome; per
    model the acceptance length and rate, γ, running requests and tokens/s."""
    when = datetime.fromtimestamp(poll.time, timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    number = f"{poll.number}{'' if count is None else f'/{count}'}"
    if not poll.ok:  # the recorder's failure, a message in the reader's language
        return words(Notice("cli.record.failed", number=number, when=when, error=poll.failure), lang)
    if poll.too_soon_s is not None:
        return words(Notice("cli.record.too_soon", number=number, when=when, seconds=poll.too_soon_s,
                            most=settings.get("SPECVIZ_LIVE_MIN_WINDOW_S")), lang)
    back = Notice("cli.record.back") if poll.after_failure else ""
    kind = (Notice("cli.record.anew", back=back, reason=poll.anew) if poll.anew is not None
            else Notice("cli.record.window" if poll.window else "cli.record.first", back=back))
    models = []
    for state in poll.states:
        text = words(Notice("cli.record.model", model=state.model_name or Notice("cli.record.no_model"),
                            length=_figure(state.acceptance_length, lang, ".2f"),
                            rate=_figure(state.acceptance_rate, lang, ".3f"),
                            gamma=_figure(state.num_speculative_tokens, lang, "g"),
                            running=_figure(state.running_requests, lang, ".0f")), lang)
        if poll.window:
            # As the Live page gives them: no exponent (an SRE's pass: "1.117e+04 tokens/s").
            text += words(Notice("cli.record.throughput", rate=_figure(state.generation_throughput, lang, ".0f")), lang)
        if state.counter_reset:
            text += words(Notice("cli.record.reset"), lang)
        models.append(text)
    line = words(Notice("cli.record.recorded", number=number, when=when, kind=kind, models="; ".join(models)), lang)
    if poll.read_from is not None:
        line += words(Notice("cli.record.read_from", url=scrape.shown(poll.read_from)), lang)
    return line


def _record(args: argparse.Namespace) -> tuple[str, int]:
    if args.every < (least := settings.get("SPECVIZ_LIVE_MIN_WINDOW_S")):
        # Each poll but the first would be refused as too soon after its own (an SRE's pass: --every 0.1
        # was taken, and most polls were said to follow "another recorder's").
        raise UsageError("cli.record.too_often", every=args.every, least=least)
    store = open_store(args.db, create=True)

    def progress(poll: recorder.Poll) -> None:
        print(poll_line(poll, args.count, args.lang), file=sys.stderr, flush=True)

    interrupted = False
    summary = recorder.RecordSummary()
    try:
        recorder.record(store, args.source, args.every, args.count, limits=_limits(args),
                        on_poll=lambda poll: (summary.add(poll), progress(poll)))
    except KeyboardInterrupt:  # Ctrl-C ends a recording; what was stored stays
        interrupted = True
    finally:
        store.close()
    report = {"source": scrape.shown(args.source), "db": str(args.db or settings.get("SPECVIZ_DB")),
              "polls": summary.polls, "recorded": summary.recorded, "failed": summary.failed,
              "too_soon": summary.too_soon, "windows": summary.windows, "anew": summary.anew, "interrupted": interrupted}
    if not summary.recorded and not summary.too_soon:
        # Said on stderr as any error, and the summary still on stdout: a script that reads it learns
        # how many polls failed, as it does where some succeeded.
        failed = (Notice("cli.record.all_failed_last", source=scrape.shown(args.source), failed=summary.failed,
                         error=summary.last_failure) if summary.last_failure is not None
                  else Notice("cli.record.all_failed", source=scrape.shown(args.source), failed=summary.failed))
        print(f"specviz: error: {words(failed, args.lang)}", file=sys.stderr)
        return json_text(report), 2
    return json_text(report), 0


_METRICS_DOC = """\
Per model, the speculative-decoding figures of `specviz/live/states.py`: `engine`, `model_name`,
`drafts`, `draft_tokens`, `accepted_tokens`, `acceptance_rate` (vLLM's accepted/drafted),
`acceptance_length`, `alpha_iid`, `num_speculative_tokens`, `per_position_acceptance`,
`per_position_conditional`, `zero_accept_rate`, `counter_reset`, the companions (running and waiting
requests, generation tokens and tokens/s, KV-cache usage, `itl_p50_ms`/`itl_p99_ms`) and the
engine's own gauges; a figure the engine does not export is `null`, with its reason under `absent`
(in the language of --lang, as `notices`).

Without --since the figures are totals since the server started; --since takes an earlier scrape
(file or URL, read first) and gives the window between the two, counting from zero after a restart
(`counter_reset`: a counter went down, or `process_start_time_seconds` changed); a start time before
the earlier scrape is another process's (a load balancer, a redirect, another server), and no window
is given (exit 2), as where the two scrapes hold speculative decoding of no model in common. A URL's scrape carries the time its answer came; a file's has none, so rates per
second need two URLs; a window shorter than `SPECVIZ_LIVE_MIN_WINDOW_S` is said in `notices`, and so
is the URL a redirect led to, where the figures were read from. --split-by engine keeps vLLM's data-parallel engines apart instead of summing
them.
"""

_RECORD_DOC = """\
Polls a source every --every seconds into the store (`specviz/results/recorder.py`) until --count
polls or Ctrl-C: one progress line per poll on stderr (number, UTC time, and per model the
acceptance length and rate, γ, running requests and tokens/s, the URL a redirect led to, or why the
poll failed), and a JSON summary on stdout when it ends (`polls`, `recorded`, `failed`, `too_soon`,
`windows`, `anew`, `interrupted`).
A poll less than `SPECVIZ_LIVE_MIN_WINDOW_S` after the source's last stored scrape (another
recorder's, or the Live page's) is not stored (`too_soon`): its window would be mostly the error of
when each scrape was timed; an --every below that setting is refused at once (exit 2).

A failed poll (server down or restarting, refused answer, store locked) is a progress line, not the
end; the next poll that succeeds stores its window against the last scrape stored, counted from zero
where the counters went down or `process_start_time_seconds` changed (a restart). A start before the
last stored scrape is another process's (a rolling update's new pod, a load balancer), as is a scrape
of no model in common with it: that poll gives no window, says why, and is stored as the source's
new start (`anew`), so that the next poll of the same server gives a window again. Exit 0 if any poll
was stored, else 2 with the last failure on the final line of stderr (the summary still on stdout).
"""

_PROMETHEUS_DOC = """\
Asks a Prometheus server (or Thanos, Mimir, VictoriaMetrics) for the spec-decode counters of every
server it scrapes (`specviz/live/prometheus.py`: `sum by (model_name)` of `increase()` over each
--window, one point per --step over --range, at most `SPECVIZ_PROMETHEUS_MAX_POINTS` points) and
derives the same figures as `metrics` does for a window, through the same code. JSON: `source`,
`queries` (the PromQL run), `notices` and `points` (one per time, model and --by label; a figure the
engine does not export is null); CSV: the points.

Tested against a real Prometheus (Debian's `prometheus`) scraping two replay exporters: within 0.005
of the acceptance rate and 0.013 of the acceptance length that two direct scrapes of the same window
give.
"""

def add_parsers(sub: argparse._SubParsersAction) -> None:
    """The live subcommands."""
    p = sub.add_parser("metrics", description=_METRICS_DOC, help="speculative-decoding figures per model from a /metrics URL or a file of "
                                       "exposition text, since the server started or since an earlier scrape")
    p.add_argument("source", help="an http(s) URL such as http://localhost:8000/metrics, or a file")
    p.add_argument("--since", metavar="PREVIOUS", help="an earlier scrape of the same server (URL or file): "
                                                       "the figures are then the window between the two")
    p.add_argument("--split-by", nargs="+", default=[], metavar="LABEL",
                   help="labels to keep apart instead of summing over, e.g. engine (data-parallel engines)")
    p.add_argument("--format", choices=("json",), default="json", help="output format")
    _allow_any_host(p)
    p.set_defaults(run=lambda args: (json_text(metrics_rows(args.source, args.since, args.split_by, _limits(args),
                                                            args.lang)), 0))

    p = sub.add_parser("record", description=_RECORD_DOC, help="poll a /metrics URL (or a file) every N seconds into the store's "
                                      "snapshots and windows tables; a progress line per poll on stderr")
    p.add_argument("source", help="an http(s) URL such as http://localhost:8000/metrics, or a file")
    p.add_argument("--db", **DB)
    p.add_argument("--every", type=positive(Notice("cli.unit.seconds"), 86_400), required=True, metavar="SECONDS",
                   help="seconds between polls (at most a day)")
    p.add_argument("--count", type=count, metavar="N", help="polls to make (default: until Ctrl-C)")
    p.add_argument("--format", choices=("json",), default="json", help="output format")
    _allow_any_host(p)
    p.set_defaults(run=_record)

    p = sub.add_parser("prometheus", description=_PROMETHEUS_DOC, help="speculative-decoding figures over time from a Prometheus server's HTTP "
                                          "API (or Thanos, Mimir, VictoriaMetrics), summed over the servers it scrapes")
    p.add_argument("base_url", help="e.g. http://localhost:9090")
    p.add_argument("--range", default="1h", dest="range_", help="how far back, e.g. 1h (default)")
    p.add_argument("--step", default="30s", help="one point per step, e.g. 30s (default)")
    p.add_argument("--window", help="the increase() window of each point (default: the step)")
    p.add_argument("--by", nargs="+", default=[], metavar="LABEL", help="labels kept apart, e.g. instance")
    p.add_argument("--format", choices=("json", "csv"), default="json", help="output format")
    _allow_any_host(p)
    p.set_defaults(run=_prometheus)


def _allow_any_host(p: argparse.ArgumentParser) -> None:
    p.add_argument("--allow-any-host", action="store_true",
                   help="read from any host, not only those SPECVIZ_METRICS_ALLOW allows (link-local and cloud "
                        "metadata addresses are still refused)")


def _prometheus(args: argparse.Namespace) -> tuple[str, int]:
    rows, about = prometheus_rows(args)
    if args.format == "csv":
        return format_rows(rows, "csv"), 0
    return json_text({**about, "points": rows}), 0
