"""Streamlit helpers shared by app.py and the pages (not a page: st.navigation lists pages itself)."""

from __future__ import annotations

from contextlib import contextmanager
from functools import wraps
from pathlib import Path
from typing import Any, Callable, Iterator

import altair as alt
import pandas as pd
import streamlit as st

from pages.parts.controls import forget, forget_controls
from specviz import charts, i18n, scenario, settings
from specviz.errors import SpecvizError
from specviz.i18n import md, message, t
from specviz.model import calibration
from specviz.results import explorer, export, request_acceptance
from specviz.results.store import Store, StoreError


ROUTED = "routed_by_app"  # set by app.py around page.run(): a page run without it came from elsewhere


def page_file(name: str) -> Path:
    """The file of the page ``name`` (a key of :data:`specviz.scenario.PAGE_PATHS`): each page's file is
    named by its URL path, for :func:`require_router`."""
    return Path(__file__).resolve().parent.parent / f"{scenario.PAGE_PATHS[name]}.py"


def require_router(name: str) -> None:
    """Hand the page ``name`` (a key of :data:`specviz.scenario.PAGE_PATHS`) over to app.py's
    st.navigation router, where Streamlit ran its file without it.

    A ``pages/`` folder beside app.py puts Streamlit (1.67) in its older multipage mode until the
    first ``st.navigation`` call of the process: that mode runs a page file on its own, without the
    router or the sidebar, when the requested path is the file's name (streamlit/streamlit#10276), and
    says "Page not found" over the page when no file has that name. Each page's file is therefore
    named by its URL path (:func:`page_file`), so that the very first request of a fresh server for
    /results (or a tab reconnecting to a restarted one) finds ``results.py``; this guard sees that
    app.py did not route the run, calls ``st.navigation`` with a page of that path (which ends the
    older mode for the process) and reruns: the rerun keeps that path's page, which app.py's router
    now runs. Public API only, nothing patched; pinned by tests/test_browser.py.
    """
    if not st.session_state.get(ROUTED):
        st.navigation([st.Page(lambda: None, title="specviz", url_path="routing"),
                       st.Page(lambda: None, title="specviz", url_path=scenario.PAGE_PATHS[name])], position="hidden")
        st.rerun()


def calculator_page(lang: str) -> st.Page:
    """The calculator at its own path, /what-if, hidden from the menu: the page links from other pages
    open (app.py registers it after the default). A link to the default page, served at the root, has
    an empty path, which a browser resolves against the page it is on: the Claims page's link to the
    calculator, opened in a new tab or copied, had opened the Claims page."""
    return st.Page(page_file("calculator"), title=t("nav.calculator", lang),
                   icon=":material/calculate:", url_path=scenario.PAGE_PATHS["calculator"], visibility="hidden")


@contextmanager
def errors_said(lang: str) -> Iterator[None]:
    """No exception reaches the page as a traceback: a :class:`SpecvizError` is said in ``lang``, any
    other as what failed (around app.py's pages, and each run of a :func:`fragment`)."""
    try:
        yield
    except SpecvizError as exc:  # e.g. the store stayed locked by an import longer than the timeout
        st.error(message(exc, lang))
    except Exception as exc:  # the last layer: say what failed instead of showing a traceback
        st.error(md("error.unexpected", lang, kind=type(exc).__name__, detail=str(exc)))  # its text escaped


# Set by whole_page_after: the next run of a fragment reruns the whole page instead.
_APP_RERUN = "_rerun_whole_page"


def fragment(func: Callable[..., None] | None = None, *, run_every: float | None = None) -> Any:
    """``st.fragment(func, run_every=run_every)``: a control inside it reruns it alone, not the router,
    the sidebar nor the rest of the page. Its errors are said as app.py says a page's
    (:func:`errors_said`, in the session's language): its own reruns (a control's, or the timer's
    every ``run_every`` seconds) do not pass through app.py, and Streamlit would show a traceback.
    Used as ``@fragment`` or ``@fragment(run_every=...)``."""
    if func is None:
        return lambda wrapped: fragment(wrapped, run_every=run_every)

    @wraps(func)
    def run(*args: Any, **kwargs: Any) -> None:
        if st.session_state.pop(_APP_RERUN, False):
            st.rerun(scope="app")
        with errors_said(st.session_state.get("lang", "en")):
            func(*args, **kwargs)
    return st.fragment(run, run_every=run_every)


