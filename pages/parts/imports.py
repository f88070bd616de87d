"""The explorer's upload step: the form, each file's report, the column mapping of a CSV whose
columns matched no name, and what a file's runs ran where the file does not say (a helper of
pages/results.py, not a page)."""

from __future__ import annotations

from pathlib import PurePosixPath

import pandas as pd
import streamlit as st

from specviz import settings
from specviz.errors import Notice, kept
from specviz.i18n import escape_markdown, md, message, t, visible
from specviz.results import explorer, importers
from specviz.results.importers import LeftOut, user_csv
from specviz.results.schema import STATED_METHODS
from specviz.results.store import ImportResult, Store, StoreError

# Session key of the files waiting for a column mapping, by name and content (two files of one name, from
# two folders, each wait): (name, content, columns to map, whether the file was imported and a mapping
# replaces its runs). One form each, so that several can wait.
_PENDING = "pending_csv"
# Session key of the last upload's reports: (kind, file name, ImportResult, the error's words, why a folder's file
# was passed over, or why a file has no mapping form).
_REPORTS = "import_reports"


def _pending() -> dict[str, tuple[str, bytes, list[str], bool]]:
    return st.session_state.setdefault(_PENDING, {})


def _pending_key(name: str, data: bytes) -> str:
    """A waiting file's key, as its form names it: its name, or for another file of the name chosen
    with it (two folders' ``results.csv``) the name and a number, "results.csv (2)", so that each
    keeps a form (the second had replaced the first's). The same content again keeps its key."""
    key, number = name, 2
    while key in _pending() and _pending()[key][1] != data:
        key, number = f"{name} ({number})", number + 1
    return key


def _import_upload(store: Store, name: str, data: bytes, synthetic: bool) -> list[tuple[str, str, ImportResult | Notice]]:
    """Import one uploaded file, its runs marked as measured at synthetic acceptance where the user
    says so: the file's reports. A failure is its report (its words, not the error:
    :func:`specviz.errors.kept`), never the batch's end."""
    try:
        result = store.import_file(name, data, settings.get("SPECVIZ_MAX_UPLOAD_BYTES"))
    except importers.UnrecognisedColumnsError as exc:  # offer the mapping step
        return [("error", name, kept(exc)), *_offer_mapping(name, data, exc.columns, False)]
    except (importers.IngestError, StoreError) as exc:
        return [("error", name, kept(exc))]
    if synthetic and result.content_hash:
        store.flag_synthetic(result.content_hash)
    # Offer to map what the synonyms missed.
    return [("ok", name, result), *(_offer_mapping(name, data, result.unmatched_columns, True)
                                    if result.unmatched_columns else [])]


def _offer_mapping(name: str, data: bytes, columns: list[str], replace: bool) -> list[tuple[str, str, Notice]]:
    """A mapping form for the file, where the forms offer at most ``SPECVIZ_MAPPING_MAX_COLUMNS``
    columns with it (each a drop-down drawn on every rerun); else a report that says so."""
    key = _pending_key(name, data)
    waiting = sum(len(other) for other_key, (_, _, other, _) in _pending().items() if other_key != key)
    most = settings.get("SPECVIZ_MAPPING_MAX_COLUMNS")
    if waiting + len(columns) > most:
        return [("notice", name, Notice("exp.mapping_too_many", file=name, columns=len(columns), most=most,
                                        waiting=waiting))]
    _pending()[key] = (name, data, columns, replace)
    return []


def _import_files(store: Store, uploads: list, synthetic: bool) -> list[tuple[str, str, ImportResult | Notice]]:
    """Import files chosen one by one (no folder: two may share a name) in the order a folder's are
    read (:func:`specviz.results.importers.read_order`: ``run=0.json`` before its sweep's
    ``summary.json`` had split one sweep into two lines). None is passed over for another beside it,
    as in a folder: without one, a name says nothing of which run a file is (an attack pass: a
    ``profile_export.jsonl`` chosen with another run's ``profile_export_aiperf.json`` had been left
    unread as its copy)."""
    chosen = sorted(uploads, key=lambda upload: importers.read_order(upload.name))
    return [report for upload in chosen for report in _import_upload(store, upload.name, upload.getvalue(), synthetic)]


