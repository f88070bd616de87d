"""Controls kept in the URL and for the session (not a page: st.navigation lists pages itself).

A control's value travels in the page's link as its option's id or its number; a value the link
gives that the control cannot take is said (:func:`show_url_notices`), never dropped in silence. The
session keeps each control's value across pages; :func:`forget` and :func:`renew` set one afresh.
"""

from __future__ import annotations

import contextlib
import math
from typing import Any, Callable, Sequence

import streamlit as st
from streamlit.errors import StreamlitAPIException

from specviz import calculator, scenario, settings
from specviz.advice import commands
from specviz.errors import SpecvizError
from specviz.i18n import md, t


# Session key of the URL values refused since show_url_notices last ran, as (parameter, text, the
# value the control took instead where it is not the default).
_URL_NOTICES = "url_notices"
# Session key of the controls left unbound from the URL for the session (a link gave one "inf").
_UNBOUND = "url_unbound"
# Session key of the view each page last wrote to the URL (:func:`view_choice`), by its key.
_VIEWS_IN_URL = "views_in_url"
# Session keys of the page app.py last routed a run to, and of the controls each page bound to the URL
# (:func:`url_widget`) with their defaults, by the page's path (:func:`enter_page`).
_PAGE, _BOUND = "url_page", "url_bound"


def enter_page(path: str) -> None:
    """Where a run enters the page at ``path`` from another and a control it binds to the URL holds a
    value of the session's that the URL lacks, run again at once: a run from the browser's Back or
    Forward gives a bound control the URL's value, or its default where the URL has none, over the
    value kept for the session (Streamlit 1.67), and a switch of page had left the page's history
    entry without its controls (Streamlit writes each change to the URL as an entry of its own, and
    the sidebar's values land on the old path before the new page's). A browser pass: α 0.7, γ 3 and
    batch 32 came back from the Explorer by Back as 0.8, 4 and 64, with another speedup. The second
    run is an ordinary one: the session's values stand and go back into the URL, as after the menu's
    link. Within a page Back still undoes a change; the second run is skipped where nothing is missing,
    and cannot repeat (the page is entered by then)."""
    entered = st.session_state.get(_PAGE) != path
    st.session_state[_PAGE] = path
    bound = st.session_state.get(_BOUND, {}).get(path, {})
    if entered and any(key in st.session_state and key not in st.query_params and st.session_state[key] != default
                       for key, default in bound.items()):
        st.rerun()


# Controls to set afresh on their next render (:func:`url_choice`): dropping a value from the session is
# not enough, for a control kept for the session (persist_state) brings its old value back in the
# browser, which AppTest does not show (a new GPU kept the old one's GPU count, issue 22).
_RENEW = "renew_controls"


def renew(*keys: str) -> None:
    """Have each control take its value afresh when it is next drawn: one a callback set since, else
    the URL's, else its default."""
    st.session_state[_RENEW] = {*st.session_state.get(_RENEW, ()), *keys}


# The GPU counts a new device, pair or precision starts again from, at the fewest GPUs that hold it.
PARALLEL = ("tp", "dp", "ep")
# The counts before they were forgotten, for the sidebar to say what changed (parallel_reset).
PARALLEL_BEFORE = "parallel_before"
# The counts the sidebar last drew as its defaults, by control: a count off them is the user's.
PARALLEL_DEFAULTS = "parallel_defaults"


def forget(*keys: str) -> None:
    """Drop the controls' values and their URL values, so that each control comes back at its default
    (a widget callback: a new target starts with its own default draft, a new device or pair with
    the fewest GPUs that hold it); the GPU counts it drops are kept to say how they changed."""
    if "tp" in keys and st.session_state.get("tp") is not None and PARALLEL_BEFORE not in st.session_state:
        st.session_state[PARALLEL_BEFORE] = {key: st.session_state.get(key) for key in PARALLEL}
    for key in keys:
        st.session_state.pop(key, None)
        st.query_params.pop(key, None)
    renew(*keys)


def sidebar_counts() -> tuple[str, ...]:
    """The GPU counts to start again where a new draft, format or config of one's own changes what the
    pair needs: all of :data:`PARALLEL` where they are the sidebar's defaults, none where the user
    chose one, for the GPUs are the server's, not the draft's or the format's (a KV cache in FP8 chosen
    for a server of 8 H100s had set the sidebar back to 2; an EAGLE-3 head chosen for DeepSeek-V3 on 8
    B200s, back to 4, where batch 64 did not fit). Where the counts chosen no longer hold the pair,
    the pages say so, as for any count chosen."""
    defaults = st.session_state.get(PARALLEL_DEFAULTS, {})
    return PARALLEL if all(st.session_state.get(key) in (None, defaults.get(key)) for key in PARALLEL) else ()


def new_format() -> None:
    """A new precision, component format or KV cache format (the sidebar's callback): the counts the
    sidebar set start again at the fewest GPUs that hold the pair in it (:func:`sidebar_counts`)."""
    forget(*sidebar_counts())


def new_draft() -> None:
    """A new draft, preset or of one's own (the sidebar's callback): Deploy's field for the draft's id
    forgotten, and the counts the sidebar set (:func:`sidebar_counts`)."""
    forget_draft(*sidebar_counts())


