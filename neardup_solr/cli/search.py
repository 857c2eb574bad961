"""Indexing records and finding their near duplicates."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path

import click

from ..api import NearDuplicates
from ..bands import MAX_BANDS, Choice
from ..candidates import SHINGLES
from ..collisions import MAX_BUCKET
from ..indexer import BATCH_SIZE
from ..labels import read_labels
from ..model import FALLBACK_CUT
from ..errors import InputError, LeanIndex, NeardupError, TooFewSignatures
from ..files import is_stdout
from ..outputs import check_format, match_table, pair_table, write_table
from ..pairs import write_pairs
from ..record import checked_source
from ..records import RecordReader
from ..solr import Solr
from ..sources import RecordFile
from ..state import LSH_SHINGLES, IndexSettings
from ..summary import ReportSummary, summary_path
from .common import (EXIT_SKIPPED_LINES, OUTPUT_PATH, bar_progress, checked_output, output_name, output_options, progress,
                     quiet_option, reading_progress, record_input, renamed_option, say, solr_connection,
                     solr_texts)


@click.command("index")
@click.argument("records", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path))
# Standard input is read twice to check it first (--strict), to find the
# new records' pairs (--append), or to sample it for the bands.
@record_input(replay_if=lambda o: o["strict"] or o["append"] or (o["bands"] is None and o["band_rows"] is None))
@solr_connection
@click.option("--append", is_flag=True, help="Add to the index instead of replacing it, and report the new "
              "records' near duplicates among everything indexed.")
@click.option("--source", default="", callback=lambda _ctx, _param, value: _source(value), metavar="NAME",
              help="The source the records belong to (1-64 of A-Z a-z 0-9 . _ : -): ids need only be unique "
              "within a source, pair files name it, and `report --link` links the sources. [default: none]")
@click.option("--pairs", "pairs_out", type=OUTPUT_PATH, callback=checked_output(),
              help="With --append: write the new records' pairs here instead of to stdout (TSV, or CSV or JSON "
              "Lines by the name; `-` is stdout).")
@click.option("--no-pairs", is_flag=True, help="With --append: add the records only, without looking up their "
              "pairs (one or two queries a record), as when `report` follows.")
@renamed_option("--cut", "--threshold", type=click.FloatRange(0, 1),
                help="With --append: smallest similarity reported [default: the cut of the model the last "
                f"report fitted, else {FALLBACK_CUT}].")
@renamed_option("--minhash-values", "--signatures", type=click.IntRange(1, 1024),
                default=IndexSettings.minhash_values, show_default=True,
                help="MinHash values of word shingles per record (--minhash).")
@click.option("--bands", type=click.IntRange(1, MAX_BANDS),
              help="LSH bands per record (default mode) [default: chosen from a sample of the records].")
@click.option("--band-rows", type=click.IntRange(1, 64),
              help="MinHash values per LSH band [default: chosen with --bands].")
@click.option("--lsh-shingles", type=click.Choice(LSH_SHINGLES), default=IndexSettings.lsh_shingles,
              show_default=True, help="LSH over character 3-grams (short records) or word 3-shingles (documents).")
@click.option("--lean", is_flag=True, help="Only the default mode's fields, not the reference modes' (faster, "
              "smaller; for large collections).")
@click.option("--batch-size", type=click.IntRange(1), default=BATCH_SIZE, show_default=True)
@click.option("--strict", is_flag=True, help="Fail at the first bad line instead of skipping it.")
@quiet_option
def index(records: RecordFile, solr: Solr, append: bool, source: str, pairs_out: Path | None, no_pairs: bool,
          cut: float | None,
          minhash_values: int, bands: int | None, band_rows: int | None, lsh_shingles: str, lean: bool,
          batch_size: int, strict: bool, quiet: bool) -> None:
    """Index RECORDS, replacing what the index held.

    RECORDS is a file of `ID TEXT` lines, CSV or TSV with a header row, or
    JSON Lines, each maybe gzipped, or Parquet; the format comes from the
    name (.csv, .tsv, .jsonl, each also .gz; .parquet) or --input-format.
    `-` reads standard input (`ID TEXT` unless --input-format says otherwise; not
    Parquet). A CSV or Parquet record's id is in the column --id-column
    names (default `id`) and its text is the columns --text-columns names,
    joined in that order (default: every other column; Parquet numbers,
    dates and booleans as pyarrow writes them to CSV); JSON Lines likewise
    with --id-field and --text-fields. Parquet needs pyarrow (`pip install
    'neardup-solr[parquet]'`; without it, exit code 7).

    The LSH banding (bands x rows) is chosen from a sample of the records:
    the one catching the lowest similarity with probability 0.99 while a
    record expects at most 50 candidates by chance and a report verifies
    at most a million chance pairs (or 10 a record, past 200,000 records;
    see `neardup tune --records`). It is printed and kept with the
    index; --bands and --band-rows force one.

    The records go into a new core (a new collection on SolrCloud) beside
    the index, which keeps serving as it was until all are in and is then
    swapped out and removed; a run that fails, is interrupted or is killed
    leaves it untouched. A record whose id is indexed already replaces it.
    With --append the index keeps what it held (and the settings it was
    built with), records are added in place, and the new records' near
    duplicates are written as pairs, like `report` does.

    Bad lines (rows, in CSV, TSV and Parquet) are reported with file and line number
    and skipped, with a count at the end and exit code 6; the valid records
    are all indexed. A file without one valid record fails (exit code 4)
    and leaves the index as it was. With --strict the file is checked first and the first
    bad line fails the command (exit code 4) before the index is touched;
    so does a header without the id column. On a terminal a bar shows the
    percent done and the time left, from the bytes read.

    To link two tables, index each as a source of its own (--source, the
    second with --append and its own columns) and ask `report --link`.

    \b
    Examples:
      neardup index data/addresses.txt
      neardup index customers.csv --id-column customer_id --text-columns name,street,city
      neardup index products.jsonl.gz --id-field sku --text-fields title,brand
      neardup index products.parquet --id-column sku --text-columns title,brand
      zcat export.tsv.gz | neardup index - --input-format tsv
      neardup index --lean big.txt
      neardup index --bands 21 --band-rows 6 big.txt
      neardup index --append new.txt --pairs new-pairs.csv
      neardup index ours.csv --source ours --id-column sku
      neardup index --append theirs.jsonl --source theirs --id-field code --text-fields title,brand --no-pairs
    """
    if no_pairs and (not append or pairs_out is not None):
        raise click.UsageError("--no-pairs is for --append, and leaves out the pairs --pairs would write")
    if pairs_out is not None:
        check_format(pairs_out)
    if strict:
        for _ in RecordReader(records, strict=True):
            pass
    nd = NearDuplicates(solr)
    reader = RecordReader(records, on_bad=lambda bad: say(f"skipped {bad}")).start()
    started = time.monotonic()
    with reading_progress(reader, quiet) as bar:
        if append:
            count = nd.add(reader, source=source, batch_size=batch_size, progress=bar_progress(bar))
        else:
            count = nd.index(reader, source=source, bands=bands, band_rows=band_rows, minhash_values=minhash_values,
                             lsh_shingles=lsh_shingles, reference=not lean, batch_size=batch_size,
                             progress=bar_progress(bar), chosen=_say_chosen)
    say(f"indexed {count} records from {records} in {time.monotonic() - started:.1f} s"
        + (f"; skipped {len(reader.bad)} bad {reader.unit}s" if reader.bad else ""))
    if append and not no_pairs:
        with progress(count, "rec", quiet, "finding their duplicates") as bar:
            found = nd.pairs_of(RecordReader(records), source=source, cut=cut, progress=bar_progress(bar))
        if pairs_out is None:
            write_table(sys.stdout, pair_table(found), "tsv")
        else:
            write_pairs(pairs_out, found)
        say(f"{len(found)} pairs with the new records")
    if reader.bad:
        sys.exit(EXIT_SKIPPED_LINES)


def _say_chosen(choice: Choice) -> None:
    banding = choice.banding
    say(f"bands: {banding.bands} x {banding.band_rows}, chosen from {choice.sampled} of ~{choice.records} records: "
        f"~{choice.expected:.1f} candidates per record by chance; pairs of similarity "
        f"{choice.catches:.2f} or more collide with probability 0.99"
        + ("" if choice.fits else " (no banding keeps the chance candidates within the budget)"))


def _source(value: str) -> str:
    """A --source value, checked by the source rule (a usage error, exit 2)."""
    try:
        return checked_source(value)
    except NeardupError as err:
        raise click.BadParameter(err.message, param_hint="--source") from None


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
@click.option("--one-to-one", is_flag=True, help="With --link: at most one partner for each record in each other "
              "source, its most probable one (a stable assignment).")
@output_options
@solr_connection
@quiet_option
def report(out: Path, mode: str, cut: float | None, max_dist: int, minhash_values: int, candidates: int,
           max_bucket: int,
           labels: Path | None, link: bool, one_to_one: bool, out_format: str | None, with_text: bool, solr: Solr,
           quiet: bool) -> None:
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

    --link keeps only the pairs of records of different sources, and fits
    the model to the candidates across sources alone; --one-to-one then
    keeps for each record at most its most probable partner in each other
    source (pairs taken most probable first, each unless one of its records
    is taken already).

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
      neardup report --shingles --max-dist 2 out.tsv
      neardup report --minhash --minhash-values 20 --max-dist 2 out.tsv
    """
    if mode != "lsh" and (link or one_to_one):
        raise click.UsageError(f"--link and --one-to-one are for the default mode, not --{mode}")
    if one_to_one and not link:
        raise click.UsageError("--one-to-one assigns partners across sources: it needs --link")
    check_format(out, out_format)
    started = time.monotonic()
    nd = NearDuplicates(solr)
    if mode == "lsh":
        with progress(nd.settings.bands, "band", quiet, "colliding bands") as bar:
            verified = nd.pairs(link=link, one_to_one=one_to_one, cut=cut, max_bucket=max_bucket, labels=_labels(labels),
                                progress=bar_progress(bar, {"verifying candidates": "pair"}), warn=say)
            count = write_pairs(out, verified, out_format, texts=solr_texts(lambda: solr, bar) if with_text else None)
        about = ReportSummary.of(verified.model, verified.cut, forced=cut is not None, proposed=verified.proposed)
        if not is_stdout(out):  # pairs piped on: the model is kept with the index, and said below
            about.write(summary_path(out))
        say(model_line(about))
    else:
        with progress(solr.count(), "rec", quiet, f"searching ({mode})") as bar, in_option_words():
            if mode == "shingles":
                found = nd.shingle_pairs(max_dist=max_dist, per_record=candidates, progress=bar_progress(bar))
            else:
                found = nd.minhash_pairs(max_dist=max_dist, per_record=candidates, minhash_values=minhash_values,
                                         progress=bar_progress(bar))
            count = write_pairs(out, found, out_format, texts=solr_texts(lambda: solr, bar) if with_text else None)
    say(f"wrote {count} pairs to {output_name(out)} in {time.monotonic() - started:.1f} s")


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
        raise NeardupError(f"the index has no fields for --{err.mode} (it was built with --lean)",
                           hint="index again without --lean") from None


