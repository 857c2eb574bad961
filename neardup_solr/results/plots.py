"""PNG figures: the LSH S-curve and similarity histograms (matplotlib, no display)."""

from __future__ import annotations

from pathlib import Path

from ..extras import require

require("matplotlib", "drawing plots").use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from ..lsh.bands import Banding  # noqa: E402
from ..files import atomic_output  # noqa: E402
from ..match.summary import ReportSummary  # noqa: E402


def _save(fig, path: Path) -> Path:
    """Write ``fig`` to ``path`` as PNG (or SVG or PDF, when the name says
    so); the file appears only when complete
    (:func:`~neardup_solr.files.atomic_output`)."""
    kind = path.suffix.lower().lstrip(".")
    try:
        fig.tight_layout()
        with atomic_output(path, binary=True) as out:
            fig.savefig(out, format=kind if kind in ("svg", "pdf") else "png")
    finally:
        plt.close(fig)
    return path


def s_curve(path: Path, banding: Banding, low: float, high: float, agreeing: np.ndarray | None = None) -> Path:
    """Probability of becoming a candidate against Jaccard similarity; with
    ``agreeing`` (random pairs of the data by MinHash values shared), their
    similarities as a histogram behind the curve."""
    s = np.linspace(0.0, 1.0, 401)
    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=110)
    if agreeing is not None and agreeing.sum():
        values = len(agreeing) - 1
        data = ax.twinx()
        data.bar(np.arange(values + 1) / values, agreeing, width=1.0 / values, color="tab:orange", alpha=0.5,
                 label=f"random pairs of the data ({int(agreeing.sum())})")
        data.set(yscale="symlog", ylabel="random pairs of the data")
        data.legend(loc="upper left", fontsize="small")
        ax.set_zorder(data.get_zorder() + 1)  # the curve in front of the bars
        ax.patch.set_visible(False)
    ax.plot(s, [banding.probability(x) for x in s],
            label=f"b={banding.bands} bands x r={banding.band_rows} rows")
    for x, p, name in ((low, banding.probability(low), "low"), (high, banding.probability(high), "high")):
        ax.axvline(x, color="grey", linestyle=":")
        ax.annotate(f"{name} {x:g}: P={p:.4f}", (x, p), textcoords="offset points", xytext=(6, -12 if p > 0.5 else 6))
    ax.set(xlabel="Jaccard similarity s", ylabel="P(candidate) = 1-(1-s^r)^b", xlim=(0, 1), ylim=(0, 1.02),
           title=f"LSH S-curve (steepest near s={banding.midpoint:.2f})")
    ax.legend(loc="lower right")
    return _save(fig, path)


def similarity_histogram(path: Path, true_values: list[float], false_values: list[float], label: str) -> Path:
    """Reported pairs by similarity, true and false ones stacked."""
    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=110)
    values = true_values + false_values
    low, high = (min(values), max(values)) if values else (0.0, 1.0)
    bins = np.linspace(low, high if high > low else low + 1, 21)
    ax.hist([true_values, false_values], bins=bins, stacked=True, color=["tab:green", "tab:red"],
            label=[f"true ({len(true_values)})", f"false ({len(false_values)})"])
    ax.set(xlabel=label, ylabel="pairs", title="Reported pairs")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend()
    return _save(fig, path)


def model_histogram(path: Path, about: ReportSummary) -> Path:
    """All candidate pairs by similarity (log scale), the two classes the
    match model fitted to them, and its cut: why the cut is where it is.
    ``about.estimated`` must be given (the model was fitted). For a report
    of field records, the field model's weights instead
    (:func:`field_weights`)."""
    if about.fields is not None:
        return field_weights(path, about)
    model = about.model
    bins = len(model.counts)
    edges = np.linspace(0.0, 1.0, bins + 1)
    centres = (edges[:-1] + edges[1:]) / 2
    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=110)
    ax.bar(centres, model.counts, width=1.0 / bins, color="lightgrey", label=f"candidates ({about.candidates})")
    ax.plot(centres, model.nonmatch, color="tab:red", label="fitted non-matches")
    ax.plot(centres, model.match, color="tab:green", label="fitted matches")
    if about.cut is not None:
        ax.axvline(about.cut, color="black", linestyle="--",
                   label=f"{'fixed cut' if about.forced else 'cut (probability 0.5)'} {about.cut:.2f}")
    if not about.forced:
        # Each level of number agreement moves the cut its own way.
        for (name, cut), colour in zip(about.level_cuts, ("tab:purple", "tab:orange", "tab:brown",
                                                           "tab:cyan", "tab:olive")):
            if cut is not None:
                ax.axvline(cut, color=colour, linestyle=":", label=f"cut where {name} {cut:.2f}")
    estimated = about.estimated
    ax.set(xlabel="similarity", ylabel="pairs", xlim=(0, 1), yscale="symlog",
           title=f"Match model: est. precision {estimated.precision:.3f}, recall {estimated.recall:.3f}")
    ax.legend(fontsize="small")
    return _save(fig, path)


def field_weights(path: Path, about: ReportSummary) -> Path:
    """A field model's weights: for each field, each level's log-ratio
    ``log2(m / u)`` in bits as a bar (agreement for a match, disagreement
    against), "missing" first and then the levels best first; what a
    pair's explanation adds up."""
    model = about.fields.model
    rows = [(f"{unit.name}: {level.label}", float(weight)) for unit, weights in zip(model.units, model.ratios)
            for level, weight in zip(unit.levels, weights)]
    fig, ax = plt.subplots(figsize=(7.2, max(3.0, 0.22 * len(rows) + 1.2)), dpi=110)
    places = np.arange(len(rows))[::-1]
    weights = [w for _, w in rows]
    ax.barh(places, weights, color=["tab:green" if w > 0 else "tab:red" for w in weights])
    ax.set_yticks(places, [label for label, _ in rows], fontsize="x-small")
    ax.axvline(0, color="black", linewidth=0.8)
    estimated = about.estimated
    ax.set(xlabel="weight (bits): log2 m/u", title=f"Field model: est. precision {estimated.precision:.3f}, "
           f"recall {estimated.recall:.3f}")
    return _save(fig, path)
