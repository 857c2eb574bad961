"""What a report says of its match model, kept beside its pair file.

``neardup report pairs.tsv`` writes ``pairs.model.json``: the cut it used,
each level of number agreement's cut, the estimated precision and recall of
the pairs it kept, and the model itself; ``evaluate``, ``html`` and the
benchmarks read it back. :class:`ReportSummary` is that file, typed: made
once from the report's model (:meth:`ReportSummary.of`), written
atomically, read back equal. Its fields are what the report decided, as it
said them, not worked out again from the model by whichever version reads
the file. A module of its own, not part of ``model``: the model is the fit's
numbers and reads no file; the summary is a file format.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from .files import atomic_output
from .model import MatchModel

__all__ = ["Estimates", "ReportSummary", "summary_path"]


def summary_path(pairs_path: Path | str) -> Path:
    """Where a report keeps its summary beside its pair file: ``pairs.tsv``
    -> ``pairs.model.json``."""
    return Path(pairs_path).with_suffix(".model.json")


@dataclass(frozen=True)
class Estimates:
    """The model's estimates for the pairs a report kept: the true pairs
    among all pairs of records, the kept pairs, their precision and recall,
    and ``proposed``, the estimated share of all true pairs that became
    candidates at all (``bulk.proposed_share``; 1 in files written before
    it was estimated)."""

    true_pairs: float
    pairs: float
    precision: float
    recall: float
    proposed: float = 1.0


@dataclass(frozen=True)
class ReportSummary:
    """A report's summary (``PAIRS.model.json``).

    ``cut`` is the similarity cut used (``forced`` when a fixed cut
    replaced the model's ``model_cut``); ``None`` where no bin reaches a
    match probability of 1/2. ``level_cuts`` holds each level of number
    agreement's cut, in the model's order; ``estimated`` is ``None`` when
    the model was not fitted (too few candidates).
    """

    cut: float | None
    model_cut: float | None
    forced: bool
    level_cuts: tuple[tuple[str, float | None], ...]
    candidates: int
    labeled_same: int
    labeled_different: int
    fitted: bool
    estimated: Estimates | None
    model: MatchModel

    @classmethod
    def of(cls, model: MatchModel, cut: float, forced: bool, proposed: float = 1.0) -> ReportSummary:
        """What a report says of ``model``: the cut used (``forced`` when a
        fixed cut replaced the model's), each level's cut, the
        estimates of what was kept.

        ``proposed`` is the estimated share of all true pairs that became
        candidates at all (``bulk.proposed_share``): the model sees
        candidates only, so the true pairs and the recall it estimates are
        of those, and are carried to all true pairs by that share.
        """
        found = model.estimates(cut if forced else None)
        estimated = None if found is None else Estimates(
            true_pairs=found["true_pairs"] / proposed, pairs=found["pairs"], precision=found["precision"],
            recall=found["recall"] * proposed, proposed=proposed)
        return cls(cut=_finite(cut), model_cut=_finite(model.cut), forced=forced,
                   level_cuts=tuple((name, _finite(at)) for name, at in model.cuts().items()),
                   candidates=model.candidates, labeled_same=int(np.sum(model.same)),
                   labeled_different=int(np.sum(model.different)), fitted=model.fitted, estimated=estimated,
                   model=model)

    def to_dict(self) -> dict:
        """The file's JSON object, its keys in the order they have always had."""
        return {
            "cut": self.cut,
            "model_cut": self.model_cut,
            "forced": self.forced,
            "level_cuts": dict(self.level_cuts),
            "candidates": self.candidates,
            "labeled": {"same": self.labeled_same, "different": self.labeled_different},
            "fitted": self.fitted,
            "estimated": None if self.estimated is None else asdict(self.estimated),
            "model": self.model.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict) -> ReportSummary:
        """The summary of a file's JSON object; ``level_cuts``, ``labeled``
        and ``proposed``, absent from files of earlier versions, default to
        none, none and 1.

        Raises:
            KeyError, TypeError, ValueError: the object is not a summary.
        """
        estimated = data["estimated"]
        labeled = data.get("labeled") or {}
        return cls(
            cut=_number(data["cut"]), model_cut=_number(data["model_cut"]), forced=_flag(data["forced"]),
            level_cuts=tuple((str(name), _number(at)) for name, at in (data.get("level_cuts") or {}).items()),
            candidates=int(data["candidates"]), labeled_same=int(labeled.get("same", 0)),
            labeled_different=int(labeled.get("different", 0)), fitted=_flag(data["fitted"]),
            estimated=None if estimated is None else Estimates(
                true_pairs=float(estimated["true_pairs"]), pairs=float(estimated["pairs"]),
                precision=float(estimated["precision"]), recall=float(estimated["recall"]),
                proposed=float(estimated.get("proposed", 1.0))),
            model=MatchModel.from_dict(data["model"]))

    def write(self, path: Path | str) -> None:
        """Write the summary to ``path`` (:func:`summary_path` of the pairs),
        atomically: the file appears only complete.

        Raises:
            NeardupError: the file could not be written (``files.atomic_output``).
        """
        with atomic_output(path) as handle:
            json.dump(self.to_dict(), handle, indent=1)

    @classmethod
    def read(cls, path: Path | str) -> ReportSummary | None:
        """The summary in ``path``, or ``None`` when there is none or it
        cannot be read (not JSON, not a summary, a model of another number
        of bins): a report without its summary is still a pair file."""
        try:
            return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _number(value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"a number or null, not {value!r}")
    return value


def _flag(value: object) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"true or false, not {value!r}")
    return value
