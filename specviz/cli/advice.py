"""The serving commands (``claim`` is :mod:`specviz.cli.claim`'s): ``vllm-config`` writes ``vllm serve``
for a version, target and draft (:func:`vllm_config_row`); ``serve`` writes the vLLM, SGLang or
TensorRT-LLM command for a link's scenario (:func:`serve_row`, the Deploy view's)."""

from __future__ import annotations

import argparse
import shlex
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from specviz import scenario, settings
from specviz.advice import claim_over, commands, draft_length, serving, sglang, trtllm
from specviz.errors import Notice, SpecvizError, shortened
from specviz.model import dtypes
from specviz.results import explorer, importers
from specviz.results import schedule as measured

from .common import (UsageError, count, frame_rows, integer, json_text, link_params, linked_scenario, number,
                     open_store, plain, presets, scenario_params, sidebar_notes, words)

# vllm-config's --method: vLLM's names for what drafts, other than a draft model.
_CONFIG_METHODS = ("ngram", "eagle", "eagle3", *(m for m in commands.METHODS if m != "draft"))


def vllm_config_row(args: argparse.Namespace, presets: scenario.Presets) -> dict[str, Any]:
    """``vllm serve`` for a version, a target and a draft model or method: the command, why vLLM
    would not start it as it stands (``problems``) and what else to know of it (``warnings``), in
    words in ``args.lang``, and, with --by-batch, the best draft length per
    batch size from the step model on --gpu at --alpha, written into the command where the version
    takes it."""
    if args.by_batch and (args.gpu is None or args.alpha is None):
        raise UsageError("cli.vllm_config.by_batch")
    # Before the oldest release it knows, specviz knows no option's name (serve refuses them too).
    if commands.parse_version(args.version) < commands.parse_version(commands.VLLM_VERSIONS[0]):
        raise UsageError("cli.version.too_old", version=shortened(args.version), oldest=commands.VLLM_VERSIONS[0])
    params = scenario_params(args, presets, tp=args.tp, dp=args.dp, ep=args.ep, precision=args.precision,
                             kv=args.kv, alpha=args.alpha, gamma=args.gamma)
    if args.method in scenario.DRAFT_KINDS and args.method not in commands.METHODS:
        params["draft"] = args.method
    chosen = linked_scenario("", presets, params)
    method = args.method if args.method in commands.METHODS else "draft"
    schedule = (draft_length.gamma_schedule(chosen, chosen.alpha, chosen.context, settings.get("SPECVIZ_BATCH_MAX"),
                                           settings.get("SPECVIZ_GAMMA_MAX"), "vllm") if args.by_batch else None)
    command = commands.vllm_command(chosen, args.version, args.gamma, schedule=schedule,
                                       off_from=args.disable_by_batch_size, draft_repo=args.head,
                                       # A Hugging Face id names the checkpoint (the preset's own is no other).
                                       target_repo=args.target_repo or (args.target if "/" in args.target else None),
                                       prompt_lookup_max=args.prompt_lookup_max, method=method)
    # With data-parallel ranks, or suffix decoding from 0.33.0, one length: here the --gamma given, not
    # the best at a batch (this command names none), which by_batch lists (an attack pass: "the best
    # length at this batch").
    given = {"command.schedule_dp": "command.schedule_dp_given", "command.schedule_suffix": "command.schedule_suffix_given"}
    notices = [Notice(given[n.key], **n.params) if n.key in given else n for n in command.notices]
    # Past the newest release specviz knows, its options are taken as that release's: said (a CLI
    # pass: 9.9.9 had been written for without a word, where serve refuses it).
    newest = commands.VLLM_VERSIONS[-1]
    if commands.parse_version(args.version) > commands.parse_version(newest):
        notices.append(Notice("cli.version.newer", version=shortened(args.version), newest=newest))
    row: dict[str, Any] = {"command": command.line, "problems": [words(n, args.lang) for n in command.problems],
                           "warnings": [words(n, args.lang) for n in (*notices, *sidebar_notes(chosen))]}
    if schedule is not None:
        row["by_batch"] = [[int(r.first), int(r.last), int(r.gamma)] for r in schedule.itertuples()]
    return row