def whole_page_after(callback: Callable[..., None], *args: Any) -> None:
    """A callback of a button inside a :func:`fragment` whose change the whole page must follow (the
    sidebar, every figure): ``callback(*args)``, then the page reruns from the fragment's next run.
    Not from the click's own run: under load the fragment's timer cut that run short before the
    button returned True, and the sidebar stayed on the old model (a Chromium test saw it)."""
    callback(*args)
    st.session_state[_APP_RERUN] = True


@st.cache_resource
def shared_store(path: str) -> Store:
    """The app's one Store per process, with the shipped examples imported on its first use (not by
    a viewer or into a read-only file). Kept between reruns for its checks (made once) and the SQL
    console's copy of the tables; it holds no connection: each call opens the file and closes it,
    so between reruns the command line or a recorder can write it."""
    store = Store(path, settings.get("SPECVIZ_DB_LOCK_TIMEOUT_S"))
    if not (store.read_only or settings.get("SPECVIZ_VIEWER")):
        store.seed_examples(sorted((settings.get("SPECVIZ_DATA_DIR") / "examples").glob("*.csv")))
    return store


def open_store(lang: str) -> Store:
    """:func:`shared_store` for a page; a store that cannot be opened ends the page with its message,
    and one in memory (``SPECVIZ_DB=:memory:``) is said to be this process's alone."""
    try:
        store = shared_store(str(settings.get("SPECVIZ_DB")))
    except StoreError as exc:
        st.error(message(exc, lang))
        st.stop()
    if store.path == ":memory:":  # the command line, a recorder and a restart see none of it
        st.warning(t("store.in_memory", lang))
    return store


@st.cache_resource
def presets(data_dir: Path) -> scenario.Presets:
    """GPU, model, engine and workload presets, read once per data folder."""
    return scenario.load_presets(data_dir)


@st.cache_resource
def published_speedups(data_dir: Path) -> pd.DataFrame:
    """The published results that are speedups (:func:`specviz.results.explorer.speedup_rows`), read once
    per data folder: the calculator sets those of its setting beside its figure on every run. Not
    to be changed in place."""
    return explorer.speedup_rows(explorer.load_published(data_dir))


def how_sure(engine: str, held: bool, lang: str) -> str:
    """What the range the calculator and Claims show means (``calc.band_method``): drawn over the
    ``engine`` preset's knobs and widened by the model's error on held-out points, with how far a
    figure before calibration can be off; ``held``, every cost knob set, nothing drawn."""
    return t(f"calc.band_method{'_held' if held else ''}", lang, engine=engine, points=calibration.MODEL_ERROR_POINTS,
             preset_points=calibration.PRESET_POINTS, preset_miss=calibration.PRESET_MEDIAN_MISS,
             preset_holds=calibration.PRESET_BAND_HOLDS)


def model_choice_name(model_id: str, known: scenario.Presets, lang: str) -> str:
    """A target's or draft's id as the sidebar lists it: a draft kind, a head or a model by its group
    ("Dense · Qwen3-32B"), so that a page that names a choice names it as the sidebar does."""
    if model_id in scenario.DRAFT_KINDS:
        return t(f"side.draft.{model_id}", lang)
    if model_id == scenario.CUSTOM:
        return t("side.custom_option", lang)
    if model_id in known.heads:
        return i18n.in_language(known.heads[model_id][1].name, lang)
    model = known.models[model_id]
    return t(f"side.group.{scenario.model_group(model)}", lang, name=i18n.in_language(model.name, lang))


