"""The calculator's Deploy view: advice, the draft length by load, the serving command and the
draft's compatibility with the target (a helper of pages/what-if.py, not a page)."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
import streamlit as st

from pages.parts.controls import url_choice, url_widget
from pages.parts.shared import altair_chart, titled_dataframe
from specviz import charts, scenario, settings
from specviz.advice import commands, compat, draft_length, serving
from specviz.errors import SpecvizError
from specviz.i18n import message, t

# The view's controls bound to the URL, with their defaults: a shared link carries those set otherwise
# (it had dropped them, and its command differed). Bound, they are not in the server's copy of the
# URL, so the link reads them from the session.
LINKED_FIELDS = {"serve_by_load": True, "serve_target_repo": "", "serve_draft_repo": ""}


def show_serve(chosen: scenario.Scenario, alpha: float, gamma: int, batch: int, context: int, lang: str) -> None:
    """The Deploy view: advice for the scenario, the draft length by load, the command for the chosen
    engine and version, and the draft's compatibility with the target."""
    batch_max, gamma_max = settings.get("SPECVIZ_BATCH_MAX"), settings.get("SPECVIZ_GAMMA_MAX")
    # Bounded by the memory as the scenario's command engine divides it, as that command's flags are.
    schedule = draft_length.gamma_schedule(chosen, alpha, context, batch_max, gamma_max, serving.command_engine(chosen))
    if schedule.empty:  # not one sequence fits: no schedule, no map of where it pays, no command to run
        show_advice(chosen, alpha, gamma, batch, schedule, serving.command_engine(chosen), lang)
        show_pair_check(lang)
        return
    # The advice, the schedule and the map stand above the command's controls but are the engine's chosen
    # there: its memory rule bounds them as it bounds its command (a consistency pass: the schedule had
    # run to vLLM's 311 beside SGLang's --max-running-requests 274).
    above = st.container()
    col_engine, col_version, col_method = st.columns(3)
    # The scenario's engine by default: its costs are the ones the figures and the schedule use.
    engine = url_choice(col_engine.radio, t("calc.serve.engine", lang), list(serving.ENGINES), "serve_engine",
                        format_func=lambda e: t(f"calc.serve.engine.{e}", lang), horizontal=True,
                        default=serving.command_engine(chosen))
    if engine != serving.command_engine(chosen):
        st.caption(t("calc.serve.other_engine", lang, engine=chosen.engine.name))
    # Each engine's releases under a link parameter of its own, so a link keeps both.
    releases = serving.VERSIONS.get(engine, ())
    # An engine of no listed releases (SGLang) shows a dash, not Streamlit's untranslated "Choose an option".
    version = url_choice(col_version.selectbox, t("calc.serve.version", lang), list(releases) or [""],
                         serving.VERSION_KEYS[engine], format_func=lambda v: v or "—",
                         default=serving.default_version(engine, chosen) or "", disabled=not releases,
                         help=t("calc.serve.version_help", lang)) or None
    method = url_choice(col_method.selectbox, t("calc.serve.method", lang), list(commands.METHODS), "serve_method",
                        format_func=lambda m: t(f"calc.serve.method.{m}", lang), help=t("calc.serve.method_help", lang))
    if method != "draft":
        st.caption(t("calc.serve.method_uncosted", lang))
    # The schedule is the sidebar draft's: a method the step model does not cost keeps γ.
    by_load = url_widget(st.toggle, t("calc.serve.by_load", lang), value=LINKED_FIELDS["serve_by_load"], key="serve_by_load",
                         disabled=method != "draft", help=t("calc.serve.by_load_help", lang))
    col_target, col_draft = st.columns(2)
    target_repo = url_widget(col_target.text_input, t("calc.serve.target_repo", lang), value=LINKED_FIELDS["serve_target_repo"],
                             key="serve_target_repo",
                             max_chars=serving.REPO_CHARS, help=t("calc.serve.target_repo_help", lang)).strip() or None
    # The target's MTP layers, n-gram and suffix decoding have no checkpoint of their own to name or check.
    own_draft = commands.names_a_draft(chosen, method)
    draft_repo = None
    if own_draft:
        draft_repo = url_widget(col_draft.text_input, t("calc.serve.draft_repo", lang), value=LINKED_FIELDS["serve_draft_repo"],
                                key="serve_draft_repo",
                                max_chars=serving.REPO_CHARS, help=t("calc.serve.draft_repo_help", lang)).strip() or None
    if engine != serving.command_engine(chosen):  # another engine's command: its own memory rule bounds it
        schedule = draft_length.gamma_schedule(chosen, alpha, context, batch_max, gamma_max, engine)
    with above:
        show_advice(chosen, alpha, gamma, batch, schedule, engine, lang, by_load=by_load and method == "draft")
        if not schedule.empty:
            show_schedule(chosen, alpha, context, schedule, lang)
    try:
        command = serving.serve_command(chosen, schedule, gamma, batch, engine=engine, version=version,
                                        method=method, draft_repo=draft_repo, target_repo=target_repo,
                                        by_load=by_load, alpha=alpha, context=context)
    except SpecvizError as exc:
        st.warning(message(exc, lang))
    else:
        for problem in command.problems:
            st.error(message(problem, lang))
        # Not wrapped: the lines are the options, and a wrapped one (the speculative config's JSON, a
        # long model path at 800 px) ran on at the left edge or left its "\" alone, as if a new line
        # of the command; a line longer than the block scrolls sideways, as it will be pasted.
        st.code(command.lines, language="bash", wrap_lines=False)
        for name, text in command.files.items():
            st.caption(name)
            st.code(text, language="yaml" if name.endswith(".yaml") else "json")
        for notice in command.notices:
            st.info(message(notice, lang))
    if own_draft:
        show_pair_check(lang)


