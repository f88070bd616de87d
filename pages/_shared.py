"""Streamlit helpers shared by app.py and the pages (not a page: st.navigation lists pages itself)."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

from specviz import settings
from specviz.store import Store


def require_router() -> None:
    """Hand a page over to app.py's st.navigation router.

    A ``pages/`` folder beside app.py puts Streamlit (1.67) in its older multipage mode, which runs
    a page file on its own, without the router or the sidebar, when the requested page matches the
    file's name (streamlit/streamlit#10276). app.py gives its pages URL paths that differ from the
    file names, so that mode finds no match and falls back to app.py. A file-name URL such as
    /explorer on a fresh server still reaches this guard, which leaves that mode for the process and
    reruns so that app.py routes the request. Pinned by tests/test_browser.py.
    """
    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()


@st.cache_resource
def shared_store(path: str) -> Store:
    """The app's one store (one DuckDB connection per process; each call takes its own cursor),
    with the shipped examples imported on its first use."""
    store = Store(path, settings.get("SPECVIZ_DB_LOCK_TIMEOUT_S"))
    store.seed_examples(sorted((settings.get("SPECVIZ_DATA_DIR") / "examples").glob("*.csv")))
    return store


def url_choice(widget: Callable[..., Any], label: str, options: Sequence[str], key: str,
               format_func: Callable[[str], str], default: str | None = None, **kwargs: Any) -> str:
    """A selectbox or radio whose choice is kept in the URL as the option's id.

    ``bind="query-params"`` would store the formatted (translated) label, so a shared link would
    depend on the reader's language; this keeps ``?key=id`` instead. Unknown ids in the URL fall
    back to the default.
    """
    default = options[0] if default is None else default
    wanted = st.query_params.get(key)
    index = options.index(wanted) if wanted in options else options.index(default)
    value = widget(label, options, index=index, key=key, format_func=format_func, **kwargs)
    if value == default:
        st.query_params.pop(key, None)
    else:
        st.query_params[key] = value
    return value