def _import_folder(store: Store, uploads: list, synthetic: bool) -> list[tuple[str, str, ImportResult | LeftOut | Notice]]:
    """Import an uploaded folder as ``specviz ingest`` imports one on disk: its files chosen and
    ordered by their paths in it (:func:`specviz.results.importers.select_files`: a sweep's summary
    before its run files, a file another holds passed over, with why)."""
    by_path = {PurePosixPath(upload.name): upload for upload in uploads}
    chosen = importers.select_files(by_path)
    reports: list[tuple[str, str, ImportResult | LeftOut | Notice]] = [
        report for path in chosen.files for report in _import_upload(store, str(path), by_path[path].getvalue(), synthetic)]
    reports += [("left_out", str(path), why) for path, why in chosen.left_out.items() if why.reason not in importers.UNREAD]
    # Files that are no results at all (a README, a scrape saved as text) in one line, not one each.
    reports += [("info", "", notice) for notice in importers.unread_notices(chosen.left_out, settings.get("SPECVIZ_LISTED_FILES"))]
    return reports


def _refusal(error: Exception | Notice, lang: str) -> str:
    """A file's refusal as the report says it: the error's message, then "Nothing from this file was
    stored."; a message that ends its sentence (a /metrics scrape's, the store's) gives up its full
    stop to the report's, which made "the Live page.. Nothing"."""
    return t("exp.report.error", lang, error=message(error, lang).removesuffix("."))


def _show_reports(lang: str) -> None:
    """Each file of the last upload: imported, skipped (with why) or refused (with the message)."""
    for kind, name, result in st.session_state.get(_REPORTS, []):
        if kind == "error":
            st.error(_refusal(result, lang))
            continue
        if kind == "notice":
            st.warning(message(result, lang))
            continue
        if kind == "info":
            st.info(message(result, lang))
            continue
        if kind == "left_out":
            st.info(md(f"exp.left_out.{result.reason}", lang, file=name, holder=str(result.holder)))
            continue
        if result.status == "skipped" and result.runs_from:  # new content, its runs stored from other files
            st.info(md("exp.report.skipped_runs", lang, file=name, others=", ".join(result.runs_from),
                       count=len(result.runs_from)))
        elif result.status == "skipped":
            st.info(md("exp.report.skipped_as" if result.imported_as else "exp.report.skipped", lang, file=name,
                       other=result.imported_as))
        else:
            st.success(md("exp.report.imported", lang, file=name, format=result.format, runs=result.runs,
                          requests=result.requests))
        # A skipped file may say why too (its runs are already stored from another file of a sweep).
        for warning in result.warnings:
            st.warning(t("exp.report.warning", lang, file=escape_markdown(name), warning=message(warning, lang)))


def _mapping_form(store: Store, lang: str, key: str) -> None:
    """The mapping step of the file waiting under ``key`` (:func:`_pending_key`); its widget keys end in
    it, so each form keeps its own."""
    name, data, columns, replace = _pending()[key]
    with st.form(f"mapping:{key}"):
        st.markdown(md("exp.mapping_partial" if replace else "exp.mapping", lang, file=key))
        # Only what a user may map (not the store's own columns), in schema order: the run's
        # dimensions, then its measures; each under its title, its schema name the value kept.
        targets = ["", *user_csv.MAPPABLE_COLUMNS]

        def title(target: str) -> str:
            return t(f"col.{target}", lang) if target else t("exp.mapping_ignore", lang)

        mapping = {column: st.selectbox(escape_markdown(column), targets, key=f"map_{i}:{key}", format_func=title)
                   for i, column in enumerate(columns)}
        if st.form_submit_button(t("exp.mapping_import", lang), key=f"import_mapped:{key}"):
            try:
                result = store.import_file(name, data, settings.get("SPECVIZ_MAX_UPLOAD_BYTES"),
                                           csv_mapping={k: v for k, v in mapping.items() if v}, replace=replace)
                # This file's report becomes the import's; the other files' reports and forms stay.
                reports = [r for r in st.session_state.get(_REPORTS, []) if r[1] != name]
                st.session_state[_REPORTS] = [*reports, ("ok", name, result)]
                del _pending()[key]
                st.rerun()
            except (importers.IngestError, StoreError) as exc:
                st.error(_refusal(exc, lang))
        # Closing the form keeps a partly matched file as imported, and imports nothing of one that was refused.
        if st.form_submit_button(t("exp.mapping_keep" if replace else "exp.mapping_dismiss", lang),
                                 key=f"{'keep' if replace else 'dismiss'}_mapping:{key}"):
            del _pending()[key]
            st.rerun()