def show_advice(chosen: scenario.Scenario, alpha: float, gamma: int, batch: int, schedule: pd.DataFrame,
                engine: str, lang: str, by_load: bool = True) -> None:
    """The Deploy view's advice at the scenario's batch, for ``engine``'s ``schedule`` (and its command
    of one draft length where not ``by_load``)."""
    advice = draft_length.advise(chosen, alpha, gamma, batch, schedule, engine, by_load)
    st.markdown("\n".join(f"- {message(notice, lang)}" for notice in advice))


def show_schedule(chosen: scenario.Scenario, alpha: float, context: int, schedule: pd.DataFrame, lang: str) -> None:
    """The draft length by batch, and the batch × context map of where speculation pays."""
    batch_max, gamma_max = settings.get("SPECVIZ_BATCH_MAX"), settings.get("SPECVIZ_GAMMA_MAX")
    st.subheader(t("calc.serve.schedule", lang, alpha=alpha, context=context))
    speedups = {t(f"col.{c}", lang): st.column_config.NumberColumn(format="%.2f×")
                for c in ("speedup_low", "speedup_high")}
    titled_dataframe(schedule, lang, column_config=speedups)
    st.caption(t("calc.serve.schedule_note_load" if chosen.prefill else "calc.serve.schedule_note", lang))
    st.subheader(t("calc.serve.map", lang, alpha=alpha))
    # Over contexts a steady load's requests do not have: the map decodes only, and says so.
    by_context = draft_length.gamma_map(replace(chosen, prefill=False), alpha, batch_max, settings.get("SPECVIZ_CONTEXT_MAX"),
                                        gamma_max)
    altair_chart(charts.gamma_map(by_context, lang))
    st.caption(t("calc.serve.map_note", lang) + (" " + t("calc.serve.map_note_load", lang) if chosen.prefill else ""))


@st.cache_resource(max_entries=16, show_spinner=False)
def pair_check(files: tuple[tuple[tuple[str, str], bytes], ...], lang: str) -> compat.PairCheck | SpecvizError:
    """The check of these uploads, or why they cannot be checked: parsed once per content (a rerun
    parsed up to four uploads of 50 MB each again, and four took the app from 1.16 GB to 5.89 GB)."""
    limit = settings.get("SPECVIZ_MAX_TOKENIZER_BYTES")
    try:
        read = {(role, kind): compat.read_json(data, t(f"calc.compat.{role}_{kind}", lang), limit)
                for (role, kind), data in files}
        return compat.check_pair(read[("target", "config")], read[("draft", "config")],
                                 read.get(("target", "tokenizer")), read.get(("draft", "tokenizer")))
    except SpecvizError as exc:
        return exc


def show_pair_check(lang: str) -> None:
    """Can the draft serve the target: their configs and tokenizers, uploaded, compared offline."""
    st.subheader(t("calc.compat.title", lang))
    st.caption(t("calc.compat.intro", lang))
    if settings.get("SPECVIZ_VIEWER"):  # a viewer takes no uploads
        st.info(t("calc.compat.viewer", lang))
        return
    files = {}
    columns = st.columns(2)
    for column, role in zip(columns, ("target", "draft")):
        for kind in ("config", "tokenizer"):
            key = f"compat_{role}_{kind}"
            upload = column.file_uploader(t(f"calc.compat.{role}_{kind}", lang), type=["json"], key=key,
                                          max_upload_size=settings.upload_mb("SPECVIZ_MAX_TOKENIZER_BYTES"))
            if upload is not None:
                files[(role, kind)] = upload.getvalue()
    if ("target", "config") not in files or ("draft", "config") not in files:
        st.info(t("calc.compat.needs_configs", lang))
        return
    check = pair_check(tuple(sorted(files.items())), lang)
    if isinstance(check, SpecvizError):
        st.error(message(check, lang))
        return
    box = {"same": st.success, "usable": st.success, "unusable": st.error, "unknown": st.info}[check.verdict]
    box(t(f"compat.verdict.{check.verdict}", lang))
    st.markdown("\n".join(f"- {message(finding, lang)}" for finding in check.findings))