def linked_deploy(link: str) -> dict[str, Any]:
    """The Deploy view's fields a link carries beside its scenario, each read as the view reads it, by
    :func:`serve_row`'s argument names: ``engine`` (``serve_engine``; the release,
    :func:`linked_release`, is read for the engine the command is for), ``method`` (``serve_method``),
    ``by_load`` (``serve_by_load``, ``true`` or ``false``) and the checkpoints' ids ``target`` and
    ``draft`` (``serve_target_repo``, ``serve_draft_repo``), those the link gives: a link copied from
    the view then gets the view's command (an SGLang command's link had given vLLM's, with the head
    it named left a placeholder).

    Raises
    ------
    UsageError
        ``cli.serve.bad_link_field``, naming the parameter and its value, for one the view would
        not take.
    """
    given = link_params(link)
    fields: dict[str, Any] = {}
    # A choice is taken as written (the view refuses " sglang" or an empty one); an id is stripped, as
    # the view's field strips it, and an empty one names none.
    for name, key, takes in (("engine", "serve_engine", lambda text: text in serving.ENGINES),
                             ("method", "serve_method", lambda text: text in commands.METHODS),
                             ("by_load", "serve_by_load", lambda text: text in ("true", "false")),
                             ("target", "serve_target_repo", lambda text: len(text.strip()) <= serving.REPO_CHARS),
                             ("draft", "serve_draft_repo", lambda text: len(text.strip()) <= serving.REPO_CHARS)):
        if key not in given:
            continue
        if not takes(given[key]):
            raise UsageError("cli.serve.bad_link_field", name=key, value=shortened(given[key]))
        fields[name] = given[key] == "true" if name == "by_load" else given[key].strip() or None
    return fields


def linked_release(link: str, engine: str) -> str | None:
    """The release a link gives for ``engine``, under its key of
    :data:`specviz.advice.serving.VERSION_KEYS`, as the Deploy view reads it: only the key of the engine
    the command is for (another engine's is the view's too, and not read).

    Raises
    ------
    UsageError
        ``cli.serve.bad_link_field`` for a release the view does not list for ``engine``.
    """
    key = serving.VERSION_KEYS[engine]
    given = link_params(link).get(key)
    if given is not None and given not in serving.VERSIONS.get(engine, ()):
        raise UsageError("cli.serve.bad_link_field", name=key, value=shortened(given))
    return given


def serve_row(link: str, presets: scenario.Presets, *, engine: str | None = None, version: str | None = None,
              method: str | None = None, draft: str | None = None, target: str | None = None,
              by_load: bool | None = None, lang: str = "en") -> dict[str, Any]:
    """The Deploy view's command for the scenario of a calculator link: by load, the best γ for every
    batch size written where the engine takes it (else the best γ at the link's batch), and the
    batch from which to stop; otherwise the link's γ. ``draft`` and ``target`` name checkpoints the
    presets do not. Where an argument is None, the view's own field in the link stands for it
    (:func:`linked_deploy`), else the view's default (the scenario's engine and its default release,
    a draft model's method, by load). Its advice, notices and problems in words, in ``lang``."""
    chosen = linked_scenario(link, presets)
    fields = linked_deploy(link)
    engine = engine or fields.get("engine") or serving.command_engine(chosen)
    version = version or linked_release(link, engine)
    method = method or fields.get("method", "draft")
    by_load = fields.get("by_load", True) if by_load is None else by_load
    draft, target = draft or fields.get("draft"), target or fields.get("target")
    _check_release(engine, version)
    version = version or serving.default_version(engine, chosen)
    batch_max, gamma_max = settings.get("SPECVIZ_BATCH_MAX"), settings.get("SPECVIZ_GAMMA_MAX")
    schedule = draft_length.gamma_schedule(chosen, chosen.alpha, chosen.context, batch_max, gamma_max, engine)
    advice = [words(n, lang) for n in draft_length.advise(chosen, chosen.alpha, chosen.gamma, chosen.batch, schedule,
                                                          engine, by_load and method == "draft")]
    if schedule.empty:  # not one sequence fits: no command, as on the page, which says so for another engine
        problems = [] if engine == serving.command_engine(chosen) else [words(serving.engine_no_fit(chosen, engine), lang)]
        return {"engine": engine, "version": version, "command": None, "files": {}, "problems": problems,
                "notices": [], "advice": advice}
    command = serving.serve_command(chosen, schedule, chosen.gamma, chosen.batch, engine=engine, version=version,
                                    method=method, draft_repo=draft, target_repo=target, by_load=by_load)
    return {"engine": engine, "version": version, "command": command.line,
            "files": command.files, "problems": [words(n, lang) for n in command.problems],
            "notices": [words(n, lang) for n in (*command.notices, *sidebar_notes(chosen))], "advice": advice}