def upload_section(store: Store, lang: str) -> None:
    """The upload form, the last upload's reports, and a mapping form for each file waiting for one."""
    with st.form("upload", clear_on_submit=True):
        limit = settings.upload_mb("SPECVIZ_MAX_UPLOAD_BYTES")
        files = st.file_uploader(t("exp.upload", lang), accept_multiple_files=True, key="uploads",
                                 help=t("exp.upload_help", lang), max_upload_size=limit)
        folder = st.file_uploader(t("exp.upload_folder", lang), accept_multiple_files="directory", key="upload_folder",
                                  help=t("exp.upload_folder_help", lang), max_upload_size=limit)
        synthetic = st.checkbox(t("exp.upload_synthetic", lang), key="upload_synthetic",
                                help=t("exp.upload_synthetic_help", lang))
        submitted = st.form_submit_button(t("exp.import", lang), key="import")
    if submitted and (files or folder):
        # A new upload of a name replaces the forms of that name (a corrected file, chosen again).
        names = {upload.name for upload in (*(files or []), *(folder or []))}
        st.session_state[_PENDING] = {key: waiting for key, waiting in _pending().items() if waiting[0] not in names}
        st.session_state[_REPORTS] = _import_files(store, files or [], synthetic) + _import_folder(store, folder or [],
                                                                                                   synthetic)
    _show_reports(lang)
    for key in list(_pending()):
        _mapping_form(store, lang, key)


# Session key of the last statement of speculation, (file name, runs changed, setting): said once,
# after the rerun that pairs the runs anew.
_STATED = "stated_speculation"


def setting_words(method: str, gamma: object, lang: str) -> str:
    """A stated setting as the page says it: plain decoding, or the method and its γ."""
    return t("exp.state_plain", lang) if method == "none" else f"{method} γ={int(gamma)}"


def stated_files(shown: pd.DataFrame, origin: str) -> pd.DataFrame:
    """The user's shown files whose runs do not say what they ran, or whose speculation the user
    stated (:func:`specviz.results.explorer.speculation_unstated`); none for the examples."""
    if origin != "user":
        return pd.DataFrame(columns=["source_file", "unstated", "no_method", "stated", "method", "gamma"])
    return explorer.speculation_unstated(shown)


def unstated_note(files: pd.DataFrame, lang: str) -> None:
    """That the runs whose file says nothing of speculation count as plain runs, and where to say otherwise."""
    if not (unsaid := files[files["unstated"] > 0]).empty:
        names = [visible(name) for name in unsaid["source_file"]]
        st.info(md("exp.unstated", lang, runs=int(unsaid["unstated"].sum()),
                   files=", ".join(names[:5]) + (" …" if len(names) > 5 else "")))


def offer_speculation_statement(store: Store, files: pd.DataFrame, editable: bool, lang: str) -> None:
    """What a file's runs ran where the file does not say, as the user states it (plain, or a method
    and γ: :meth:`specviz.results.store.Store.state_speculation`), for ``files`` (:func:`stated_files`);
    not offered to a viewer or on a read-only store (``editable`` False)."""
    if stated := st.session_state.pop(_STATED, None):
        st.success(md("exp.stated", lang, file=stated[0], runs=stated[1], setting=stated[2]))
    if not editable or files.empty:
        return
    unstated_note(files, lang)
    line = st.container(horizontal=True, vertical_alignment="bottom")

    # Files of one name (AIPerf's profile_export_aiperf.json) told apart by the import's id, as for removal.
    repeated = files["source_file"].duplicated(keep=False)

    def option(h: str) -> str:
        said = (t("exp.state_said", lang, setting=setting_words(files.at[h, "method"], files.at[h, "gamma"], lang))
                if files.at[h, "stated"] else
                t("exp.state_unsaid" if files.at[h, "unstated"] else "exp.state_no_method", lang))
        name = visible(files.at[h, "source_file"]) + (f" · {h[:12]}" if repeated[h] else "")
        runs = int(files.at[h, "unstated"] + files.at[h, "no_method"] + files.at[h, "stated"])
        return t("exp.state_option", lang, file=name, runs=runs, said=said)

    chosen = line.selectbox(t("exp.state_file", lang), files.index, index=None, key="state_file", width=420,
                            placeholder=t("exp.remove_import_placeholder", lang), help=t("exp.state_file_help", lang),
                            format_func=option)
    # EAGLE-3 first: a file is stated mostly to say that it speculated.
    method = line.selectbox(t("exp.state_method", lang), STATED_METHODS, index=STATED_METHODS.index("eagle3"),
                            key="state_method", width=240,
                            format_func=lambda m: t("exp.state_plain", lang) if m == "none" else m)
    gamma = line.number_input(t("exp.state_gamma", lang), 1, settings.get("SPECVIZ_GAMMA_MAX"), 3, key="state_gamma",
                              width=140, disabled=method == "none", help=t("exp.state_gamma_help", lang))
    if line.button(t("exp.state_button", lang), key="state_button", disabled=chosen is None):
        try:
            changed = store.state_speculation(chosen, method, int(gamma))
        except StoreError as exc:
            st.error(message(exc, lang))
            return
        st.session_state[_STATED] = (files.at[chosen, "source_file"], changed, setting_words(method, gamma, lang))
        st.rerun()  # the whole page: the runs paired anew
