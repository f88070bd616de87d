"""What a query's rows cost once shown, counted in the SQL console's query process from Arrow alone
(it never loads pandas), and the pandas frame the caller makes of them (:mod:`specviz.results.sandbox`
bounds a result by this count).

May import: pyarrow and pandas, each inside the function that needs it (the query process imports this
module and must not load pandas).
"""

from __future__ import annotations

from typing import Any

__all__ = ["as_frame", "shown_bytes", "rows_that_fit", "COLUMN_BYTES"]


def as_frame(table: Any) -> Any:
    """The pandas frame of a query's Arrow result, whole numbers kept whole beside a NULL: a column of
    them as pandas' nullable integers (``Int64`` and its kin: 3 and ``<NA>``), and those in a list as
    Python ints beside None. Arrow's default made both floats: 3.0 and NaN, "[1.0, NaN, 3.0]" in a CSV
    cell, which is no JSON."""
    import pandas as pd
    import pyarrow as pa

    nullable = {pa.int8(): pd.Int8Dtype(), pa.int16(): pd.Int16Dtype(), pa.int32(): pd.Int32Dtype(),
                pa.int64(): pd.Int64Dtype(), pa.uint8(): pd.UInt8Dtype(), pa.uint16(): pd.UInt16Dtype(),
                pa.uint32(): pd.UInt32Dtype(), pa.uint64(): pd.UInt64Dtype()}
    return table.to_pandas(types_mapper=nullable.get, integer_object_nulls=True)


def shown_bytes(batch: Any) -> int:
    """What rows cost once shown: as Arrow data (as sent, with the IPC message's metadata and
    padding: 64 rows of 6,000 INTEGER columns are 1.0 MB of data and 1.8 MB sent, one row 24 kB
    and 336 kB), or as the pandas frame the parent makes of them, whichever is larger (a list of
    30,000 NULLs is a few bytes of Arrow and 240 kB of pandas).

    The frame's size is counted from the Arrow columns (:func:`_frame_bytes`), not by making it:
    the query process then never loads pandas, which took half of its start (0.47 s of 0.93 s of
    one core)."""
    import pyarrow as pa

    return max(batch.nbytes, pa.ipc.get_record_batch_size(batch),
               sum(_frame_bytes(column) for column in batch.columns))


# Sizes of the Python objects a pandas object column holds (``sys.getsizeof`` in CPython 3.11),
# each at least what ``DataFrame.memory_usage(deep=True)`` counts for it: ``tests/test_sandbox.py``
# checks the bound on every kind of column a query returns.
_POINTER, _NONE, _BOOL, _DECIMAL, _ARRAY, _LIST, _TUPLE = 8, 16, 28, 104, 112, 56, 64
_OTHER = 128  # a value of a kind not listed (datetime.time and the like: 48-64 bytes)
# What the caller's frame takes for each column beyond its values (its Arrow and pandas objects):
# about 4 kB, measured by the attack pass (one row of 10,001 columns grew the caller by 43 MB).
COLUMN_BYTES = 4096


