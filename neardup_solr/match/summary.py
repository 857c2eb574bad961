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

from ..fields.model import UNSURE, FieldModel
from ..files import atomic_output
from .text_model import MatchModel

__all__ = ["Estimates", "FieldSummary", "ReportSummary", "summary_path"]


def summary_path(pairs_path: Path | str) -> Path:
    """Where a report keeps its summary beside its pair file: ``pairs.tsv``
    -> ``pairs.model.json``."""
    return Path(pairs_path).with_suffix(".model.json")


@dataclass(frozen=True)
class Estimates:
    """The model's estimates for the pairs a report kept: the true pairs
    among all pairs of records, the kept pairs, their precision and recall,
    and ``proposed``, the estimated share of all true pairs that became
    candidates at all (``modes.text_report.proposed_share``; 1 in files written before
    it was estimated)."""

    true_pairs: float
    pairs: float
    precision: float
    recall: float
    proposed: float = 1.0


@dataclass(frozen=True)
class FieldSummary:
    """What a report of field records (``modes.field_report``) says beside the
    estimates: the keys that made candidates with the LSH bands, the share
    of true pairs estimated to be missed by all of them, how many random
    pairs measured chance agreement, whether the model told matches from
    non-matches at all (``separated``), the fitted model, its
    ``ambiguity`` on the candidates (``fields.model.ambiguity``: 0 in files
    written before it was kept), and the share of more true pairs the
    candidates it doubts could hold (``hidden``, ``fields.model.hidden``: 0
    in files written before)."""

    keys: tuple[str, ...]
    missed: float
    random_pairs: int
    separated: bool
    model: FieldModel
    ambiguity: float = 0.0
    hidden: float = 0.0

    @property
    def doubt(self) -> float:
        """About how far the estimates may be off, as a share: the larger of
        the ambiguity and what the doubted candidates could hide."""
        return max(self.ambiguity, self.hidden)

    @property
    def unsure(self) -> bool:
        """Whether the estimates may be off by more than they are held to
        (``fields.model.UNSURE``): about as much as the doubt."""
        return self.doubt > UNSURE

    def to_dict(self) -> dict:
        found = {"keys": list(self.keys), "missed": self.missed, "random_pairs": self.random_pairs,
                 "separated": self.separated, "model": self.model.to_dict(), "ambiguity": _finite(self.ambiguity)}
        if self.hidden:
            found["hidden"] = _finite(self.hidden)
        return found

    @classmethod
    def from_dict(cls, data: dict) -> FieldSummary:
        ambiguity, hidden = data.get("ambiguity", 0.0), data.get("hidden", 0.0)
        return cls(keys=tuple(str(k) for k in data["keys"]), missed=float(data["missed"]),
                   random_pairs=int(data["random_pairs"]), separated=_flag(data["separated"]),
                   model=FieldModel.from_dict(data["model"]),
                   ambiguity=math.inf if ambiguity is None else float(ambiguity),
                   hidden=math.inf if hidden is None else float(hidden))


# The entities' expected matches past this many times the model's count of
# all matches: that count is short (pairs the candidates never held).
SHORT = 1.05


@dataclass(frozen=True)
class ReportSummary:
    """A report's summary (``PAIRS.model.json``).

    ``cut`` is the similarity cut used (``forced`` when a fixed cut
    replaced the model's ``model_cut``); ``None`` where no bin reaches a
    match probability of 1/2. ``level_cuts`` holds each level of number
    agreement's cut, in the model's order; ``estimated`` is ``None`` when
    the model was not fitted (too few candidates). A report of field
    records has no similarity cut and no ``model`` of similarities: its
    ``fields`` says what it did instead.
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
    model: MatchModel | None
    fields: FieldSummary | None = None
    # The estimates of the entities (``report --entities``): their pairs (every
    # two records of one entity), and those pairs' precision and recall.
    entities: Estimates | None = None

    @classmethod
    def of(cls, model: MatchModel, cut: float, forced: bool, proposed: float = 1.0) -> ReportSummary:
        """What a report says of ``model``: the cut used (``forced`` when a
        fixed cut replaced the model's), each level's cut, the
        estimates of what was kept.

        ``proposed`` is the estimated share of all true pairs that became
        candidates at all (``modes.text_report.proposed_share``): the model sees
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

    @classmethod
    def of_fields(cls, fields: FieldSummary, *, candidates: int, true_pairs: float, pairs: int, precision: float,
                  recall: float, labeled_same: int = 0, labeled_different: int = 0) -> ReportSummary:
        """What a report of field records says: its estimates, and ``fields``."""
        return cls(cut=None, model_cut=None, forced=False, level_cuts=(), candidates=candidates,
                   labeled_same=labeled_same, labeled_different=labeled_different, fitted=True,
                   estimated=Estimates(true_pairs=true_pairs, pairs=pairs, precision=precision, recall=recall,
                                       proposed=1.0 - fields.missed), model=None, fields=fields)

    @property
    def told(self) -> bool:
        """Whether the model told matches from non-matches, so its estimates
        hold: a field model that separated two classes, or a model of
        texts that found a class of matches beside copies."""
        if self.fields is not None:
            return self.fields.separated
        return self.model is None or not self.model.only_copies

    @property
    def caveat(self) -> str | None:
        """What a reader of the estimates must know in a few words, or
        ``None``: a field model that could not tell matches from
        non-matches, or is unsure of its estimates (by about how much)."""
        if self.fields is None:
            return None
        if not self.fields.separated:
            return "the model could not tell: they do not hold"
        return f"unsure by about {self.fields.doubt:.0%}" if self.fields.unsure else None

    @property
    def entities_caveat(self) -> str | None:
        """:attr:`caveat` for the entities' estimates, or that the entities
        hold more matches than the model expects in all (its count of the
        matches is short, and their recall is at most the estimate)."""
        if self.entities is not None and self.estimated is not None and \
                self.entities.true_pairs > SHORT * self.estimated.true_pairs:
            short = "the model's count of all matches is short of the entities': recall at most this"
            return f"{self.caveat}; {short}" if self.caveat else short
        return self.caveat

    def to_dict(self) -> dict:
        """The file's JSON object, its keys in the order they have always had."""
        found = {
            "cut": self.cut,
            "model_cut": self.model_cut,
            "forced": self.forced,
            "level_cuts": dict(self.level_cuts),
            "candidates": self.candidates,
            "labeled": {"same": self.labeled_same, "different": self.labeled_different},
            "fitted": self.fitted,
            "estimated": None if self.estimated is None else asdict(self.estimated),
            "model": None if self.model is None else self.model.to_dict(),
        }
        if self.fields is not None:
            found["fields"] = self.fields.to_dict()
        if self.entities is not None:
            found["entities"] = asdict(self.entities)
        return found

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
            model=None if data["model"] is None else MatchModel.from_dict(data["model"]),
            fields=FieldSummary.from_dict(data["fields"]) if data.get("fields") else None,
            entities=Estimates(**{k: float(v) for k, v in data["entities"].items()}) if data.get("entities") else None)

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
