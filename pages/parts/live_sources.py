"""Where the Live page reads from (a helper of pages/live-metrics.py, not a page): the demo replay, a
source an administrator named or a URL typed, and the labels a Prometheus fleet's figures can be kept
apart by."""

from __future__ import annotations

import time
from typing import Any

import streamlit as st

from pages.parts.controls import refuse_url_value, url_choice, url_widget
from specviz import errors, settings
from specviz.errors import Notice, SpecvizError
from specviz.i18n import t
from specviz.live import access, prometheus, prometheus_api, replay

# Labels the Prometheus view keeps apart by first (the scraped server, vLLM's data-parallel engine), before
# the others its series carry (apart_labels).
REPLICA_LABELS = ("instance", "engine")


@st.cache_resource
def demo_server() -> replay.ReplayServer:
    """The demo source: one replay exporter per app process, on a free loopback port."""
    return replay.start()


@st.cache_data(ttl=60, show_spinner=False)
def apart_labels(url: str, span: str) -> tuple[tuple[str, ...], Notice | str | None]:
    """What the fleet's figures can be kept apart by: the servers and vLLM's engines, then the other
    labels its series carry over the range (a workload's, where Prometheus labels its servers so),
    looked up at most once a minute; where the lookup fails, the first two and why it failed (said
    under figures that came: where none do, their own query says why)."""
    now = time.time()
    try:
        found, failure = prometheus.label_names(url, now - prometheus_api.parse_duration(span), now), None
    except SpecvizError as exc:
        found, failure = [], errors.kept(exc)
    return (*REPLICA_LABELS, *(label for label in found if label not in REPLICA_LABELS)), failure


def source_url(where: Any, setting: str, key: str, label: str, example: str, help_key: str, lang: str) -> str:
    """The URL to read: one of the sources an administrator named (``setting``), or, but for a viewer,
    one typed. A viewer reads named sources only: no visitor makes the server fetch an address of
    their choosing (each is checked against SPECVIZ_METRICS_ALLOW as it is fetched, all the same)."""
    named = access.named_sources(setting)
    viewer = settings.get("SPECVIZ_VIEWER")
    if viewer and not named:
        where.info(t("live.no_named_sources", lang, setting=setting))
        st.stop()
    if named:
        choices = [*named, *([] if viewer else [""])]  # "": a URL of the reader's own
        # A link's own address, without a named source's name, chooses it: the source named so, else
        # (but for a viewer, who is told the link's address is not read) a URL of the reader's own (an
        # SRE's pass: the first named source had been read instead, the address still the link's).
        linked = st.query_params.get(key) if f"{key}_name" not in st.query_params else None
        default = None if linked is None else next((n for n, u in named.items() if u == linked), None if viewer else "")
        if linked is not None and default is None:
            refuse_url_value(key, linked)
        name = url_choice(where.selectbox, t("live.named_source", lang), choices, f"{key}_name",
                          format_func=lambda n: n or t("live.own_url", lang), default=default)
        if name:
            st.query_params.pop(key, None)  # the address is the name's: a typed one would choose again
            return named[name]
    return url_widget(where.text_input, t(label, lang), key=key, value=example, help=t(help_key, lang))