def _check_release(engine: str, version: str | None) -> None:
    """Refuse a --version that is not a release of ``engine`` specviz writes for, naming those it does."""
    releases = serving.VERSIONS.get(engine, ())
    if version is not None and version not in releases:
        # Quoted and cut: " 0.24.0" had read as 0.24.0, and 100,000 nines had filled a 100 kB line.
        given = repr(version[:40] + ("…" if len(version) > 40 else ""))
        if releases:
            raise UsageError("cli.version.unknown", version=given, engine=engine, releases=", ".join(releases))
        raise UsageError("cli.version.none", version=given, engine=engine)


def _engine_schedule(ranges: pd.DataFrame, engine: str, version: str | None,
                     methods: list[str]) -> tuple[dict[str, Any] | None, Notice | None]:
    """A measured schedule in ``engine``'s own form, or None and why the release cannot hold it:
    also where it does not read one for a drafting method of the runs (``methods``: SGLang's tiers
    run with EAGLE, EAGLE3 and MTP; TensorRT-LLM's draft_len_schedule by method and release), as the
    Deploy view's command says it (a CLI pass: schedules had been written for MTP runs either engine
    ignores)."""
    longest = int(ranges["gamma"].max())
    if engine == "vllm":  # the Deploy view's keys, and its word where the release has none
        release = version or commands.VLLM_VERSIONS[-1]
        if unread := [m for m in methods if commands.vllm_drops_schedule(m, release)]:
            return None, Notice("cli.schedule.method_unread", methods=", ".join(unread), engine=f"vLLM {release}")
        return commands.vllm_schedule(ranges, release)
    if longest == 0:
        return None, Notice("cli.schedule.no_gain")
    if engine == "sglang":
        if unread := [m for m in methods if m not in sglang.TIERED_METHODS]:
            return None, Notice("cli.schedule.method_unread", methods=", ".join(unread), engine="SGLang")
        return {"adaptive_tiers": sglang.rank_tiers(ranges, 1)}, None
    release = version or trtllm.TRTLLM_DEFAULT
    if unread := [m for m in methods if not trtllm.reads_schedule(m, commands.parse_release(release))]:
        return None, Notice("cli.schedule.method_unread", methods=", ".join(unread), engine=f"TensorRT-LLM {release}")
    table = trtllm.draft_len_schedule(ranges, commands.parse_release(release))
    if table is None:
        return None, Notice("cli.schedule.trtllm_order")
    return {"max_draft_len": longest, "draft_len_schedule": {str(k): v for k, v in table.items()}}, None