def model_line(about: ReportSummary) -> str:
    """One line on the match model of a report's summary."""
    estimated = about.estimated
    if estimated is None:
        return (f"model: {about.candidates} candidate pairs are too few to fit; "
                f"fixed cut {about.cut:.2f}, no probabilities")
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


def _cut_text(cut: float | None, none: str = "none: no match class in the data") -> str:
    return none if cut is None else f"{cut:.2f}"


@click.command("query")
@click.argument("text", required=False)
@click.option("--id", "record_id", help="Look up the near duplicates of this indexed record instead of TEXT.")
@renamed_option("--cut", "--threshold", type=click.FloatRange(0, 1),
                help="Smallest similarity shown [default: the cut of the model the last report fitted, "
                f"else {FALLBACK_CUT}].")
@click.option("--limit", type=click.IntRange(1), default=10, show_default=True, help="Most matches shown.")
@click.option("--source", default="", callback=lambda _ctx, _param, value: _source(value), metavar="NAME",
              help="Only matches of this source (`index --source`). [default: every record]")
@click.option("--json", "as_json", is_flag=True, help="One JSON object: the query and its matches.")
@output_options(texts=False, files=False)
@solr_connection
def query(text: str | None, record_id: str | None, cut: float | None, limit: int, source: str,
          as_json: bool, out_format: str | None, solr: Solr) -> None:
    """Near duplicates of TEXT (not indexed) or of an indexed record, best first.

    Each match shows its similarity (the default mode's soft weighted cosine), its
    word edit distance, its id, its text and, once a report has fitted the
    match model, its probability of being a match, tab-separated; --format
    csv or jsonl writes them as CSV or JSON Lines. Exits 0 even when nothing
    matches; the output then has no matches. A record of a source (`index
    --source`) is SOURCE/ID, in --id and in the matches; --source keeps the
    matches of one source.

    \b
    Examples:
      neardup query "Art's Deli 12224 Ventura Blvd. Studio City"
      neardup query "Art's Deli 12224 Ventura Blvd. Studio City" --format jsonl
      neardup query --id 536 --json
      neardup query --id fodors/3 --source zagats
    """
    if (text is None) == (record_id is None):
        raise click.UsageError("give either TEXT or --id ID")
    if as_json and out_format:
        raise click.UsageError("give either --json or --format")
    nd = NearDuplicates(solr)
    if record_id is not None:
        text = nd.text(record_id)
    try:
        matches = nd.query(text, exclude=record_id, source=source, cut=cut, limit=limit)
    except InputError as err:  # the text given is a wrong argument value (exit 1), not an unusable file
        raise NeardupError(err.message, hint=err.hint) from None
    if as_json:
        click.echo(json.dumps({"query": {"id": record_id, "text": text},
                               "matches": [asdict(m) | {"similarity": round(m.similarity, 4)}
                                           | ({} if m.probability is None else {"probability": round(m.probability, 4)})
                                           for m in matches]},
                              ensure_ascii=False))
        return
    write_table(sys.stdout, match_table(matches), out_format or "tsv")
    if not matches:
        say("no near duplicate found" + (f": no record reaches similarity {cut:.2f}" if cut is not None else ""))


@click.command("delete")
@click.argument("ids", nargs=-1, required=True)
@solr_connection
def delete(ids: tuple[str, ...], solr: Solr) -> None:
    """Delete records by id and commit; says how many were there.

    \b
    Example:
      neardup delete 17 536
    """
    present = NearDuplicates(solr).delete(ids)
    missing = [i for i in ids if i not in present]
    say(f"deleted {len(present)} records" + (f"; not in the index: {', '.join(missing)}" if missing else ""))