def new_target_config() -> None:
    """A new config of one's own for the target (the sidebar's callback): the target's new default
    draft (:func:`forget_target`) and the counts the sidebar set (:func:`sidebar_counts`); the link's
    8 GPUs for a target still to be read had become the 4 the config's model needed at the default
    batch, where the scenario's did not fit."""
    forget_target("draft", *sidebar_counts())


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


def refuse_url_value(key: str, url_text: str, taken: Any = None) -> None:
    """Note for :func:`show_url_notices` that the link's ``key`` = ``url_text`` is not taken (or that
    ``taken`` was taken in its place)."""
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
            refuse_url_value(key, url_text)
            url_text = None
    bind = None if key in st.session_state.get(_UNBOUND, ()) else "query-params"
    if bind:  # the page's bound controls, for enter_page
        st.session_state.setdefault(_BOUND, {}).setdefault(st.session_state.get(_PAGE), {})[key] = value
    # Kept for the session, as url_choice's: leaving the page drops the value from the URL, and
    # coming back would otherwise reset it (whether it did depended on how fast the visit was).
    kwargs.setdefault("persist_state", "session")
    result = widget(label, *args, value=value, key=key, bind=bind, **kwargs)
    if url_text is not None and not _same(url_text, result):
        refuse_url_value(key, url_text, None if _same(str(value), result) else result)
    return result


def context_stops() -> list[int]:
    """The context slider's stops (0, 256, 512, … doubling), with the context kept for the session
    and a linked one between them: Live links the mean context of the requests it measured (2,047,
    say), which no stop is, and the slider dropped it for its default, so that the calculator
    disagreed with Live's verdict."""
    own = {st.session_state.get("context")}
    if "context" in st.query_params:
        try:
            own.add(int(scenario.FIELDS["context"].parse(st.query_params["context"])))
        except ValueError:  # said by url_widget, as every refused URL value
            pass
    return sorted(set(calculator.context_options(settings.get("SPECVIZ_CONTEXT_MAX"))) | (own - {None}))


def context_control(where: Any, lang: str, **kwargs: Any) -> int:
    """The context slider (:func:`context_stops`), one control for every page that asks: the
    scenario's ``context`` in the URL and the session, so that the calculator and the Claims page
    compute at the same context, a link's included."""
    # Each page's control is a widget of its own (Streamlit keys widgets per page), which would start
    # at its default: the session's value is handed to it as a value the code set, unless a link
    # gives one (Streamlit drops a control's value from the URL when the control leaves the page).
    if "context" in st.session_state and "context" not in st.query_params:
        st.session_state["context"] = st.session_state["context"]
        # Put back in the URL too: on a switch of page Streamlit (1.67) drops "context" from the URL,
        # a link's own included, where the old page's control was bound to it, and writes a value set
        # in code back only for a control drawn on this page before, which this one is not (the
        # Claims page's link to the calculator at 32,768 left an address that computed 1,024). Where
        # the control is still bound (drawn here last run) Streamlit refuses: it writes the value
        # itself then, or (the browser's back or forward) gives the control the URL's value, which a
        # run that entered the page from another has made the session's again (enter_page).
        if st.session_state["context"] != scenario.FIELDS["context"].default \
                and "context" not in st.session_state.get(_UNBOUND, ()):
            with contextlib.suppress(StreamlitAPIException):
                st.query_params["context"] = str(st.session_state["context"])
    return url_widget(where.select_slider, t("calc.context", lang), context_stops(),
                      value=scenario.FIELDS["context"].default, key="context", help=t("calc.context_help", lang), **kwargs)


def url_count(widget: Callable[..., Any], label: str, key: str, value: int, **kwargs: Any) -> int:
    """A count of a :data:`specviz.scenario.FIELDS` field (a number input, its bounds the field's),
    always written to the URL: for a default that follows another control (a workload preset's
    tokens), where a bound control would leave its default out of the URL and not write it back once
    the default moved, so that a reload read another count. The URL's value seeds the control when
    it first appears; one the field refuses is noted for :func:`show_url_notices`."""
    field = scenario.FIELDS[key]
    url_text = st.query_params.get(key) if key not in st.session_state else None
    if url_text is not None:
        try:
            value = int(field.parse(url_text))
            st.session_state[key] = value  # the session's, as url_choice keeps a link's choice
        except ValueError:
            refuse_url_value(key, url_text)
    kwargs.setdefault("persist_state", "session")
    count = int(widget(label, int(field.low), int(field.upper), value=value, step=1, key=key, **kwargs))
    st.query_params[key] = str(count)
    return count


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
    # A parameter given twice is no option: refused with both values, as url_widget refuses it.
    wanted = ", ".join(st.query_params.get_all(key)) if key in st.query_params else None
    if wanted is not None and wanted not in options:
        refuse_url_value(key, wanted)
    index = options.index(wanted) if wanted in options else options.index(default)
    if wanted in options and key not in st.session_state:
        # A link's choice, set as the session's: as the control's default only, a visit to another
        # page lost it (the control came back at its own default, a shared load link at decoding only).
        st.session_state[key] = wanted
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