def schedule_rows(paths: list[Path], engine: str, version: str | None = None, lang: str = "en") -> dict[str, Any]:
    """Measured draft-length tables (:mod:`specviz.results.schedule`) from result files, each
    setting's in ``engine``'s form, and how many speculative runs could not enter (no batch: a
    request-rate load; no plain run of their batch to measure against; an acceptance the benchmark
    set, :mod:`specviz.results.synthetic`). The files are read into a store of their own, never the
    user's. A table's note, where there is one, in ``lang``."""
    _check_release(engine, version)
    files = [found for path in paths for found in (importers.result_files(path) if path.is_dir() else [path])]
    with tempfile.TemporaryDirectory(prefix="specviz-schedule-") as folder:
        store = open_store(Path(folder) / "runs.duckdb", create=True)
        try:
            for path in files:
                try:
                    store.import_path(path, settings.get("SPECVIZ_MAX_UPLOAD_BYTES"))
                except SpecvizError:
                    raise
                except Exception as exc:  # an unreadable file is named, never a traceback
                    raise importers.as_ingest_error(str(path), exc) from None
            runs, synthetic = explorer.measured_acceptance(explorer.with_view_columns(store.runs()))
        finally:
            store.close()
    table = measured.measured_draft_lengths(runs)
    # Each setting's drafting methods, by its key with NaN as None (NaN is no key a dict finds again).
    setting = lambda key: tuple(None if pd.isna(part) else part for part in key)
    speculative = runs[explorer.is_speculative(runs)]
    methods = {setting(key): sorted({kind for method in group["spec_method"].dropna() if (kind := _method_kind(method))})
               for key, group in speculative.groupby(list(measured.SETTING), dropna=False, sort=False)}
    tables = []
    for key, one in table.groupby(list(measured.SETTING), dropna=False, sort=False):
        ranges = measured.as_ranges(one)
        config, note = _engine_schedule(ranges, engine, version, methods.get(setting(key), []))
        tables.append({"setting": {k: plain(v) for k, v in zip(measured.SETTING, key)},
                       "by_batch": frame_rows(one.drop(columns=list(measured.SETTING))),
                       "ranges": [[int(r.first), int(r.last), int(r.gamma)] for r in ranges.itertuples()],
                       "engine": engine, "version": version or serving.DEFAULT_VERSIONS.get(engine),
                       "config": config, "note": None if note is None else words(note, lang)})
    without_batch = int((explorer.is_speculative(runs) & runs["concurrency"].isna()).sum())
    unpaired = len(explorer.unpaired_speculative(runs, explorer.pair_with_baselines(runs)))
    return {"tables": tables, "speculative_runs_without_a_batch": without_batch,
            "speculative_runs_without_a_baseline": unpaired, "runs_at_synthetic_acceptance_left_out": synthetic}


def _method_kind(method: str) -> str | None:
    """The drafting method a run's ``spec_method`` names (:func:`specviz.advice.claim_over.first_method`;
    "draft_model" and SGLang's "standalone": draft_model; vLLM's "suffix", which a sentence names as
    "suffix decoding"), None where it names none specviz knows."""
    named = method.strip().lower()
    return claim_over.first_method(method) or ("draft_model" if named in ("draft_model", "standalone")
                                               else "suffix" if named == "suffix" else None)


_VLLM_CONFIG_DOC = """\
`vllm serve` for a version, a target and a draft model or a method: the command, its `problems`
(why vLLM would not start it as it stands: a checkpoint still to be named) and its `warnings`;
with --by-batch, the best draft length per batch size as `by_batch`, in the command where the
version takes it. Exit 0 for a command to run, 1 for one with problems (said on stderr); a method
the version cannot run exits 2 with one line. Its scenario is its
options' (the GPU count, expert parallelism and the weights' and cache's formats among them): for a
calculator's link, with its batch, context and costs, `specviz serve`.
"""

_SERVE_DOC = """\
The Deploy view's command for a link's scenario, vLLM, SGLang or TensorRT-LLM (with the YAML file
its --extra_llm_api_options reads), with its advice, notices and problems (a draft the version
cannot run, a draft still to be named). A link copied from the Deploy view carries the view's own
fields (serve_engine, the engine's release, serve_method, serve_by_load, serve_target_repo,
serve_draft_repo): they stand where no option does, so the command is the view's. Exit 0 for a
command to run; 1 where there is none (not one sequence fits) or the engine would not start it as
it stands (`problems`), said on stderr, and with --format shell the script then exits 1 before any
command, so that `| bash` runs nothing.
"""

