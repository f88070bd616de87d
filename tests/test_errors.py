"""specviz.errors: what a caught error leaves behind."""

from __future__ import annotations

import gc
import weakref

from specviz.errors import InputError, Notice, kept


class Read:
    """Something a failing function had read (a file's contents), weakly referable."""


def test_what_is_kept_of_an_error_holds_none_of_the_frames_that_raised_it():
    def refuse(read: Read) -> None:
        raise InputError("ingest.memory", file="big.csv", need=1210, most=1000)

    read = Read()
    alive = weakref.ref(read)
    try:
        refuse(read)
    except InputError as exc:
        caught = exc
    del read
    gc.collect()
    assert alive() is not None  # the exception's traceback holds the frame, and the frame what it read
    said = kept(caught)
    del caught
    gc.collect()
    assert alive() is None and said == Notice("ingest.memory", file="big.csv", need=1210, most=1000)
    assert kept(ValueError("not a number")) == "not a number"


def test_a_stored_notice_reads_back_as_it_was_written_nested_notices_too():
    """The store keeps notices as JSON (Notice.to_json); a notice read back from it (the Explorer's
    "other files left runs to this one") renders as the one written, not a dict's text."""
    notice = Notice("warn.report_figures_taken", other="a.yaml", runs=Notice("warn.run_unlabelled"))
    again = Notice.from_json(notice.to_json())
    assert again == notice and str(again).startswith("its run (no label): a.yaml, a benchmark report")
    assert Notice.from_json({"key": "exp.shared_runs", "params": {"file": "b", "runs": {"key": "x"}}}).params["runs"] == {
        "key": "x"}  # a value that merely has a key is data, not a notice
