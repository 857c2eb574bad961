"""Why a pair scored what it did: its match weight, piece by piece (a waterfall).

A pair's probability is ``2^w / (1 + 2^w)`` of its match weight ``w`` in
bits, and the weight is a sum (``fieldmodel.py``): the prior, then one term
a field, each its level's log-ratio (a value's rarity counted at the exact
level). :class:`Explanation` holds those terms as :class:`Step` s, so a
reviewer sees which field pushed a pair over or under 1/2, and its steps
add up to its probability (:attr:`Explanation.probability`).

A pair of records of one text has two pieces of evidence
(``model.py``): its text similarity, whose share of matches gives the
first step, and the agreement of its numbers, the rest of the way to the
pair's probability.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from .fieldmodel import FieldModel, probability
from .model import BINS, LOGIT_BOUND, MatchModel
from .similarity import AGREEMENT


@dataclass(frozen=True)
class Step:
    """One term of a match weight: what it is (``name``: "prior", a field,
    "similarity", "numbers"), what was seen (``level``, and the two records'
    values), and its weight in bits."""

    name: str
    level: str
    weight: float
    value_a: str = ""
    value_b: str = ""


@dataclass(frozen=True)
class Explanation:
    """The steps of pair (``a``, ``b``)'s match weight; ``None`` as the
    probability where no model was fitted (a fixed cut decides)."""

    a: str
    b: str
    steps: tuple[Step, ...]
    fitted: bool = True

    @property
    def weight(self) -> float:
        """The match weight in bits: the steps' sum."""
        return math.fsum(step.weight for step in self.steps)

    @property
    def probability(self) -> float | None:
        return float(probability(self.weight)) if self.fitted else None

    def brief(self) -> str:
        """The steps on one line, as a pair file's ``explanation`` column
        holds them: ``prior -11.49; name exact +8.15; city different -3.94``."""
        return "; ".join(f"{step.name} {step.level + ' ' if step.level else ''}{step.weight:+.2f}"
                         for step in self.steps)

    def to_dict(self) -> dict:
        return {"a": self.a, "b": self.b, "weight": self.weight, "probability": self.probability,
                "steps": [asdict(step) for step in self.steps]}

    def __str__(self) -> str:
        lines = [f"{self.a} ~ {self.b}: " + ("no model: a fixed cut decides" if not self.fitted else
                                             f"match weight {self.weight:+.2f} bits, probability "
                                             f"{self.probability:.4f}")]
        width = max((len(step.name) for step in self.steps), default=0)
        for step in self.steps:
            values = f"  ({step.value_a!r} / {step.value_b!r})" if step.value_a or step.value_b else ""
            lines.append(f"  {step.name:<{width}}  {step.weight:+7.2f}  {step.level}{values}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        from html import escape

        rows = "".join(f"<tr><td>{escape(s.name)}</td><td>{escape(s.level)}</td><td>{escape(s.value_a)}</td>"
                       f"<td>{escape(s.value_b)}</td><td style='text-align:right'>{s.weight:+.2f}</td></tr>"
                       for s in self.steps)
        head = escape(str(self).splitlines()[0])
        return (f"<p>{head}</p><table><tr><th>evidence</th><th>level</th><th>a</th><th>b</th><th>bits</th></tr>"
                f"{rows}</table>")


def of_fields(a: str, b: str, model: FieldModel, levels: Sequence[int], shares: Sequence[float] | None,
              values_a: Sequence[str], values_b: Sequence[str]) -> Explanation:
    """The explanation of a pair of field records: the prior, then each
    field's level and weight (:meth:`FieldModel.explain`), with both values."""
    rows = model.explain(levels, shares)
    steps = [Step("prior", "", rows[0][2])]
    steps += [Step(name, level, weight, value_a, value_b)
              for (name, level, weight), value_a, value_b in zip(rows[1:], values_a, values_b)]
    return Explanation(a, b, tuple(steps))


def _bits(p: float) -> float:
    p = min(max(p, LOGIT_BOUND), 1.0 - LOGIT_BOUND)
    return math.log2(p / (1.0 - p))


def of_text(a: str, b: str, model: MatchModel | None, similarity: float, level: int) -> Explanation:
    """The explanation of a pair of records of one text: the odds its
    similarity's bin gives, then what its numbers' agreement adds or takes
    (the rest of the way to its probability under ``model``)."""
    first = Step("similarity", f"{similarity:.3f}", 0.0)
    numbers = Step("numbers", AGREEMENT[level], 0.0)
    if model is None or not model.fitted:
        return Explanation(a, b, (first, numbers), fitted=False)
    p = model.probability(similarity, level)
    shown = model.probabilities(np.array([similarity]))[0] if not model.ratios else \
        model.posterior[min(int(similarity * BINS), BINS - 1)]
    alone = _bits(float(shown))
    return Explanation(a, b, (Step("similarity", f"{similarity:.3f}", alone),
                              Step("numbers", AGREEMENT[level], _bits(float(p)) - alone)))