def add_parsers(sub: argparse._SubParsersAction) -> None:
    """The advice subcommands."""
    p = sub.add_parser("vllm-config", description=_VLLM_CONFIG_DOC, help="the vllm serve command for a version, target and draft or method "
                                           "(with --by-batch, the draft length per batch size)")
    p.add_argument("--version", required=True, help="the vLLM release, e.g. 0.10.0")
    p.add_argument("--target", required=True, help="a model preset id, its Hugging Face id or a checkpoint of its "
                                                   "architecture (deepseek-ai/DeepSeek-R1 is DeepSeek-V3)")
    p.add_argument("--target-repo", help="the checkpoint to serve, where not the preset's own (default: --target where "
                                         "it names a checkpoint of the preset's architecture)")
    drafting = p.add_mutually_exclusive_group(required=True)
    drafting.add_argument("--draft", help="a draft model or head: a preset id (a model's or a draft head's) or a model's Hugging Face id")
    drafting.add_argument("--method", choices=_CONFIG_METHODS, help="a method instead of a draft model "
                                                                    "(--head names an EAGLE, Medusa or MLP checkpoint)")
    p.add_argument("--head", help="the Hugging Face id of the EAGLE, EAGLE-3, Medusa or MLP-speculator checkpoint")
    p.add_argument("--gamma", type=count, required=True, help="num_speculative_tokens")
    p.add_argument("--tp", type=integer, choices=scenario.TENSOR_PARALLEL, help="tensor parallelism (default: the "
                                                                           "GPUs the pair needs)")
    p.add_argument("--dp", type=integer, choices=scenario.DATA_PARALLEL, help="data-parallel attention groups of --tp "
                                                                         "GPUs each (default: as for --tp)")
    p.add_argument("--ep", choices=scenario.EXPERT_PARALLEL, help="expert parallelism over the tp·dp GPUs (default: "
                                                                 "on where the pair needs it)")
    p.add_argument("--precision", choices=list(dtypes.PRECISIONS), help="the weights' and KV cache's formats (default "
                                                                       "checkpoint: each component's as its config.json ships it)")
    p.add_argument("--kv", choices=dtypes.KV_FORMATS, help="the KV cache's format, over the precision's")
    p.add_argument("--disable-by-batch-size", type=count, help="stop speculating from this batch (where the "
                                                               "version can)")
    p.add_argument("--prompt-lookup-max", type=count, default=4,
                   help="the n-gram looked up in the prompt (vLLM's prompt_lookup_max, default 4): from 0.8.2, "
                        "with no prompt_lookup_min, vLLM matches exactly this many tokens; before, 1 up to it")
    p.add_argument("--by-batch", action="store_true", help="the best draft length for each batch size from the step "
                                                           "model (needs --gpu and --alpha)")
    p.add_argument("--gpu", help=f"GPU preset id (default {scenario.DEFAULT_GPU}): it sizes the GPU count and "
                                "--max-num-seqs (needed with --by-batch)")
    p.add_argument("--alpha", type=number, help="per-position acceptance α (for --by-batch)")
    p.add_argument("--context", type=integer, help="context length in tokens: it sizes --max-model-len and --max-num-seqs "
                                               "(default 1,024)")
    p.add_argument("--format", choices=("json",), default="json", help="output format")
    p.set_defaults(run=lambda args: _written(vllm_config_row(args, presets()), json_text, args.lang))

    p = sub.add_parser("schedule", description=_SCHEDULE_DOC, help="the best draft length per batch size, measured "
                                     "from result files, as an engine's schedule")
    p.add_argument("--from-runs", type=Path, nargs="+", required=True, metavar="FILE",
                   help="result files (or folders of them) holding plain and speculative runs at several batches")
    p.add_argument("--engine", choices=serving.ENGINES, default="vllm", help="whose schedule to write (default vllm)")
    p.add_argument("--version", help="the TensorRT-LLM release whose draft_len_schedule to write (default "
                   + serving.DEFAULT_VERSIONS["trtllm"] + "; 1.2 and 1.3 read its keys differently)")
    p.add_argument("--format", choices=("json",), default="json", help="output format")
    p.set_defaults(run=lambda args: (json_text(schedule_rows(args.from_runs, args.engine, args.version, args.lang)), 0))

    p = sub.add_parser("serve", description=_SERVE_DOC, help="the vLLM, SGLang or TensorRT-LLM command for the scenario of a "
                                     "calculator link, as the Deploy view writes it")
    p.add_argument("link", nargs="?", default="", help="the scenario, as for calc; empty: the default scenario")
    p.add_argument("--engine", choices=serving.ENGINES,
                   help="the command's engine (default: the Deploy view's, the link's serve_engine, else the link's "
                        "engine: SGLang's for engine=sglang, TensorRT-LLM's for engine=trt-llm, else vLLM's)")
    p.add_argument("--version", help="the vLLM release (" + ", ".join(serving.VERSIONS["vllm"]) + "; default "
                   + serving.DEFAULT_VERSIONS["vllm"] + ", " + commands.vllm_default_version("vllm-v0")
                   + " for engine=vllm-v0, the newest that serves on V0) or TensorRT-LLM release (" + ", ".join(serving.VERSIONS["trtllm"])
                   + "; default " + serving.DEFAULT_VERSIONS["trtllm"] + "); a link from the Deploy view gives its own "
                   "(serve_version, trtllm_version)")
    p.add_argument("--method", choices=commands.METHODS,
                   help="how to draft (default: the link's serve_method, else the scenario's draft)")
    p.add_argument("--draft", help="the draft's Hugging Face id or path, where specviz has none")
    p.add_argument("--target-repo", help="the target's Hugging Face id or path, where not the preset's own "
                                         "(DeepSeek-R1 on DeepSeek-V3's architecture, an FP4 build)")
    p.add_argument("--one-length", action="store_true", help="one draft length (the link's γ), not one per batch size")
    p.add_argument("--format", choices=("json", "shell"), default="json",
                   help="output format: json, or shell (a script: the notes as comments, the files, the command)")
    p.set_defaults(run=_serve)


