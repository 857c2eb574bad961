"""Every near-duplicate pair of the index: ``report``, and its model's line."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click

from ..api import NearDuplicates
from ..match.candidates import SHINGLES
from ..lsh.bands import MAX_BUCKET
from ..errors import LeanIndex, NeardupError, TooFewSignatures
from ..files import is_stdout
from ..results.labels import read_labels
from ..results.outputs import check_format
from ..results.clusters import Entities, write_membership
from ..results.pairs import write_pairs
from ..index.solr import Solr
from ..index.state import IndexSettings
from ..fields.model import DOUBTED
from ..match.summary import ReportSummary, summary_path
from .common import (OUTPUT_PATH, bar_progress, checked_output, output_name, output_options, progress, quiet_option,
                     renamed_option, say, solr_connection, solr_texts)


@click.command("report")
@click.argument("out", type=OUTPUT_PATH, callback=checked_output(summary_path))
@click.option("--lsh", "mode", flag_value="lsh", default=True,
              help="The default: LSH band candidates, soft weighted-cosine verification.")
@click.option("--shingles", "mode", flag_value="shingles", help="Reference: candidates share word 3-shingles.")
@click.option("--minhash", "mode", flag_value="minhash", help="Reference: candidates share MinHash values.")
@renamed_option("--cut", "--threshold", type=click.FloatRange(0, 1),
                help="A fixed smallest similarity instead of the fitted model's cut (default mode).")
@click.option("--max-dist", type=click.IntRange(0), default=2, show_default=True,
              help="Largest word edit distance reported (reference modes).")
@renamed_option("--minhash-values", "--signatures", type=click.IntRange(1, 1024),
                default=IndexSettings.minhash_values, show_default=True, help="MinHash values compared (--minhash).")
@renamed_option("--candidates", "--rows", type=click.IntRange(1), default=SHINGLES.per_record, show_default=True,
                help="Candidates verified per record (reference modes).")
@click.option("--max-bucket", type=click.IntRange(2), default=MAX_BUCKET, show_default=True,
              help="Skip band keys held by more records than this (default mode).")
@click.option("--labels", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="A labels file (`neardup serve --labels`: `id_a<TAB>id_b<TAB>same|different`): its pairs "
                   "sharpen the fitted model (default mode).")
@click.option("--link", is_flag=True, help="Only pairs across sources (`index --source`); the model is fitted to "
              "the candidates across sources alone (default mode).")
@click.option("--explain", is_flag=True, help="Add why each pair has its probability (an `explanation` column: "
              "the prior and each field's level and weight, or a text's similarity and numbers; default mode).")
@click.option("--as-text", is_flag=True, help="Records of fields (a table's columns): compare each as one text, "
              "its values joined, as records of one text are (default mode).")
@click.option("--one-to-one", is_flag=True, help="With --link: at most one partner for each record in each other "
              "source, its most probable one (a stable assignment).")
@click.option("--entities", is_flag=True, help="Write each record's entity instead of pairs: `id, cluster_id`, "
              "every record once (an entity of 500 records is 500 rows, not 124,750 pairs), the clusters of the "
              "pairs split so that members are matches of each other (default mode).")
@output_options
@solr_connection
@quiet_option
def report(out: Path, mode: str, cut: float | None, max_dist: int, minhash_values: int, candidates: int,
           max_bucket: int,
           labels: Path | None, link: bool, explain: bool, as_text: bool, one_to_one: bool, entities: bool,
           out_format: str | None, with_text: bool, solr: Solr, quiet: bool) -> None:
    """Write every near-duplicate pair to OUT.

    Lines are `id<TAB>neighbour<TAB>word_edit_distance`, plus
    `<TAB>similarity<TAB>probability` in the default mode. An OUT named .csv
    or .jsonl (each also .gz) or .parquet, or --format, gives CSV (a header
    `id_a,id_b,distance,similarity,probability`), JSON Lines (one object a
    pair) or Parquet (the CSV columns; needs `pip install
    'neardup-solr[parquet]'`) instead; --with-text adds both records' texts (`text_a`, `text_b`;
    TSV then has a header too). When the records have sources (`index
    --source`), each id is two columns, `source_a,id_a,source_b,id_b`, and
    TSV has that header too.

    The default mode finds, for all records at once, those sharing an LSH
    band key of the repaired text's character 3-grams (no blocking), scores
    each pair by a soft, rarity- and position-weighted cosine similarity,
    and fits a two-class model (matches and non-matches) to the scores of
    all candidates, without labels (--labels: pairs a person labeled
    sharpen it). It keeps the pairs whose probability of
    being a match is at least 0.5 (or, with --cut, whose similarity
    reaches it), prints the cut and the estimated precision and recall, and
    keeps the model with the index for `query` and beside OUT (OUT with
    .model.json, read by `evaluate` and `html`). The reference modes (--shingles, --minhash) ask Solr
    for each record's best CANDIDATES candidates with the same first word by
    values shared, and keep those within MAX_DIST words.

    Records of fields (a table's columns) are compared field by field
    instead, by a model fitted to them; the pairs kept are the candidates
    whose two records are in one entity (as --entities writes them), so a
    pair under 0.5 that its entity holds is kept and one over 0.5 that the
    entities split apart is not (with --link: the pairs of 0.5 or more).

    --link keeps only the pairs of records of different sources, and fits
    the model to the candidates across sources alone; --one-to-one then
    keeps for each record at most its most probable partner in each other
    source (pairs taken most probable first, each unless one of its records
    is taken already).

    --entities writes each record's entity instead (`id, cluster_id`, every
    record once, in OUT's format): the clusters of the pairs, split so that
    members are matches of each other, gaining the matches that
    transitivity implies; for records of fields with the estimated
    precision and recall of the entities taken as pairs.

    \b
    Examples:
      neardup report pairs.tsv
      neardup report pairs.csv --with-text
      neardup report pairs.jsonl.gz
      neardup report pairs.parquet
      neardup report --cut 0.6 pairs.tsv
      neardup report --labels labels.tsv pairs.tsv
      neardup report --link links.csv
      neardup report --link --one-to-one links.csv
      neardup report --entities entities.csv
      neardup report --shingles --max-dist 2 out.tsv
      neardup report --minhash --minhash-values 20 --max-dist 2 out.tsv
    """
    if mode != "lsh" and (link or one_to_one):
        raise click.UsageError(f"--link and --one-to-one are for the default mode, not --{mode}")
    if one_to_one and not link:
        raise click.UsageError("--one-to-one assigns partners across sources: it needs --link")
    if entities and (mode != "lsh" or one_to_one or cut is not None or explain or with_text):
        raise click.UsageError("--entities writes each record's entity by the default mode's model: it goes with "
                               "none of --shingles, --minhash, --one-to-one, --cut, --explain, --with-text")
    check_format(out, out_format)
    started = time.monotonic()
    if solr.count() == 0:
        raise NeardupError(f"the index at {solr.url} holds no records, so it has no pairs",
                           hint="index records first: `neardup index FILE`")
    nd = NearDuplicates(solr)
    if mode == "lsh":
        settings = nd.settings
        fielded = settings.fielded and not as_text
        with (progress(solr.count(), "rec", quiet, "reading records") if fielded else
              progress(settings.bands, "band", quiet, "colliding bands")) as bar:
            told = bar_progress(bar, {"verifying candidates": "pair"})
            if entities:
                found = nd.entities(link=link, max_bucket=max_bucket, labels=_labels(labels), as_text=as_text,
                                    progress=told, warn=_in_option_words)
                count = write_membership(out, found.clusters, out_format)
            else:
                found = nd.pairs(link=link, one_to_one=one_to_one, cut=cut, max_bucket=max_bucket,
                                 labels=_labels(labels), as_text=as_text, explain=explain, progress=told,
                                 warn=_in_option_words)
                count = write_pairs(out, found, out_format, texts=solr_texts(lambda: solr, bar) if with_text else None)
        about = found.summary
        if not is_stdout(out):  # pairs piped on: the model is kept with the index, and said below
            about.write(summary_path(out))
        say(model_line(about, identical_only=settings.bands == 1))
        if entities:
            say(entities_line(found))
            say(f"wrote {count} records' entities to {output_name(out)} in {time.monotonic() - started:.1f} s")
            return
    else:
        with progress(solr.count(), "rec", quiet, f"searching ({mode})") as bar, in_option_words():
            if mode == "shingles":
                found = nd.shingle_pairs(max_dist=max_dist, per_record=candidates, progress=bar_progress(bar))
            else:
                found = nd.minhash_pairs(max_dist=max_dist, per_record=candidates, minhash_values=minhash_values,
                                         progress=bar_progress(bar))
            count = write_pairs(out, found, out_format, texts=solr_texts(lambda: solr, bar) if with_text else None)
    say(f"wrote {count} pairs to {output_name(out)} in {time.monotonic() - started:.1f} s")


def _in_option_words(warning: str) -> None:
    """Say the library's warning, naming the option that changes what it tells of."""
    if warning.startswith("skipped") and "band keys" in warning:
        warning += " (--max-bucket)"
    say(warning)


def _labels(path: Path | None) -> dict[frozenset[str], bool] | None:
    """The labels file's labels; a bad line is said and skipped, the others count."""
    if path is None:
        return None
    return read_labels(path, on_bad=lambda bad: say(f"skipped {bad}"))


@contextmanager
def in_option_words() -> Iterator[None]:
    """The library's errors whose remedy is one of this command line's
    options, with their hint (and message) in the options' words."""
    try:
        yield
    except TooFewSignatures as err:
        raise NeardupError(err.message, hint=f"index again with --minhash-values {err.asked}") from None
    except LeanIndex as err:
        raise NeardupError(f"the index has no fields for --{err.mode} (it was built lean, as indexes are by "
                           "default)", hint="index again with --reference") from None


def model_line(about: ReportSummary, identical_only: bool = False) -> str:
    """One line on the match model of a report's summary; ``identical_only``:
    the index's banding is one band of every MinHash value, which only
    records of the same text share."""
    estimated = about.estimated
    if about.fields is not None:
        return _fields_line(about, identical_only)
    if estimated is None:
        return (f"model: {about.candidates} candidate pairs are too few to fit; "
                f"fixed cut {about.cut:.2f}, no probabilities")
    if not about.told and not about.forced:
        return (f"model: no class of near duplicates stands out among the similarities of {about.candidates} "
                "candidate pairs, so only copies are kept (similarity 0.99 or more) and precision and recall cannot "
                "be estimated (give a fixed cut, label some pairs, or give the records' fields)")
    if about.forced:
        how = f"fixed cut {about.cut:.2f} (the model's: {_cut_text(about.model_cut)})"
    else:
        levels = "".join(f"; {name}: {_cut_text(cut, 'none')}" for name, cut in about.level_cuts)
        how = f"cut {_cut_text(about.cut)} (match probability >= 0.5{levels})"
    sharpened = (f"; sharpened by {about.labeled_same} pairs labeled the same, {about.labeled_different} different"
                 if about.labeled_same + about.labeled_different else "")
    return (f"model: {how}; estimated {estimated.true_pairs:.0f} true pairs, {estimated.proposed:.1%} of them "
            f"among {about.candidates} candidates; estimated precision {estimated.precision:.3f}, "
            f"recall {estimated.recall:.3f}{sharpened}")


def entities_line(found: Entities) -> str:
    """What the report says of its entities: how many, and their pairs' estimates where it has them."""
    many = [c for c in found.clusters if c.size > 1]
    estimated = found.summary.entities
    caveat = found.summary.entities_caveat
    told = "" if estimated is None else (
        f"; as pairs ({estimated.pairs:.0f}), estimated precision {estimated.precision:.3f}, recall "
        f"{estimated.recall:.3f}" + (f" ({caveat})" if caveat else ""))
    return (f"entities: {sum(c.size for c in found.clusters)} records in {len(found.clusters)} entities, "
            f"{len(many)} of two records or more (the largest {max((c.size for c in many), default=1)}){told}")


def _fields_line(about: ReportSummary, identical_only: bool) -> str:
    fields, estimated = about.fields, about.estimated
    model = fields.model
    keys = ", ".join(fields.keys) or "none"
    together = [unit.name for unit in model.units if len(unit.fields) > 1]
    compared = sum(len(unit.fields) for unit in model.units)
    head = (f"model: {compared} fields compared one by one"
            + (f" ({', '.join(together)} together: they go together in the data)" if together else "")
            + f"; candidates from the LSH bands{' (one band: records of the same text only)' if identical_only else ''}"
            f" and the keys {keys}, estimated to miss {fields.missed:.1%} of the "
            "true pairs")
    if not fields.separated:
        return (f"{head}; the model could not tell matches from non-matches among {about.candidates} candidates "
                "(its estimates do not hold: check the fields, or label some pairs)")
    sharpened = (f"; sharpened by {about.labeled_same} pairs labeled the same, {about.labeled_different} different"
                 if about.labeled_same + about.labeled_different else "")
    more = "more" if about.labeled_same + about.labeled_different else "some"
    if not fields.unsure:
        unsure = ""
    elif fields.hidden > fields.ambiguity:
        unsure = (f", both unsure: the candidates it scores between {DOUBTED:.0%} and 50% could hold {fields.hidden:.0%} "
                  f"more true pairs than it expects, and the recall may be lower by about as much (label {more} "
                  "pairs to sharpen it)")
    else:
        unsure = (f", both unsure: the model's expected errors among the candidates are {fields.ambiguity:.0%} of the "
                  f"matches it expects, and the estimates may be off by about as much (label {more} pairs to sharpen "
                  "it)")
    return (f"{head}; estimated {estimated.true_pairs:.0f} true pairs among {about.candidates} candidates; "
            f"estimated precision {estimated.precision:.3f}, recall {estimated.recall:.3f}{unsure}{sharpened}")


def _cut_text(cut: float | None, none: str = "none: no match class in the data") -> str:
    return none if cut is None else f"{cut:.2f}"
