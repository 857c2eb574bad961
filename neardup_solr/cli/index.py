"""Putting records into the index (``index``) and taking them out (``delete``)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from ..api import NearDuplicates
from ..lsh.bands import MAX_BANDS, Choice
from ..files import STDOUT, atomic_output
from ..index.writer import BATCH_SIZE
from ..match.text_model import FALLBACK_CUT
from ..results.outputs import check_format, pair_table, write_table
from ..results.pairs import write_pairs
from ..records.readers import RecordReader
from ..index.solr import Solr
from ..records.sources import RecordFile
from ..index.state import LSH_SHINGLES, IndexSettings
from .common import (EXIT_SKIPPED_LINES, OUTPUT_PATH, bar_progress, checked_output, progress, quiet_option,
                     reading_progress, record_input, renamed_option, say, solr_connection, source_value)

# The reference workflow's name for this command, whose report modes read the reference fields.
REFERENCE_NAME = "index-restaurants"


@click.command("index")
@click.argument("records", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path))
# Standard input is read twice to check it first (--strict), to find the
# new records' pairs (--append), or to sample it for the bands.
@record_input(replay_if=lambda o: o["strict"] or o["append"] or (o["bands"] is None and o["band_rows"] is None),
              renamed_format=True)
@solr_connection
@click.option("--append", is_flag=True, help="Add to the index instead of replacing it, and report the new "
              "records' near duplicates among everything indexed.")
@click.option("--source", callback=source_value, metavar="NAME",
              help="The source the records belong to (1-64 of A-Z a-z 0-9 . _ : -, starting with a letter or "
              "digit): ids need only be unique within a source, pair files name it, and `report --link` links the "
              "sources. [default: none]")
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
@click.option("--reference/--lean", default=None,
              help="Also the reference modes' fields (--shingles, --minhash), or only the default mode's (faster, "
              "smaller) [default: --lean; --reference as index-restaurants, the reference workflow's name].")
@click.option("--batch-size", type=click.IntRange(1), default=BATCH_SIZE, show_default=True)
@click.option("--strict", is_flag=True, help="Fail at the first bad line instead of skipping it.")
@quiet_option
def index(records: RecordFile, solr: Solr, append: bool, source: str, pairs_out: Path | None, no_pairs: bool,
          cut: float | None,
          minhash_values: int, bands: int | None, band_rows: int | None, lsh_shingles: str, reference: bool | None,
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
    Their columns are compared field by field by name. Columns named
    otherwise than the index's fields, as many and in the same order
    (--text-columns), are paired with them by position, and the command
    says so; or name each column's field: --text-columns given=first,...

    \b
    Examples:
      neardup index data/addresses.txt
      neardup index customers.csv --id-column customer_id --text-columns name,street,city
      neardup index products.jsonl.gz --id-field sku --text-fields title,brand
      neardup index products.parquet --id-column sku --text-columns title,brand
      zcat export.tsv.gz | neardup index - --input-format tsv
      neardup index data/addresses.txt --reference    # the reference modes kept usable
      neardup index --bands 21 --band-rows 6 big.txt
      neardup index --append new.txt --pairs new-pairs.csv
      neardup index ours.csv --source ours --id-column sku
      neardup index --append theirs.jsonl --source theirs --id-field code --text-fields title,brand --no-pairs
      neardup index --append b.csv --source b --text-columns given=first,family=last,town=city --no-pairs
    """
    if no_pairs and (not append or pairs_out is not None):
        raise click.UsageError("--no-pairs is for --append, and leaves out the pairs --pairs would write")
    if pairs_out is not None:
        check_format(pairs_out)
    if strict:
        for _ in RecordReader(records, strict=True):
            pass
    if reference is None:
        reference = click.get_current_context().info_name == REFERENCE_NAME
    nd = NearDuplicates(solr)
    reader = RecordReader(records, on_bad=lambda bad: say(f"skipped {bad}"), on_note=say).start()
    started = time.monotonic()
    with reading_progress(reader, quiet) as bar:
        if append:
            count = nd.add(reader, source=source, batch_size=batch_size, progress=bar_progress(bar), warn=say)
        else:
            count = nd.index(reader, source=source, bands=bands, band_rows=band_rows, minhash_values=minhash_values,
                             lsh_shingles=lsh_shingles, reference=reference, batch_size=batch_size,
                             progress=bar_progress(bar), on_banding=_say_banding)
    say(f"indexed {count} records from {records} in {time.monotonic() - started:.1f} s"
        + (f"; skipped {len(reader.bad)} bad {reader.unit}s" if reader.bad else ""))
    if append and not no_pairs:
        with progress(count, "rec", quiet, "finding their duplicates") as bar:
            found = nd.pairs_of(RecordReader(records), source=source, cut=cut, progress=bar_progress(bar))
        if pairs_out is None:
            with atomic_output(STDOUT) as out:
                write_table(out, pair_table(found), "tsv")
        else:
            write_pairs(pairs_out, found)
        say(f"{len(found)} pairs with the new records")
    if reader.bad:
        sys.exit(EXIT_SKIPPED_LINES)


def _say_banding(choice: Choice) -> None:
    banding = choice.banding
    say(f"bands: {banding.bands} x {banding.band_rows}, chosen from {choice.sampled} of ~{choice.records} records: "
        f"~{choice.expected:.1f} candidates per record by chance; pairs of similarity "
        f"{choice.catches:.2f} or more collide with probability 0.99"
        + ("" if choice.fits else " (no banding keeps the chance candidates within the budget)"))


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