_SCHEDULE_DOC = """\
The best draft length at each batch, measured: from a grid of runs that share target, draft, GPU,
engine and workload but differ in batch (concurrency) and γ (SpecForge's benchmark, a vllm bench
sweep over num_speculative_tokens, your own runs), each speculative run against the plain run of
its batch; written as the engine's schedule (vLLM's num_speculative_tokens_per_batch_size, SGLang's
adaptive tiers, TensorRT-LLM's draft_len_schedule for the release), where the engine reads one for
the runs' drafting method (SGLang's tiers: EAGLE, EAGLE3 and MTP; TensorRT-LLM's: n-gram and draft
models from 1.2.0rc3, EAGLE-3 from 1.3.0rc8, MTP in no release identified), else `config` is null and
`note` says why. The files are read, not stored.
"""


def _serve(args: argparse.Namespace) -> tuple[str, int]:
    row = serve_row(args.link, presets(), engine=args.engine, version=args.version, method=args.method,
                    draft=args.draft, target=args.target_repo, by_load=False if args.one_length else None,
                    lang=args.lang)
    return _written(row, (lambda r: _shell(r, args.lang)) if args.format == "shell" else json_text, args.lang)


def _written(row: dict[str, Any], text: Callable[[dict[str, Any]], str], lang: str) -> tuple[str, int]:
    """A serving command's row as ``text`` writes it, and the exit status: 1 where there is no command
    (not one sequence fits) or the engine would not start it as it stands (``problems``: a draft it
    cannot run, a checkpoint to name), said on stderr, so that a script can tell (both had exited 0);
    else 0."""
    if row["command"] is None or row["problems"]:
        said = (Notice("cli.serve.not_runnable", problems=len(row["problems"])) if row["command"] is not None
                else Notice("cli.serve.no_command"))
        print(f"specviz: {words(said, lang)}", file=sys.stderr)
        return text(row), 1
    return text(row), 0


def _shell(row: dict[str, Any], lang: str) -> str:
    """:func:`serve_row` as a script to read and run: its advice, problems and notices as comments
    (labelled in ``lang``), each file it reads written by a here-document, then the command. Where
    there is no command or the engine would not start it, the script exits 1 after the comments, so
    that ``| bash`` runs nothing (it had run a command with a placeholder for the draft, and crashed
    where there was no command)."""
    comment = lambda label, texts: [f"# {words(Notice(label), lang)}: {' '.join(text.splitlines())}" for text in texts]
    lines = [*comment("cli.serve.advice", row["advice"]), *comment("cli.serve.problem", row["problems"]),
             *comment("cli.serve.note", row["notices"])]
    if row["command"] is None or row["problems"]:
        lines.append("exit 1")
    for name, text in row["files"].items():
        lines += [f"cat > {shlex.quote(name)} <<'SPECVIZ_EOF'", text, "SPECVIZ_EOF"]
    return "\n".join([*lines, *([row["command"]] if row["command"] is not None else [])])
