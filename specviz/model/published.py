"""Published acceptance of the pairs people serve: sourced starting points for the calculator's α
(``data/published_acceptance.csv``; the dataset and note with their translations,
:class:`specviz.i18n.PresetText`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from numpy.typing import ArrayLike

from specviz.i18n import PresetText

from . import mtp, spec
from .architecture import Model
from .preset_rows import read_rows

__all__ = ["PublishedAcceptance", "load_published_acceptance"]


@dataclass(frozen=True)
class PublishedAcceptance:
    """A published acceptance for a target and a draft kind or preset at a draft length: α, from the
    paper's rate or from a mean acceptance length (:func:`specviz.model.spec.alpha_from_acceptance_length`),
    a starting point for the calculator's α, with its dataset and source."""

    target: str
    draft: str
    gamma: int
    alpha: float
    acceptance_length: float | None
    dataset: str
    source: str
    note: str

    def alpha_at(self, reuse: Mapping[str, ArrayLike]) -> float:
        """The α at which a draft whose acceptance falls as ``reuse`` says (``trained``, ``decay``:
        :attr:`specviz.scenario.Scenario.reuse`) makes this figure: a published rate as it is, a
        published length through the inverse of that draft's E, which raises ``spec.length_reused``
        where the draft cannot make it."""
        if self.acceptance_length is None:
            return self.alpha
        return float(spec.alpha_from_acceptance_length(self.acceptance_length, self.gamma, **reuse))


def load_published_acceptance(data_dir: Path, models: Mapping[str, Model]) -> tuple[PublishedAcceptance, ...]:
    """The rows of ``data_dir/published_acceptance.csv``, α derived where a row gives a length: for
    the target's MTP layers run past their training, at the default :data:`specviz.model.mtp.REUSE`
    (:func:`specviz.model.mtp.reuse`), the α at which the calculator shows that length."""
    rows = read_rows(Path(data_dir) / "published_acceptance.csv")
    found = []
    for row in rows:
        length = float(row["acceptance_length"]) if row["acceptance_length"] else None
        published = PublishedAcceptance(row["target"], row["draft"], int(row["gamma"]), float(row["alpha"] or "nan"),
                                        length, PresetText.from_row(row, "dataset"), row["source"],
                                        PresetText.from_row(row, "note"))
        found.append(replace(published, alpha=published.alpha_at(mtp.reuse(models[row["target"]], row["draft"]))))
    return tuple(found)
