"""PNG figures: the LSH S-curve and similarity histograms (matplotlib, no display)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from .bands import Banding, collision_probability  # noqa: E402


def s_curve(path: Path, banding: Banding, low: float, high: float) -> Path:
    """Probability of becoming a candidate against Jaccard similarity."""
    s = np.linspace(0.0, 1.0, 401)
    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=110)
    ax.plot(s, [collision_probability(x, banding.bands, banding.rows) for x in s],
            label=f"b={banding.bands} bands x r={banding.rows} rows")
    for x, p, name in ((low, banding.p_low, "low"), (high, banding.p_high, "high")):
        ax.axvline(x, color="grey", linestyle=":")
        ax.annotate(f"{name} {x:g}: P={p:.4f}", (x, p), textcoords="offset points", xytext=(6, -12 if p > 0.5 else 6))
    ax.set(xlabel="Jaccard similarity s", ylabel="P(candidate) = 1-(1-s^r)^b", xlim=(0, 1), ylim=(0, 1.02),
           title=f"LSH S-curve (steepest near s={banding.threshold:.2f})")
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


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
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
