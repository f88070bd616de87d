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
