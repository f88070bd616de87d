"""Streamlit helpers shared by app.py and the pages (not a page: st.navigation lists pages itself)."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import streamlit as st


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
