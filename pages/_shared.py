"""Streamlit helpers shared by app.py and the pages (not a page: st.navigation lists pages itself)."""

from __future__ import annotations

import math
from contextlib import contextmanager
from functools import wraps
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import altair as alt
import pandas as pd
import streamlit as st

from specviz import i18n, scenario, settings
from specviz.errors import SpecvizError
from specviz.i18n import md, message, t
from specviz.model import simulate
from specviz.results import export, request_acceptance
from specviz.results.store import Store, StoreError


ROUTED = "routed_by_app"  # set by app.py around page.run(): a page run without it came from elsewhere


def require_router() -> None:
    """Hand a page over to app.py's st.navigation router.

    A ``pages/`` folder beside app.py puts Streamlit (1.67) in its older multipage mode until the
    first ``st.navigation`` call of the process; that mode runs a page file on its own, without the
    router or the sidebar, when the requested page matches the file's name (streamlit/streamlit#10276).
    app.py gives its pages URL paths that differ from the file names, so that mode finds no match and
    falls back to app.py. A file-name URL such as /explorer on a fresh server still runs the file
    alone; this guard sees that app.py did not route the run, calls ``st.navigation`` (which ends the
    older mode for the process: public API, nothing patched) and reruns through app.py. Pinned by
    tests/test_browser.py.
    """
    if not st.session_state.get(ROUTED):
        st.navigation([st.Page(lambda: None, title="specviz", url_path="routing")], position="hidden")
        st.rerun()


@contextmanager
def errors_said(lang: str) -> Iterator[None]:
    """No exception reaches the page as a traceback: a :class:`SpecvizError` is said in ``lang``, any
    other as what failed (around app.py's pages, and each run of a :func:`fragment`)."""
    try:
        yield
    except SpecvizError as exc:  # e.g. the store stayed locked by an import longer than the timeout
        st.error(message(exc, lang))
    except Exception as exc:  # the last layer: say what failed instead of showing a traceback
        st.error(t("error.unexpected", lang, kind=type(exc).__name__, detail=exc))


def fragment(func: Callable[..., None]) -> Callable[..., None]:
    """``st.fragment(func)``: a control inside it reruns it alone, not the router, the sidebar nor the
    rest of the page. Its errors are said as app.py says a page's (:func:`errors_said`, in the
    session's language): its own reruns do not pass through app.py, and Streamlit would show a
    traceback."""
    @wraps(func)
    def run(*args: Any, **kwargs: Any) -> None:
        with errors_said(st.session_state.get("lang", "en")):
            func(*args, **kwargs)
    return st.fragment(run)


def open_tab(key: str, ids: Sequence[str], label: Callable[[str, str], str], lang: str,
             wanted: str | None = None) -> str:
    """The id of the tab of ``st.tabs(..., key=key)`` that is open, and its label in ``lang`` set
    as the tabs' state before they are drawn.

    The tabs keep the open tab's label; read back in any language, the same tab stays open when
    the language changes (else the first would open). ``wanted`` (an id, e.g. from the URL) is
    taken when no tab has been opened yet (an unknown one is noted for :func:`show_url_notices`);
    ``label(id, lang)`` gives a tab's label.
    """
    ids_by_label = {label(tab, code): tab for code in i18n.LANGUAGES for tab in ids}
    opened = st.session_state.get(key) in ids_by_label
    if not opened and wanted is not None and wanted not in ids:
        _refused(key, wanted)  # an unknown tab in a link: said, and the first one opened
    chosen = ids_by_label.get(st.session_state.get(key), wanted)
    chosen = chosen if chosen in ids else ids[0]
    st.session_state[key] = label(chosen, lang)
    return chosen


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
    """:func:`shared_store` for a page; a store that cannot be opened ends the page with its message."""
    try:
        return shared_store(str(settings.get("SPECVIZ_DB")))
    except StoreError as exc:
        st.error(message(exc, lang))
        st.stop()


@st.cache_resource
def presets(data_dir: Path) -> scenario.Presets:
    """GPU, model and engine presets, read once per data folder."""
    return scenario.load_presets(data_dir)


# Controls to set afresh on their next render (:func:`url_choice`): dropping a value from the session is
# not enough, for a control kept for the session (persist_state) brings its old value back in the
# browser, which AppTest does not show (a new GPU kept the old one's GPU count, issue 22).
_RENEW = "renew_controls"


def renew(*keys: str) -> None:
    """Have each control take its value afresh when it is next drawn: one a callback set since, else
    the URL's, else its default."""
    st.session_state[_RENEW] = {*st.session_state.get(_RENEW, ()), *keys}