def offer_fit(lang: str, key: str, found: str, suspect: list[str], fitted: scenario.Scenario,
              known: scenario.Presets) -> None:
    """What a fit found, a warning for each thing that makes it suspect and, only if nothing does, a
    button that opens the calculator at the fit (a suspect fit is not handed on as if it held).

    The fit gives costs, not a point: the calculator opens at ``fitted``'s α, γ and batch (the
    sidebar's), and the caption under the button says so."""
    (st.warning if suspect else st.success)(found)
    for text in suspect:
        st.warning(text)
    if suspect:
        return
    link = scenario.to_query_params(fitted, known)
    if st.button(t("exp.use_in_calculator", lang), key=key, on_click=forget_controls, args=(link,)):
        st.switch_page(page_file("calculator"), query_params=link)
    st.caption(t("exp.use_in_calculator_note", lang, alpha=fitted.alpha, gamma=fitted.gamma, batch=fitted.batch))


# The cost knobs a link set (a knob name → its value), kept for the session: the router prices every
# page with them (app.py) where the calculator's cost panel has not set the knob since.
LINKED_COSTS = "linked_costs"


def knobs_said(off: dict[str, tuple[float, float]], lang: str) -> str:
    """The knobs that differ from the engine's preset (:func:`specviz.scenario.knobs_off_preset`), each
    with its value and the preset's, as a badge's caption and the sidebar say them."""
    return "; ".join(t("calc.off_preset_knob", lang, knob=t(f"calc.{name}", lang), value=value, preset=preset)
                     for name, (value, preset) in off.items())


def scenario_link(chosen: scenario.Scenario, **fields: str) -> dict[str, str]:
    """The URL parameters of a link from one page to another: the whole scenario ``chosen``
    (:func:`specviz.scenario.to_query_params`: its GPU, models, engine, cost knobs and the rest) with
    ``fields`` (a point's α, γ, batch) over it, and the language where the address holds one, so that
    the page it opens prices the same scenario, in the same language, in this session or in a new tab,
    which has no sidebar of its own yet (a link of the point and the cost knobs alone had opened there
    on the default setting, in English)."""
    language = {"lang": st.query_params["lang"]} if "lang" in st.query_params else {}
    return scenario.to_query_params(chosen, presets(settings.get("SPECVIZ_DATA_DIR"))) | language | fields


def reset_costs() -> None:
    """Back to the engine's preset: the cost knobs' controls are set to the preset of the engine now
    chosen (a widget callback). Set, not forgotten: a knob's URL value is bound to its control, and
    a control that is forgotten comes back at the URL's value."""
    engine = presets(settings.get("SPECVIZ_DATA_DIR")).engines[st.session_state.get("engine", scenario.DEFAULT_ENGINE)]
    preset = scenario.preset_costs(engine)
    st.session_state.pop(LINKED_COSTS, None)
    for name in scenario.COST_KNOBS:
        st.session_state[name] = getattr(preset, name)


def new_engine() -> None:
    """The sidebar's engine changed (its callback): the cost knobs go to its preset, and Deploy's engine
    and releases to their defaults for it, so that the command follows the sidebar (SGLang's command for
    SGLang) rather than keep the engine shown before, which was no choice of the reader's."""
    reset_costs()
    forget("serve_engine", "serve_version", "sglang_version", "trtllm_version")


# Altair checks each chart part against the schema as it is made (its debug mode, on by default): a
# third of the time a chart of the calculator's takes to build on every rerun (about 17 of 52 ms for
# the batch chart's nine layers). The pages send their charts unchecked (:func:`specviz.charts.vega_lite_spec`), and
# tests/test_charts.py checks every builder's chart against the schema.
alt.utils.schemapi.disable_debug_mode()


def altair_chart(chart: Any) -> None:
    """``st.vega_lite_chart`` of ``chart`` at the full width: an Altair chart as
    :func:`specviz.charts.vega_lite_spec` writes it, or a spec already written (a ``dict``, such as
    :func:`specviz.charts.speedup_vs_batch_spec` returns); the data frames go to the browser as
    Arrow, as st.altair_chart sends them."""
    st.vega_lite_chart(chart if isinstance(chart, dict) else charts.vega_lite_spec(chart), width="stretch")


def titled_dataframe(frame: pd.DataFrame, lang: str, **kwargs: Any) -> None:
    """``frame`` as a table without its index, each column under its translated title (``col.<name>``),
    its text shown as it is (:func:`specviz.results.export.visible_frame`), a missing value an empty cell (not "None")
    unless ``placeholder`` says otherwise."""
    kwargs.setdefault("placeholder", "")
    st.dataframe(export.visible_frame(frame).rename(columns=lambda c: t(f"col.{c}", lang)), hide_index=True, **kwargs)