def view_choice(key: str, ids: Sequence[str], label: Callable[[str], str], name: str, in_url: bool = False) -> str:
    """The id of a page's open view, chosen in a row of segments (``label(id)`` on each, ``name`` the
    control's label for screen readers) and kept for the session.

    With ``in_url`` the open view is kept in the address as ``?key=id`` (left out for the first view),
    and a link's view opens, also in a session that has the page open on another one: a ``key`` in
    the URL other than the one this page last wrote there came with a link. An unknown one is noted
    for :func:`show_url_notices` and taken out of the address. Not ``st.tabs``: a tab panel watches
    every change in it, and a chart redrawn inside one cost the browser about 50 ms more a redraw
    (docs/performance.md); a view is built only while it is open either way.
    """
    written = st.session_state.setdefault(_VIEWS_IN_URL, {})
    wanted = ", ".join(st.query_params.get_all(key)) if in_url and key in st.query_params else None
    if wanted is not None and wanted != written.get(key):
        if wanted in ids:
            st.session_state[key] = wanted
        else:
            refuse_url_value(key, wanted)  # an unknown view in a link: said, and the view open stays
    if st.session_state.get(key) not in ids:
        st.session_state[key] = ids[0]
    view = st.segmented_control(name, list(ids), key=key, format_func=label, required=True, persist_state="session",
                                label_visibility="collapsed")
    if in_url:
        if view == ids[0]:
            st.query_params.pop(key, None)
        else:
            st.query_params[key] = view
        written[key] = view
    return view


# Deploy's fields that name a checkpoint of the sidebar's target and of its draft: a new target (or a
# new draft) makes the one named for the old a stale id, which the command would serve with the new
# model's figures (nvidia/DeepSeek-R1-0528-NVFP4 with gpt-oss-120b's max-num-seqs).
TARGET_REPO, DRAFT_REPO = "serve_target_repo", "serve_draft_repo"


def _clear_id(key: str) -> None:
    """Deploy's field for a checkpoint's id emptied, in the URL too, where it is bound: Streamlit
    refuses to drop a bound widget's URL value, and drops it once the widget holds its default."""
    if key in st.session_state:
        st.session_state[key] = ""
    else:
        st.query_params.pop(key, None)


def forget_draft(*keys: str) -> None:
    """A new draft (the sidebar's callback): Deploy's field for the draft's id and ``keys`` forgotten."""
    forget(*keys)
    _clear_id(DRAFT_REPO)


def forget_target(*keys: str, keep_own: bool = True) -> None:
    """A new target (the sidebar's callback): Deploy's fields for the target's and the draft's ids and
    ``keys`` forgotten, but, with ``keep_own``, a draft of one's own (an uploaded or pasted
    config.json): it is the user's choice, not the old target's default (a new target's config had
    sent an uploaded draft back to the preset head)."""
    if keep_own and st.session_state.get("draft") == scenario.CUSTOM:
        keys = tuple(key for key in keys if key != "draft")
    forget_draft(*keys)
    _clear_id(TARGET_REPO)


def switch_target(target_id: str, served: str | None = None) -> None:
    """Set the sidebar's target (a button's callback), its draft and GPUs back to their defaults for it;
    ``served``, the checkpoint a server names (``nvidia/DeepSeek-R1-0528-NVFP4`` for DeepSeek-V3), goes
    into Deploy's field for the target's id where it is an id the command can take (the preset's own
    id there is the preset's: :func:`specviz.advice.commands.target_words`)."""
    # The served model's own default draft, not a config of one's own for the sidebar's old target: an
    # EAGLE-3 head pasted for Qwen3-32B had been kept on DeepSeek-V3 (5,120 against 7,168), and the
    # switch, made for a verdict, gave only the head's refusal (an attack pass).
    forget_target("draft", *PARALLEL, keep_own=False)
    st.session_state["target"] = target_id
    st.query_params["target"] = target_id
    renew("target")
    if served:
        try:
            st.session_state[TARGET_REPO] = commands.checkpoint_id(served)
        except SpecvizError:  # a name that is no id (trtllm-serve's "undefined", a replay's): the field stays
            pass


def set_mtp_reuse(factor: float) -> None:
    """Set the sidebar's MTP reuse factor (a button's callback: the one a server's rates showed); the
    slider, bound to the URL, carries it there."""
    st.session_state["mtp_reuse"] = factor


def clear_gpu_overrides() -> None:
    """A figure typed for one device must not silently carry over to another, nor a GPU count chosen for it."""
    st.session_state["tflops"] = None
    st.session_state["bandwidth"] = None
    forget(*PARALLEL)


def forget_controls(link: dict[str, str] | None = None) -> None:
    """Every scenario control forgets its value (a widget callback before a switch to a page with a
    link): the link then decides them all, not the values this session chose before. The link is
    put in the URL here, for the run that follows the callback draws the sidebar before it switches."""
    for key in (*scenario.FIELDS, *scenario.CHOICES):
        st.session_state.pop(key, None)
    if link is not None:
        st.query_params.from_dict(link)
    renew(*scenario.CHOICES)
