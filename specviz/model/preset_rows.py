"""The shipped presets' files (``data/*.csv``: GPUs, models, heads, engines, published acceptance,
workloads) read as rows, one reader for all: UTF-8, each row a dict by the header's names, every
value text (each loader converts its own columns)."""

from __future__ import annotations

import csv
from pathlib import Path

__all__ = ["read_rows"]


def read_rows(path: Path) -> list[dict[str, str]]:
    """The rows of the preset file at ``path``."""
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))
