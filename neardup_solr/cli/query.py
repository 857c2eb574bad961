"""The near duplicates of one text or record: ``query``."""

from __future__ import annotations

import json
from dataclasses import asdict

import click

from ..api import NearDuplicates
from ..errors import InputError, NeardupError
from ..files import STDOUT, atomic_output
from ..model import FALLBACK_CUT
from ..outputs import match_table, write_table
from ..solr import Solr
from .common import output_options, renamed_option, say, solr_connection, source_value


@click.command("query")
@click.argument("text", required=False)
@click.option("--id", "record_id", help="Look up the near duplicates of this indexed record instead of TEXT.")
@renamed_option("--cut", "--threshold", type=click.FloatRange(0, 1),
                help="Smallest similarity shown [default: the cut of the model the last report fitted, "
                f"else {FALLBACK_CUT}].")
@click.option("--limit", type=click.IntRange(1), default=10, show_default=True, help="Most matches shown.")
@click.option("--source", callback=source_value, metavar="NAME",
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
    with atomic_output(STDOUT) as out:
        if as_json:
            out.write(json.dumps({"query": {"id": record_id, "text": text},
                                  "matches": [asdict(m) | {"similarity": round(m.similarity, 4)}
                                              | ({} if m.probability is None else
                                                 {"probability": round(m.probability, 4)})
                                              for m in matches]},
                                 ensure_ascii=False) + "\n")
            return
        write_table(out, match_table(matches), out_format or "tsv")
    if not matches:
        say("no near duplicate found" + (f": no record reaches similarity {cut:.2f}" if cut is not None else ""))