def _frame_bytes(column: Any, nested: bool = False) -> int:
    """Bytes one Arrow column takes as a pandas 3 column (at least what
    ``memory_usage(deep=True)`` counts, with what nested values hold besides).

    Numbers are numpy columns (whole numbers as pandas' nullable integers, a mask byte a row beside
    them: :func:`as_frame`); text is Arrow's, with an 8-byte offset a row; everything else is an
    object column: a pointer per row, ``None`` for a NULL, and for each value its Python object: a
    dict per struct (232 + 40 bytes a key bounds CPython's table), a numpy array per list with its
    items (Python ints where a NULL is among whole numbers), a list of tuples per map, and, inside
    them, a str of 49 + n bytes for ASCII text or at most 80 + 4 n."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind, rows, nulls = column.type, len(column), column.null_count
    values = rows - nulls
    if pa.types.is_dictionary(kind) and nested:
        return _frame_bytes(column.dictionary_decode(), nested)
    if pa.types.is_dictionary(kind):
        # An ENUM: a Categorical of codes (int8 below 127 categories, then int16...) and all of its
        # categories however few rows there are (even none), which Arrow makes Python strs, pandas
        # Arrow text again, with a hash table (up to 42 bytes a category counted). One row of 800
        # columns of a 1,000-value ENUM took the parent 121 MB; as text it had been counted 13 kB a column.
        categories = len(column.dictionary)
        width = 1 if categories < 127 else 2 if categories < 32767 else 4 if categories < 2**31 - 1 else 8
        return (rows * width + _frame_bytes(column.dictionary) + _frame_bytes(column.dictionary, True)
                + 48 * categories + 64)
    if not rows:
        return 0
    if pa.types.is_integer(kind) and not nested:  # pandas' nullable integers (as_frame): values and a mask
        return rows * (kind.bit_width // 8 + 1)
    if pa.types.is_integer(kind) or pa.types.is_floating(kind):
        # In a list, whole numbers beside a NULL are Python ints (as_frame), a pointer each here and their
        # objects counted by the list; in a struct or map, by _boxed.
        return rows * (max(kind.bit_width // 8, 8) if nulls else kind.bit_width // 8)
    if pa.types.is_boolean(kind) and not nulls:
        return rows
    if (pa.types.is_string(kind) or pa.types.is_large_string(kind)) and not nested:
        return (rows + 1) * _POINTER + rows // 8 + 1 + (pc.sum(pc.binary_length(column)).as_py() or 0)
    objects = rows * _POINTER + (0 if nested else nulls * _NONE)  # a nested None is the one None
    if pa.types.is_null(kind):
        return objects
    if pa.types.is_boolean(kind):
        return objects + values * _BOOL
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        # Sums taken by Arrow, the arithmetic on them in Python: a Python number given to Arrow's
        # compute functions, or a conversion to numpy, would load pandas.
        lengths, ascii_text = pc.binary_length(column), pc.string_is_ascii(column)
        ascii_values = pc.sum(ascii_text).as_py() or 0
        ascii_bytes = pc.sum(pc.filter(lengths, ascii_text)).as_py() or 0
        other_bytes = pc.sum(pc.filter(lengths, pc.invert(ascii_text))).as_py() or 0
        return objects + 49 * ascii_values + ascii_bytes + 80 * (values - ascii_values) + 4 * other_bytes
    if pa.types.is_decimal(kind):
        return objects + values * _DECIMAL
    if pa.types.is_map(kind):  # its keys and items are the whole array's, its offsets the slice's
        first, last = column.offsets[0].as_py(), column.offsets[-1].as_py()
        keys, items = column.keys.slice(first, last - first), column.items.slice(first, last - first)
        return (objects + values * _LIST + (last - first) * (_POINTER + _TUPLE) + _frame_bytes(keys, True)
                + _frame_bytes(items, True) + _boxed(keys) + _boxed(items))
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        items = column.flatten()
        ints = pa.types.is_integer(items.type) and items.null_count  # Python ints beside None (as_frame)
        return objects + values * _ARRAY + _frame_bytes(items, True) + (_boxed(items) if ints else 0)
    if pa.types.is_struct(kind):
        return (objects + values * (232 + 40 * kind.num_fields)
                + sum(_frame_bytes(field, True) + _boxed(field) for field in column.flatten()))
    return objects + values * _OTHER + column.nbytes


def _boxed(column: Any) -> int:
    """Bytes of the Python numbers a dict (a struct's fields) or tuples (a map's keys and items) hold
    for a column of numbers, beyond the numpy-sized count of :func:`_frame_bytes`: an int of up
    to 64 bits takes 28-36 bytes (40 allocated), a float 24. A map of 5,000 FLOAT pairs a row, counted
    80 bytes a pair, held 112 (the tuple, its two floats, its pointer): 124 rows of it at the 50 MB
    cap grew the caller by 85 MB."""
    import pyarrow as pa

    if pa.types.is_integer(column.type) or pa.types.is_floating(column.type):
        return (len(column) - column.null_count) * 40
    return 0


def rows_that_fit(batch: Any, budget: int) -> int:
    """The longest prefix of ``batch`` whose shown bytes stay within ``budget`` (bisection)."""
    low, high = 0, batch.num_rows
    while low < high:
        middle = (low + high + 1) // 2
        if shown_bytes(batch.slice(0, middle)) <= budget:
            low = middle
        else:
            high = middle - 1
    return low
