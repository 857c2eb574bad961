"""Judging quality: scores against true pairs, and the LSH banding.

matplotlib (``plots``, the ``[plots]`` extra) is imported by the commands that
draw, when they draw: importing it costs every other command a second or
more of start-up, and without it only the drawing fails, in one line naming
the extra (``evaluate --no-plot`` needs none).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..lsh import bands
from ..errors import MissingExtra
from ..results.evaluate import (cluster_scores, groups_of, missed, read_gold, read_membership, score, score_clusters,
                                score_labels, values_by_truth)
from ..results.labels import read_labels
from ..match.summary import ReportSummary, summary_path
from ..results.pairs import Pair, read_pairs
from ..records.readers import read_texts
from ..records.sources import RecordFile
from ..index.sampling import choose_banding
from .common import EXIT_SKIPPED_LINES, record_input, renamed_option, say


@click.command("evaluate")
@click.argument("pairs", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.option("--gold", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="True pairs, two ids per line (records of sources: source_a id_a source_b id_b); or true "
              "clusters, a table with a header naming `id` and `cluster` (or `cluster_id`, `entity`).")
@click.option("--labels", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="A labels file (`id_a<TAB>id_b<TAB>same|different` lines, the latest for a pair wins), as "
              "`neardup serve` writes it: only labeled pairs count.")
@click.option("--plot", type=click.Path(dir_okay=False, path_type=Path),
              help="Histogram of the pairs' similarities (or distances), true vs false: PNG, or SVG or PDF by "
              "the name [default: PAIRS with .png].")
@click.option("--no-plot", is_flag=True, help="Do not save the histogram.")
@click.option("--missed", "show_missed", is_flag=True, help="List the true pairs that were not reported.")
@click.option("--records", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="The records file, read as `index` reads it (its format, id and text columns or fields by the "
              "options below): the texts of missed pairs, and every record for the cluster scores.")
@record_input
def evaluate(pairs: Path, gold: Path | None, labels: Path | None, plot: Path | None, no_plot: bool,
             show_missed: bool, records: RecordFile | None) -> None:
    """Score a pair file against true pairs (--gold) or labels (--labels), or
    both; the last line holds the numbers.

    When the report left its match model beside PAIRS (PAIRS with
    .model.json), the model's estimated precision and recall are printed
    beside the measured ones, and its histogram is saved too (.model.png).

    PAIRS may be the entities `report --entities` wrote (id, cluster_id):
    they are scored as pairs (every two records of one entity), and by
    B-cubed. --gold may hold true clusters instead of pairs (a table naming
    `id` and `cluster`): every two records of one are a true pair.

    With --gold the clusters are scored too, on the line before the pairs'
    numbers: the pairs' connected components against the gold pairs', by
    B-cubed precision and recall and the adjusted Rand index, over every
    record of --records (a record in no pair is a cluster of its own), or
    without it over the records either file names.

    With --labels only labeled pairs count: precision is the share labeled
    same among the reported pairs that are labeled, recall the share of the
    pairs labeled same that were reported. Bad lines of the labels file are
    reported as FILE:LINE and skipped (exit 6). The histogram and --missed
    need --gold.

    \b
    Examples:
      neardup evaluate pairs.tsv --gold gold_pairs.tsv --no-plot --records addresses.txt
      -> estimated precision=0.990 recall=0.965 true=117  measured precision=0.965 recall=0.982 true=110
      -> clusters: records=864 bcubed_precision=0.996 bcubed_recall=0.998 bcubed_f1=0.997 adjusted_rand=0.965
      -> found=114 true=110 precision=0.965 recall=0.982 f1=0.973
      neardup evaluate out.tsv --gold gold_pairs.tsv --missed
      neardup evaluate pairs.tsv --gold gold.tsv --records people.csv --id-column person_id
      neardup evaluate entities.csv --gold true_clusters.csv
      neardup evaluate pairs.tsv --labels labels.tsv
      -> labels: 3 pairs same, 4 different; 114 pairs reported, 7 of them labeled (3 same, 4 different)
      -> labeled: found=114 judged=7 true=3 false=4 same=3 precision=0.429 recall=1.000 f1=0.600
    """
    if gold is None and labels is None:
        raise click.UsageError("give --gold, --labels or both")
    if gold is None and show_missed:
        raise click.UsageError("--missed lists true pairs: it needs --gold")
    entities = read_membership(pairs)
    if entities is not None:
        if gold is None:
            raise click.UsageError("entities are scored against true pairs or clusters: give --gold")
        _score_entities(pairs, entities, gold, records)
        return
    found = read_pairs(pairs)
    if gold is not None:
        _score_gold(pairs, found, gold, plot, no_plot, show_missed, records)
    if labels is not None:
        skipped = []
        labeled = read_labels(labels, on_bad=lambda bad: (skipped.append(bad), say(f"skipped {bad}")))
        for line in score_labels(found, labeled).lines():
            click.echo(line)
        if skipped:
            sys.exit(EXIT_SKIPPED_LINES)


def _score_entities(path: Path, entities: dict[str, str], gold: Path, records: RecordFile | None) -> None:
    """Score each record's entity (``report --entities``) against true pairs
    or true clusters: the entities' estimates beside the measured, B-cubed,
    then the pairwise numbers (every two records of an entity a pair)."""
    truth = read_truth(gold)
    about = ReportSummary.read(summary_path(path))
    measured = score_clusters(entities, truth)
    if about is not None and about.entities is not None:
        caveat = f" ({about.entities_caveat})" if about.entities_caveat else ""
        click.echo(f"estimated precision={about.entities.precision:.3f} recall={about.entities.recall:.3f}{caveat}  "
                   f"measured precision={measured.precision:.3f} recall={measured.recall:.3f}")
    texts = read_texts(records) if records else {}
    gold_groups = groups_of(truth) if isinstance(truth, dict) else truth
    click.echo(cluster_scores(groups_of(entities), gold_groups, list(texts) or list(entities)).line())
    click.echo(measured.line())


def read_truth(gold: Path) -> dict[str, str] | set[frozenset[str]]:
    """True clusters (a membership file: id and cluster columns) or true pairs."""
    clusters = read_membership(gold)
    return read_gold(gold) if clusters is None else clusters


def _score_gold(pairs: Path, found: list[Pair], gold: Path, plot: Path | None, no_plot: bool, show_missed: bool,
                records: RecordFile | None) -> None:
    """Score ``found`` against the gold file; print the scores, save the histograms."""
    clusters = read_membership(gold)
    if clusters is not None:
        measured = score_clusters(found, clusters)
        about = ReportSummary.read(summary_path(pairs))
        if about is not None and about.estimated is not None:
            caveat = f" ({about.caveat})" if about.caveat else ""
            click.echo(f"estimated precision={about.estimated.precision:.3f} recall={about.estimated.recall:.3f}"
                       f"{caveat}  measured precision={measured.precision:.3f} recall={measured.recall:.3f}")
        texts = read_texts(records) if records else {}
        click.echo(cluster_scores(found, groups_of(clusters), list(texts) or None).line())
        click.echo(measured.line())
        return
    truth = read_gold(gold)
    about = ReportSummary.read(summary_path(pairs))
    if not no_plot:
        try:
            from ..results import plots
        except MissingExtra as missing:
            missing.hint = f"{missing.hint}, or add --no-plot to score without the histogram"
            raise
        true_values, false_values, label = values_by_truth(found, truth)
        path = plots.similarity_histogram(plot or pairs.with_suffix(".png"), true_values, false_values, label)
        say(f"saved the histogram of {label} to {path}")
        if about is not None and about.estimated is not None:
            say(f"saved the match model's histogram to {plots.model_histogram(model_plot_path(pairs), about)}")
    texts = read_texts(records) if records else {}
    if show_missed:
        for a, b in missed(found, truth):
            shown = f"\t{texts[a]}\t{texts[b]}" if a in texts and b in texts else ""
            click.echo(f"missed\t{a}\t{b}{shown}")
    measured = score(found, truth)
    if about is not None and about.estimated is not None:
        estimated = about.estimated
        caveat = f" ({about.caveat})" if about.caveat else ""
        click.echo(f"estimated precision={estimated.precision:.3f} recall={estimated.recall:.3f} "
                   f"true={estimated.true_pairs:.0f}{caveat}  measured precision={measured.precision:.3f} "
                   f"recall={measured.recall:.3f} true={measured.true}")
    click.echo(cluster_scores(found, truth, texts or None).line())
    click.echo(measured.line())


def model_plot_path(pairs: Path) -> Path:
    return pairs.with_suffix(".model.png")


@click.command("tune")
@click.option("--low", type=click.FloatRange(0, 1), default=0.05, show_default=True,
              help="Similarity below which pairs should almost never be candidates.")
@click.option("--high", type=click.FloatRange(0, 1), default=0.5, show_default=True,
              help="Similarity above which pairs should almost always be candidates.")
@renamed_option("--values", "--hashes", type=click.IntRange(1, 4096), default=128, show_default=True,
                help="MinHash values a signature has (bands x rows may not exceed it).")
@click.option("--miss", type=click.FloatRange(0, 1, min_open=True), default=0.01, show_default=True,
              help="Allowed chance of missing a pair at HIGH.")
@click.option("--false-hit", type=click.FloatRange(0, 1, min_open=True), default=0.001, show_default=True,
              help="Allowed chance of a pair at LOW becoming a candidate.")
@click.option("--plot", type=click.Path(dir_okay=False, path_type=Path), default=Path("s-curve.png"),
              show_default=True, help="Where to save the S-curve.")
@click.option("--records", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="An `ID TEXT` file: show the banding `index` would choose for it, and its random pairs' "
              "similarities on the S-curve.")
def tune(low: float, high: float, values: int, miss: float, false_hit: float, plot: Path,
         records: Path | None) -> None:
    """Choose LSH bands x rows from two similarity targets.

    Solves 1-(1-s^r)^b directly: for each r, the fewest bands b catching
    HIGH with probability >= 1-MISS, checked against catching LOW with
    probability <= FALSE_HIT. Prints the table (s* is where each curve is
    steepest) and the choice, and saves the S-curve.

    With --records, a sample of the file's records gives the similarity of
    random pairs, and the command prints the banding `neardup index` would
    choose for the file (the lowest similarity caught with probability 0.99
    while a record expects at most 50 chance candidates and a report
    verifies at most a million chance pairs, or 10 a record) and draws
    that banding's curve over the random pairs' similarities.

    \b
    Examples:
      neardup tune --low 0.05 --high 0.5 --values 128
      neardup tune --records data/addresses.txt
    """
    from ..results import plots

    if low >= high:
        raise click.BadParameter("--low must be below --high")
    tuning = bands.tune(low, high, values, miss=miss, false_hit=false_hit)
    click.echo(f"{'rows':>5} {'bands':>6} {'values':>6} {'P(low)':>9} {'P(high)':>9} {'s*':>5}  meets")
    for row in tuning.table:
        if row.bands >= 1 and (row.band_rows <= 12 or row is tuning.choice):
            p_low, p_high = row.probability(low), row.probability(high)
            ok = p_low <= false_hit and p_high >= 1 - miss
            click.echo(f"{row.band_rows:>5} {row.bands:>6} {row.values:>6} {p_low:>9.5f} {p_high:>9.5f} "
                       f"{row.midpoint:>5.2f}  {'yes' if ok else 'no'}")
    c = tuning.choice
    chances = f"P(low)={c.probability(low):.5f}, P(high)={c.probability(high):.5f}"
    if tuning.meets:
        click.echo(f"choice: --bands {c.bands} --band-rows {c.band_rows} ({chances})")
    else:
        click.echo(f"no bands x rows within {values} values meets both targets; closest: --bands {c.bands} "
                   f"--band-rows {c.band_rows} ({chances}); meeting both needs {tuning.values_needed} values")
    agreeing = None
    if records is not None:
        data = choose_banding(records)
        c, agreeing = data.banding, data.agreeing
        click.echo(f"from the data ({data.sampled} of ~{data.records} records): --bands {c.bands} "
                   f"--band-rows {c.band_rows}: ~{data.expected:.1f} candidates per record by chance; pairs of "
                   f"similarity {data.catches:.2f} or more collide with probability 0.99")
    say(f"saved the S-curve to {plots.s_curve(plot, c, low, high, agreeing)}")
