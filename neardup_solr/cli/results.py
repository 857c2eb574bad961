"""Results for people: clusters of the pairs, and the HTML page that shows them.

matplotlib (``plots``, the ``[plots]`` extra) is imported by ``html`` when it
draws: importing it costs every other command a second or more of start-up,
and without it only the drawing fails, in one line naming the extra.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click

from ..api import NearDuplicates
from ..results.clusters import cluster_pair_file, cluster_pairs, write_clusters, write_membership
from ..errors import NeardupError
from ..results.html import render, write_report
from ..match.summary import ReportSummary, summary_path
from ..results.pairs import Pair, read_pairs
from ..records.readers import RecordReader, read_texts
from ..index.schema import ID
from ..index.solr import Solr
from ..records.sources import RecordFile
from .common import (OUTPUT_PATH, checked_output, output_name, output_options, record_input, say, solr_connection,
                     solr_texts)
from .quality import model_plot_path


@click.command("clusters")
@click.argument("pairs", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.option("-o", "--out", type=OUTPUT_PATH, callback=checked_output(), required=True,
              help="The clusters file; `-` writes them to standard output.")
@click.option("--json", "as_json", is_flag=True, help="Write one JSON array instead of a table.")
@click.option("--membership", is_flag=True,
              help="Write each record's cluster instead, `id, cluster_id`, one row a record: every record of the "
              "index (or of --records), those without a near duplicate in a cluster of their own.")
@click.option("--records", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="With --membership: take every record's id from this records file, read as `index` reads it "
              "(its format and id column or field by the options below), instead of Solr.")
@record_input
@output_options
@solr_connection(lazy=True)
def clusters(pairs: Path, out: Path, as_json: bool, membership: bool, records: RecordFile | None,
             out_format: str | None,
             with_text: bool, solr: Callable[[], Solr]) -> None:
    """Group pairs into clusters: the records that are one thing.

    Each connected component of the pairs is a cluster, split where the
    pairs carry match probabilities (the default mode) so that its members
    are matches of each other (average linkage on their match weights);
    largest first. A cluster's id is its smallest member's id, so it stays
    put across runs and appends. The TSV has a header and `cluster_id<TAB>size<TAB>id,id,...`
    lines; an OUT named .csv or .jsonl (each also .gz) or .parquet, or
    --format, gives the same as CSV, JSON Lines or Parquet (members a list
    of strings). --with-text lists one member a row with its text (from
    Solr): `cluster_id, size, id, text`. --membership writes `id,
    cluster_id`, one row for every record (from Solr, or --records), a
    record without a near duplicate being a cluster of its own. PAIRS may
    be any pair file `report` writes.

    \b
    Examples:
      neardup clusters pairs.tsv -o clusters.tsv
      neardup clusters pairs.csv -o clusters.csv --with-text
      neardup clusters pairs.tsv -o membership.csv --membership
      neardup clusters pairs.tsv -o clusters.json --json
    """
    if as_json and (out_format or with_text or membership):
        raise click.UsageError("--json writes members only, as one array: leave out --format, --with-text and "
                               "--membership")
    if membership and with_text:
        raise click.UsageError("--membership writes ids and cluster ids only: leave out --with-text")
    if records is not None and not membership:
        raise click.UsageError("--records gives the records for --membership: add it, or leave out --records")
    if membership:
        ids = [r.id for r in RecordReader(records)] if records is not None \
            else [doc[ID] for doc in solr().iter_docs([ID])]
        found = cluster_pair_file(pairs, ids)
        rows = write_membership(out, found, format=out_format)
        say(f"wrote the clusters of {rows} records ({sum(c.size > 1 for c in found)} clusters of two or more) "
            f"to {output_name(out)}")
        return
    found = cluster_pair_file(pairs)
    write_clusters(out, found, json=as_json, format=out_format, texts=solr_texts(solr, None) if with_text else None)
    say(f"wrote {len(found)} clusters ({sum(c.size for c in found)} records) to {output_name(out)}")


# Pairs explained by asking Solr, when the pair file holds no explanations:
# those of the clusters the page shows first, a few requests each.
MAX_EXPLAINED = 2000


def _explained(nd: NearDuplicates, pairs: list[Pair], groups: list) -> list[Pair]:
    """``pairs`` with their explanations (``NearDuplicates.explain``), where
    the file had none and a model was kept with the index: those of the
    first clusters, up to ``MAX_EXPLAINED``."""
    if any(p.explanation for p in pairs) or not any(p.probability is not None for p in pairs):
        return pairs
    order = {member: n for n, cluster in enumerate(groups) for member in cluster.members}
    shown = sorted(range(len(pairs)), key=lambda i: order.get(pairs[i].a, len(order)))[:MAX_EXPLAINED]
    explained = list(pairs)
    for at in shown:
        try:
            why = nd.explain(pairs[at].a, pairs[at].b)
        except NeardupError:
            continue  # a record no longer indexed: shown without
        if why.probability is not None:
            explained[at] = pairs[at]._replace(explanation=why.brief())
    return explained


@click.command("html")
@click.argument("pairs", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.option("-o", "--out", type=OUTPUT_PATH, callback=checked_output(), required=True,
              help="The page; `-` writes it to standard output.")
@click.option("--records", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="Take the texts from this records file, read as `index` reads it (its format, id and text "
              "columns or fields by the options below), instead of Solr.")
@record_input
@click.option("--image", "images", multiple=True, type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="A PNG to show [default: PAIRS with .png and s-curve.png beside PAIRS, when present].")
@click.option("--title", default="Near-duplicate clusters", show_default=True)
@solr_connection(lazy=True)
def html(pairs: Path, out: Path, records: RecordFile | None, images: tuple[Path, ...], title: str,
         solr: Callable[[], Solr]) -> None:
    """One self-contained HTML page: every cluster's texts side by side,
    differing words highlighted, summary numbers and plots.

    \b
    Examples:
      neardup html pairs.tsv -o report.html
      neardup html pairs.tsv -o report.html --records data/addresses.txt
    """
    found = read_pairs(pairs)
    groups = cluster_pairs(found)
    wanted = {member for cluster in groups for member in cluster.members}
    if records is not None:
        texts = read_texts(records, wanted)
        total = None
    else:
        connection = solr()
        texts = connection.texts(sorted(wanted))
        total = connection.count()
        found = _explained(NearDuplicates(connection), found, groups)
    about = ReportSummary.read(summary_path(pairs))
    summary: dict = {} if total is None else {"records": total}
    if about is not None and about.estimated is not None:
        summary |= {"cut": "none" if about.cut is None else f"{about.cut:.2f}",
                    "estimated precision": f"{about.estimated.precision:.3f}",
                    "estimated recall": f"{about.estimated.recall:.3f}",
                    **({"estimates": about.caveat} if about.caveat else {}),
                    "candidates": about.candidates}
        if not images:
            from ..results import plots

            plots.model_histogram(model_plot_path(pairs), about)
    shown = images or (pairs.with_suffix(".png"), model_plot_path(pairs), pairs.parent / "s-curve.png")
    page = render(groups, texts, found, title=title, images=[p for p in shown if p.is_file()],
                  summary=summary or None)
    write_report(out, page)
    say(f"wrote {output_name(out)} ({len(groups)} clusters)")