def number_columns(frame: pd.DataFrame, formats: dict[str, str], lang: str) -> dict[str, Any]:
    """The format of each figure of ``frame`` that ``formats`` names (a printf format by column), keyed
    by the column's title as :func:`titled_dataframe` names it: a ``column_config``. A whole-number
    format (``%,d``) of a column that holds fractions shows one decimal: ``%d`` cuts them, and a live
    run's mean of 2.994 running requests had read 2."""
    def shown(column: str) -> str:
        values = pd.to_numeric(frame[column], errors="coerce").dropna()
        fractional = formats[column].endswith("d") and not (values % 1 == 0).all()
        return formats[column][:-1] + ".1f" if fractional else formats[column]
    return {t(f"col.{c}", lang): st.column_config.NumberColumn(format=shown(c)) for c in frame if c in formats}


def chain_runs(runs: pd.DataFrame, lang: str) -> pd.DataFrame:
    """The runs of per-request acceptance (:meth:`specviz.results.store.Store.request_acceptance`) that
    drafted a chain; those that drafted a tree are left out, and a caption counts them: their
    requests' lengths are a tree's, which the chain these views simulate cannot draw."""
    if trees := int(runs["tree_width"].notna().sum()):
        st.caption(t("exp.request_trees", lang, runs=trees))
    return runs[runs["tree_width"].isna()]


def titled_table(frame: pd.DataFrame, lang: str, decimals: int) -> None:
    """A small ``frame`` as a static table, as :func:`titled_dataframe` titles it, its numbers to
    ``decimals`` places: without the data grid's code, which a page's first render otherwise loads
    (about 0.35 s in Chromium, docs/performance.md)."""
    shown = export.visible_frame(frame).rename(columns=lambda c: t(f"col.{c}", lang))
    st.table(shown.style.format(precision=decimals, na_rep="").hide(axis="index"))


def mix_tail_at(chosen: scenario.Scenario, lengths: pd.Series, gamma: int, batch: int, context: float,
                output_tokens: int, lang: str) -> pd.DataFrame | None:
    """:func:`specviz.results.request_acceptance.mix_tail_on` (a run's measured mix of per-request
    acceptance lengths against one α at their mean), or None with the reason said where it cannot be had."""
    try:
        return request_acceptance.mix_tail_on(chosen, lengths, gamma, batch, context, output_tokens)
    except SpecvizError as exc:
        st.error(message(exc, lang))
        return None


def mix_tail_table(tail: pd.DataFrame, lang: str) -> None:
    """:func:`mix_tail_at`'s table, in milliseconds."""
    shown = tail.assign(one_alpha=tail["one_alpha"] * 1e3, measured_mix=tail["measured_mix"] * 1e3)
    st.dataframe(shown.rename(index=lambda r: t(f"exp.request_tail.{r}", lang),
                              columns=lambda c: t(f"exp.request_tail.{c}", lang)),
                 column_config={t("exp.request_tail.one_alpha", lang): st.column_config.NumberColumn(format="%,.0f"),
                                t("exp.request_tail.measured_mix", lang): st.column_config.NumberColumn(format="%,.0f"),
                                t("exp.request_tail.change", lang): st.column_config.NumberColumn(format="percent")})


def csv_download(frame: pd.DataFrame | Callable[[], pd.DataFrame], file_name: str, key: str, lang: str) -> None:
    """A button that downloads ``frame`` as spreadsheet-safe CSV (:func:`specviz.results.export.csv_text`)
    with its invisible characters shown as escapes, as the table shows it and the CLI's CSV writes it
    (:func:`specviz.results.export.visible_frame`: a spreadsheet obeys a bidirectional override);
    written when it is clicked rather than on every rerun; a frame given as a function is made then too."""
    st.download_button(t("calc.download_csv", lang),
                       lambda: export.csv_text(export.visible_frame(frame() if callable(frame) else frame)),
                       file_name, "text/csv", key=key)
