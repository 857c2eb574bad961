"""The near duplicates of one text or record: ``query``."""

from __future__ import annotations

import json
from dataclasses import asdict

import click

from ..api import NearDuplicates
from ..errors import InputError, NeardupError
from ..files import STDOUT, atomic_output
from ..match.text_model import FALLBACK_CUT
from ..results.outputs import match_table, write_table
from ..records.record import Record
from ..index.solr import Solr
from .common import output_options, renamed_option, say, solr_connection, source_value


@click.command("query")
@click.argument("text", required=False)
@click.option("--id", "record_id", help="Look up the near duplicates of this indexed record instead of TEXT.")
@click.option("--field", "given_fields", multiple=True, metavar="NAME=VALUE",
              help="Look up a record of fields instead of TEXT, compared field by field as a report compares them "
              "(repeat for each field).")
@renamed_option("--cut", "--threshold", type=click.FloatRange(0, 1),
                help="Smallest similarity shown [default: the cut of the model the last report fitted, "
                f"else {FALLBACK_CUT}].")
@click.option("--limit", type=click.IntRange(1), default=10, show_default=True, help="Most matches shown.")
@click.option("--source", callback=source_value, metavar="NAME",
              help="Only matches of this source (`index --source`). [default: every record]")
@click.option("--json", "as_json", is_flag=True, help="One JSON object: the query and its matches.")
@output_options(texts=False, files=False)
@solr_connection
def query(text: str | None, record_id: str | None, given_fields: tuple[str, ...], cut: float | None, limit: int,
          source: str, as_json: bool, out_format: str | None, solr: Solr) -> None:
    """Near duplicates of TEXT (not indexed) or of an indexed record, best first.

    Each match shows its similarity (the default mode's soft weighted cosine), its
    word edit distance, its id, its text and, once a report has fitted the
    match model, its probability of being a match, tab-separated. A record
    of fields (an indexed one, or --field NAME=VALUE ...) of an index of
    field records is compared field by field: its matches have no
    similarity, and their distance is how many fields differ. --format
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
      neardup query --field first_name=Ann --field last_name=Lee --field city=Paris
    """
    if sum((text is not None, record_id is not None, bool(given_fields))) != 1:
        raise click.UsageError("give one of TEXT, --id ID or --field NAME=VALUE")
    asked: str | dict[str, str] | Record | None = text
    if given_fields:
        pairs = [f.partition("=") for f in given_fields]
        if any(not sep or not name.strip() for name, sep, _ in pairs):
            raise click.UsageError("--field takes NAME=VALUE")
        asked = {name.strip(): value for name, _, value in pairs}
    if as_json and out_format:
        raise click.UsageError("give either --json or --format")
    nd = NearDuplicates(solr)
    excluded = None
    if record_id is not None:
        record = nd.record(record_id)
        asked, text, excluded = (record if record.fields else record.text), record.text, record.id
    try:
        matches = nd.query(asked, exclude=excluded, source=source, cut=cut, limit=limit)
    except InputError as err:  # the text given is a wrong argument value (exit 1), not an unusable file
        raise NeardupError(err.message, hint=err.hint) from None
    with atomic_output(STDOUT) as out:
        if as_json:
            query_shown = {"id": record_id, "text": text} if not given_fields else {"fields": asked}
            out.write(json.dumps({"query": query_shown,
                                  "matches": [asdict(m) | ({} if m.similarity is None
                                                           else {"similarity": round(m.similarity, 4)})
                                              | ({} if m.probability is None else
                                                 {"probability": round(m.probability, 4)})
                                              for m in matches]},
                                 ensure_ascii=False) + "\n")
            return
        write_table(out, match_table(matches), out_format or "tsv")
    if not matches:
        say("no near duplicate found" + (f": no record reaches similarity {cut:.2f}" if cut is not None else ""))
