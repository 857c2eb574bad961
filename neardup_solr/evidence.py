"""Why a pair has its probability: its match weight, piece by piece (a waterfall).

A pair's probability is ``2^w / (1 + 2^w)`` of its match weight ``w`` in
bits (:func:`probability`), and the weight is a sum: for records of fields
the prior, then one term a field (``fields.model``); for records of one
text its similarity's odds, then what its numbers' agreement adds
(``match.text_explanation``). :class:`Explanation` holds those terms as
:class:`Step` s, so a reviewer sees which piece of evidence pushed a pair
over or under 1/2, and its steps add up to its probability
(:attr:`Explanation.probability`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np


def probability(weight: np.ndarray | float) -> np.ndarray | float:
    """The probability of a match weight in bits: ``2^w / (1 + 2^w)``."""
    # Past 1000 bits either way exp2 overflows, and the probability is 0 or 1 to the last bit anyway.
    return 1.0 / (1.0 + np.exp2(-np.clip(np.asarray(weight, np.float64), -1000.0, 1000.0)))


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