def forget(*keys: str) -> None:
    """Drop the controls' values and their URL values, so that each control comes back at its default
    (a widget callback: a new target starts with its own default draft, a new device or pair with
    the fewest GPUs that hold it)."""
    for key in keys:
        st.session_state.pop(key, None)
        st.query_params.pop(key, None)
    renew(*keys)


def switch_target(target_id: str) -> None:
    """Set the sidebar's target (a button's callback), its draft and GPUs back to their defaults for it."""
    forget("draft", "tp", "dp", "ep")
    st.session_state["target"] = target_id
    st.query_params["target"] = target_id
    renew("target")


def clear_gpu_overrides() -> None:
    """A figure typed for one device must not silently carry over to another, nor a GPU count chosen for it."""
    st.session_state["tflops"] = None
    st.session_state["bandwidth"] = None
    forget("tp", "dp", "ep")


def forget_controls(link: dict[str, str] | None = None) -> None:
    """Every scenario control forgets its value (a widget callback before a switch to a page with a
    link): the link then decides them all, not the values this session chose before. The link is
    put in the URL here, for the run that follows the callback draws the sidebar before it switches."""
    for key in (*scenario.FIELDS, *scenario.CHOICES):
        st.session_state.pop(key, None)
    if link is not None:
        st.query_params.from_dict(link)
    renew(*scenario.CHOICES)


def offer_fit(lang: str, key: str, found: str, suspect: list[str], fitted: scenario.Scenario,
              known: scenario.Presets) -> None:
    """What a fit found, a warning for each thing that makes it suspect and, only if nothing does, a
    button that opens the calculator at the fit (a suspect fit is not handed on as if it held)."""
    (st.warning if suspect else st.success)(found)
    for text in suspect:
        st.warning(text)
    link = scenario.to_query_params(fitted, known)
    if not suspect and st.button(t("exp.use_in_calculator", lang), key=key, on_click=forget_controls, args=(link,)):
        st.switch_page("pages/calculator.py", query_params=link)


def reset_costs() -> None:
    """Back to the engine's preset: the cost knobs' controls are set to the preset of the engine now
    chosen (a widget callback). Set, not forgotten: a knob's URL value is bound to its control, and
    a control that is forgotten comes back at the URL's value."""
    engine = presets(settings.get("SPECVIZ_DATA_DIR")).engines[st.session_state.get("engine", scenario.DEFAULT_ENGINE)]
    preset = scenario.preset_costs(engine)
    for name in scenario.COST_KNOBS:
        st.session_state[name] = getattr(preset, name)


_COMPOSED = ("layer", "vconcat", "hconcat", "concat")

# Altair checks each chart part against the schema as it is made (its debug mode, on by default): a
# third of the time a chart of the calculator's takes to build on every rerun (about 17 of 52 ms for
# the batch chart's nine layers). The pages send their charts unchecked (:func:`vega_lite_spec`), and
# tests/test_charts.py checks every builder's chart against the schema.
alt.utils.schemapi.disable_debug_mode()


def vega_lite_spec(chart: Any) -> dict[str, Any]:
    """The Vega-Lite spec of an Altair chart as ``st.altair_chart`` sends it, each data frame a
    dataset named by its place in the chart (``data-0``, ``data-1``, …; one frame used by several
    layers is one dataset), without Altair's check of the spec against the Vega-Lite schema.

    The check costs about 60 ms a chart on every rerun and finds nothing in specviz's charts, whose
    builders the tests check (tests/test_charts.py validates every one). Named by place, the datasets
    need no hash of their bytes; the browser matches them by place either way (a chart whose data
    alone changed is updated, not compiled again, as with st.altair_chart's names)."""
    datasets: dict[str, pd.DataFrame] = {}
    swapped: list[tuple[Any, Any]] = []

    def name_data(part: Any) -> None:
        data = getattr(part, "data", alt.Undefined)
        if isinstance(data, pd.DataFrame):
            name = next((n for n, known in datasets.items() if known is data), f"data-{len(datasets)}")
            datasets[name] = data
            swapped.append((part, data))
            part.data = {"name": name}  # as a dict, not alt.NamedData, which Altair would check too
        for composed in _COMPOSED:
            for inner in getattr(part, composed, None) or ():
                name_data(inner)

    name_data(chart)
    try:
        # Not top-level: no Altair theme (st.altair_chart turns the default one off too); the schema
        # is named as Altair names it.
        spec = chart.to_dict(validate=False, context={"top_level": False})
    finally:
        for part, data in swapped:  # the chart as it was given
            part.data = data
    return {"$schema": alt.SCHEMA_URL, **spec, "datasets": datasets}


def altair_chart(chart: Any, where: Any = st) -> None:
    """``where.altair_chart(chart, width="stretch")``, the spec made by :func:`vega_lite_spec`; the
    data frames go to the browser as Arrow, as st.altair_chart sends them."""
    where.vega_lite_chart(vega_lite_spec(chart), width="stretch")


def visible_text(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with the invisible characters of its text cells and column names shown as escapes
    (:func:`specviz.i18n.visible`): file names, labels and model names came from files and servers,
    and a bidirectional override in one would make it read as another name."""
    shown = frame.rename(columns=lambda c: i18n.visible(c) if isinstance(c, str) else c)
    for column in [c for c in shown.columns if not pd.api.types.is_numeric_dtype(shown[c])]:
        values = shown[column]
        if pd.api.types.is_string_dtype(values):  # found without a Python call per cell: the page reruns often
            marked = values.str.contains(i18n.INVISIBLE.pattern, regex=True, na=False)
            if marked.any():
                shown[column] = values.where(~marked, values[marked].map(i18n.visible))
        else:  # text among other values (lists)
            shown[column] = values.map(lambda v: i18n.visible(v) if isinstance(v, str) else v)
    return shown


def titled_dataframe(frame: pd.DataFrame, lang: str, **kwargs: Any) -> None:
    """``frame`` as a table without its index, each column under its translated title (``col.<name>``),
    its text shown as it is (:func:`visible_text`), a missing value an empty cell (not "None")
    unless ``placeholder`` says otherwise."""
    kwargs.setdefault("placeholder", "")
    st.dataframe(visible_text(frame).rename(columns=lambda c: t(f"col.{c}", lang)), hide_index=True, **kwargs)


def titled_table(frame: pd.DataFrame, lang: str, decimals: int) -> None:
    """A small ``frame`` as a static table, as :func:`titled_dataframe` titles it, its numbers to
    ``decimals`` places: without the data grid's code, which a page's first render otherwise loads
    (about 0.35 s in Chromium, docs/performance.md)."""
    shown = visible_text(frame).rename(columns=lambda c: t(f"col.{c}", lang))
    st.table(shown.style.format(precision=decimals, na_rep="").hide(axis="index"))


def mix_tail_at(chosen: scenario.Scenario, lengths: pd.Series, gamma: int, batch: int, context: float,
                output_tokens: int, lang: str) -> pd.DataFrame | None:
    """Request latency from a run's measured mix of per-request acceptance lengths against one α at
    their mean (:func:`specviz.results.request_acceptance.mix_tail`), on ``chosen``'s step times at
    the run's γ, ``batch`` and ``context``; None, with the reason said, where it cannot be had. The
    two simulations stay within ``SPECVIZ_PAGE_SIMULATION_CELLS`` (fewer requests for long outputs)."""
    known = lengths.dropna()
    requests = max(1, min(2_000, settings.get("SPECVIZ_PAGE_SIMULATION_CELLS") // (2 * output_tokens)))
    times = chosen.step_times(batch=batch, gamma=gamma, context=context, acceptance_length=float(known.mean()))
    try:
        return request_acceptance.mix_tail(known, gamma, simulate.StepTimes(float(times["plain_s"]),
                                                                          float(times["spec_s"])), output_tokens,
                                           requests=requests)
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
    """A button that downloads ``frame`` as spreadsheet-safe CSV (:func:`specviz.results.export.csv_text`),
    written when it is clicked rather than on every rerun; a frame given as a function is made then too."""
    st.download_button(t("calc.download_csv", lang), lambda: export.csv_text(frame() if callable(frame) else frame),
                       file_name, "text/csv", key=key)


# Session key of the URL values refused since show_url_notices last ran, as (parameter, text, the
# value the control took instead where it is not the default).
_URL_NOTICES = "url_notices"
# Session key of the controls left unbound from the URL for the session (a link gave one "inf").
_UNBOUND = "url_unbound"


def _same(url_text: str, value: Any) -> bool:
    """Whether a widget's value is what the URL's text says (numbers compared as numbers)."""
    if value is None:
        return url_text == ""
    if isinstance(value, (int, float)):
        try:
            return float(url_text) == value
        except ValueError:
            return False
    return url_text == str(value)


def _numeric(value: Any, args: Sequence[Any], kwargs: dict[str, Any]) -> bool:
    """Whether a control takes a number: its value or a bound is one."""
    bounds = (value, *args, kwargs.get("min_value"), kwargs.get("max_value"))
    return any(isinstance(b, (int, float)) and not isinstance(b, bool) for b in bounds)


def _finite(url_text: str) -> bool:
    """False for text that reads as a number but not a finite one ("inf", "nan", "1e999"); True
    otherwise (text that is no number at all the control refuses by itself)."""
    try:
        return math.isfinite(float(url_text))
    except ValueError:
        return True


def _refused(key: str, url_text: str, taken: Any = None) -> None:
    st.session_state.setdefault(_URL_NOTICES, []).append((key, url_text, taken))


def show_url_notices(where: Any, lang: str, first: Sequence[str] = ()) -> None:
    """Warn in ``where`` about each URL value refused since the last call, naming the parameter and
    the text received (on one line, shortened, Markdown escaped: it came from a link); those of the
    parameters ``first`` before the others (a control drawn above others but made after them)."""
    notices = st.session_state.pop(_URL_NOTICES, [])
    for key, url_text, taken in sorted(notices, key=lambda notice: notice[0] not in first):
        # One line of printable text: a line break cannot be escaped in Markdown.
        text = "".join(c if c.isprintable() else " " for c in url_text)
        if len(text) > 80:
            text = text[:79] + "…"
        if taken is None:
            where.warning(md("url.refused", lang, param=key, value=text))
        else:
            where.warning(md("url.changed", lang, param=key, value=text, taken=str(taken)))


def url_widget(widget: Callable[..., Any], label: str, *args: Any, key: str, value: Any,
               **kwargs: Any) -> Any:
    """``widget(label, *args, value=value, key=key, bind="query-params", **kwargs)``, kept for the
    session, noting for :func:`show_url_notices` a URL value that the widget does not take.

    Streamlit (1.67) seeds a bound widget from the URL when the widget first appears in a session
    or on a page, and a value of the wrong type, out of range or not among the options it drops
    without a word: the widget shows its default. So the URL's text is read before the widget,
    where the widget is about to be seeded (on later reruns the widget keeps its own state, and
    the server's copy of the URL can be stale), and compared with the value the widget resolved.
    An integer slider or number input truncates a fraction rather than drop it (``?batch=2.5``
    gives 2): the notice then says which value the control took.
    """
    url_text = None
    if key not in st.session_state and key in st.query_params:
        url_text = ", ".join(st.query_params.get_all(key))
        if _numeric(value, args, kwargs) and not _finite(url_text):
            # Streamlit (1.67) seeds a bound number control from "inf" and fails (OverflowError),
            # on every rerun while the session lasts: the control is left unbound for the session,
            # and the value is taken out of the URL.
            st.session_state.setdefault(_UNBOUND, set()).add(key)
            del st.query_params[key]
            _refused(key, url_text)
            url_text = None
    bind = None if key in st.session_state.get(_UNBOUND, ()) else "query-params"
    # Kept for the session, as url_choice's: leaving the page drops the value from the URL, and
    # coming back would otherwise reset it (whether it did depended on how fast the visit was).
    kwargs.setdefault("persist_state", "session")
    result = widget(label, *args, value=value, key=key, bind=bind, **kwargs)
    if url_text is not None and not _same(url_text, result):
        _refused(key, url_text, None if _same(str(value), result) else result)
    return result


def url_choice(widget: Callable[..., Any], label: str, options: Sequence[str], key: str,
               format_func: Callable[[str], str], default: str | None = None, derived: bool = False,
               **kwargs: Any) -> str:
    """A selectbox or radio whose choice is kept in the URL as the option's id.

    ``bind="query-params"`` would store the formatted (translated) label, so a shared link would
    depend on the reader's language; this keeps ``?key=id`` instead. An unknown id in the URL
    gives the default and is noted for :func:`show_url_notices`. The choice is kept for the
    session (``persist_state``): leaving the page drops the id from the URL, and coming back
    would otherwise reset it. A ``derived`` choice, whose default follows other choices (the draft,
    the GPU count), stays in the URL at its default too, as :func:`specviz.scenario.to_query_params`
    writes it: a copied address keeps its figures when a default moves.
    """
    default = options[0] if default is None else default
    wanted = st.query_params.get(key)
    if wanted is not None and wanted not in options:
        _refused(key, wanted)
    index = options.index(wanted) if wanted in options else options.index(default)
    if key in st.session_state.get(_RENEW, ()):
        st.session_state[_RENEW] = st.session_state[_RENEW] - {key}
        if st.session_state.get(key) in options:  # set by the callback that renewed it
            index = options.index(st.session_state[key])
        st.session_state[key] = options[index]  # set, not dropped: see _RENEW
    value = widget(label, options, index=index, key=key, format_func=format_func, persist_state="session", **kwargs)
    if value == default and not derived:
        st.query_params.pop(key, None)
    else:
        st.query_params[key] = value
    return value
