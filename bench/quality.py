"""Detection quality with every default, on every labeled data set we have.

``python -m bench.quality [--sets a,b,...] [--out FILE]`` starts a
local Solr (its own port and a temporary data folder, as ``bench.run`` does),
and for each data set makes a fresh core, runs the command line as users do,
in child processes and with no option changed::

    neardup index RECORDS
    neardup report PAIRS

then scores the pairs against the set's true pairs (``neardup_solr.results.evaluate``,
what ``neardup evaluate`` prints) and writes a table: records, true pairs,
pairs, precision, recall, F1, the report's own estimates of precision and
recall beside the measured ones (from the model file the report writes
beside the pairs, where there is one), the share of true pairs that became
LSH candidates, and the seconds of index + report.

The data sets (``--sets``, all by default):

- ``restaurants-reference``: the raw Fodor's and Zagat's guide files, not
  shipped (their licence is not known), in the folder named by
  ``NEARDUP_RESTAURANTS``, made into records by ``neardup
  prepare-restaurants``; 864 records, 112 true pairs;
- ``restaurants-pypi``: the same restaurants from PyPI (``neardup datasets
  restaurants``), with that copy's own ids and matches;
- ``records-light``, ``records-heavy``, ``records-words``: ``bench.generate``
  business records at its three noise levels (20,000 records each);
- ``people``: ``bench.people`` person records (10,000);
- ``documents``: ``bench.documents`` documents of 100-600 words (2,000);
- ``linked-light``, ``linked-light-one-to-one``: two sources to link
  (``bench.generate --two-sources``, 20,000 records each, half of them in
  a pair across the sources), each indexed as a source of its own
  (``neardup index A --source a``, ``neardup index --append B --source
  b``) and reported with ``--link`` (and ``--one-to-one``): the only sets
  run with options, those of linking;
- ``fields-DOMAIN-DIFFICULTY``: field records of ``dupehell``'s
  development domains (``bench.fields``) at ``medium`` and ``hell``,
  generated at size 5,000 (about 2,000-4,800 records of the domain's most
  frequent entity), indexed from Parquet with ``--id-column record_id``
  (the one option: where the id is) and every other column a field. The
  peers run on the same records in the same run: splink with one generic
  recipe, and exact keys (``bench.splink_peer``). Each field set is also
  reported as entities (``neardup report --entities``), scored pairwise
  against the connected components of its true pairs.

``--sets text`` names the text sets, ``--sets fields`` the field sets.

Generated sets use ``--seed`` (1) and are written anew on every run into
``--data`` (``bench/data/quality``), where the pair files stay for a look
afterwards. Timings are measured, never asserted; a failing command ends
the run with its message and a non-zero exit. The tables go to ``--out``
(``bench/out/QUALITY.md``, a folder git ignores), written anew.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import requests

from neardup_solr.lsh.bands import MAX_BUCKET
from neardup_solr.errors import NeardupError
from neardup_solr.results.clustering import connected
from neardup_solr.results.evaluate import read_gold, read_membership, score, score_clusters
from neardup_solr.match.summary import ReportSummary, summary_path
from neardup_solr.results.pairs import read_pairs
from neardup_solr.index.schema import BAND_KEYS, ID
from neardup_solr.index.solr import Solr

from . import documents, fields, generate, historical, kernel_check, mentions, people, splink_peer
from .results import OUT, machine
from .run import bench_solr, run_cli

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class DataSet:
    name: str
    size: int | None  # records by default; None: the set has a fixed size
    what: str  # what the set exercises, for the results file
    # (folder, n, seed) -> (records, true pairs); for a set of sources, a records file for each
    prepare: Callable[[Path, int, int], tuple[Path | tuple[Path, ...], Path]]
    sources: tuple[str, ...] = ()  # each records file indexed as its source (the second on with --append)
    report_options: tuple[str, ...] = ()  # what `neardup report` is given besides the defaults
    index_options: tuple[str, ...] = ()  # what `neardup index` is given besides the defaults
    peers: bool = False  # run the field records' peers on the same records (bench.splink_peer)


def _reference_restaurants(folder: Path, n: int, seed: int) -> tuple[Path, Path]:
    if not os.environ.get("NEARDUP_RESTAURANTS"):
        raise SystemExit("restaurants-reference reads the raw guide files, which are not shipped: set "
                         "NEARDUP_RESTAURANTS to their folder, or leave the set out with --sets")
    source = Path(os.environ["NEARDUP_RESTAURANTS"])
    missing = [name for name in ("fodors.txt", "zagats.txt", "gold_pairs.tsv") if not (source / name).is_file()]
    if missing:
        raise SystemExit(f"restaurant guide files missing in {source}: {', '.join(missing)} (set NEARDUP_RESTAURANTS "
                         "to their folder, or leave restaurants-reference out with --sets)")
    records = folder / "addresses.txt"
    run_cli("prepare-restaurants", "--fodors", str(source / "fodors.txt"), "--zagats", str(source / "zagats.txt"),
            "-o", str(records))
    return records, source / "gold_pairs.tsv"


def _pypi_restaurants(folder: Path, n: int, seed: int) -> tuple[Path, Path]:
    run_cli("datasets", "restaurants", "-o", str(folder))
    return folder / "addresses.txt", folder / "gold_pairs.tsv"


def _records(noise: str) -> Callable[[Path, int, int], tuple[Path, Path]]:
    return lambda folder, n, seed: generate.generate(n, seed, folder, noise)


def _linked(folder: Path, n: int, seed: int) -> tuple[tuple[Path, ...], Path]:
    *records, truth = generate.generate_linked(n, seed, folder)
    return tuple(records), truth


SETS = {s.name: s for s in (
    DataSet("restaurants-reference", None, "short real records, two guides' wording; the reference numbering",
            _reference_restaurants),
    DataSet("restaurants-pypi", None, "the same restaurants from the PyPI copy, its own ids and matches",
            _pypi_restaurants),
    DataSet("records-light", 20_000, "business names and addresses, one or two edits a duplicate",
            _records("light")),
    DataSet("records-heavy", 20_000, "the same records, two to four edits, typos in several words", _records("heavy")),
    DataSet("records-words", 20_000, "the same records, three to five word-level changes (dropped, added, "
            "replaced, reordered)", _records("words")),
    DataSet("people", 10_000, "person records: typos, OCR confusions, swapped names, initials, nicknames, "
            "missing fields, transposed digits; households that are not duplicates",
            lambda folder, n, seed: people.generate(n, seed, folder)),
    DataSet("documents", 2_000, "documents of 100-600 words of real prose: near copies with paragraphs "
            "moved and sentences added or dropped, a footer shared by many non-copies",
            lambda folder, n, seed: documents.generate(n, seed, folder)),
    DataSet("linked-light", 20_000, "two sources of business records to link, 20,000 each, half in a pair across "
            "them (an original and its light variant); `--source`, `report --link`", _linked, generate.SOURCES,
            ("--link",)),
    DataSet("linked-light-one-to-one", 20_000, "the same two sources, `report --link --one-to-one`: at most one "
            "partner a record", _linked, generate.SOURCES, ("--link", "--one-to-one")),
)}


def _field_set(domain: str, difficulty: str) -> Callable[[Path, int, int], tuple[Path, Path]]:
    def prepare(folder: Path, n: int, seed: int) -> tuple[Path, Path]:
        made = fields.generate(domain, difficulty, n, seed, folder)
        return made.records, made.truth
    return prepare


def _mentions(folder: Path, n: int, seed: int) -> tuple[Path, Path]:
    return mentions.generate(n, seed, folder)


def _historical(folder: Path, n: int, seed: int) -> tuple[Path, Path]:
    return historical.generate(folder)


FIELD_SETS = {"fields-historical": DataSet(
    "fields-historical", None, "splink's example people (MIT, `bench/datasets/historical_50k`): 5,156 people with "
    "3 to 21 records each, typos, nicknames, swapped and missing fields (`bench.historical`)", _historical,
    index_options=("--id-column", historical.ID_COLUMN), peers=True)}
FIELD_SETS.update({"fields-mentions": DataSet(
    "fields-mentions", 20_000, "mentions of people whose names many others bear (pre-blocked: every record shares "
    "its name's letters with thousands), each city in one state, moves and job changes between mentions "
    "(`bench.mentions`)", _mentions, index_options=("--id-column", "id"), peers=True)})
FIELD_SETS.update({f"fields-{domain}-{difficulty}": DataSet(
    f"fields-{domain}-{difficulty}", 5_000, f"dupehell's {domain} at {difficulty}: its most frequent entity's records",
    _field_set(domain, difficulty), index_options=("--id-column", fields.ID_COLUMN), peers=True)
    for difficulty in fields.DIFFICULTIES for domain in fields.DOMAINS})
TEXT_SETS = dict(SETS)
SETS.update(FIELD_SETS)
GROUPS = {"text": list(TEXT_SETS), "fields": list(FIELD_SETS)}


def estimates(pairs: Path) -> dict | None:
    """The report's own estimates, from the model file it writes beside the
    pairs (``pairs.tsv`` -> ``pairs.model.json``): ``{"precision", "recall",
    "true_pairs", "cut", "unsure"}``, or None where the report wrote none or had too
    few candidates to fit a model. ``unsure``: the report said its
    estimates may be off by more than 0.05 (by about that share)."""
    about = ReportSummary.read(summary_path(pairs))
    if about is None or about.estimated is None:
        return None
    estimated = about.estimated
    unsure = about.fields.ambiguity if about.fields is not None and about.fields.unsure else None
    return {"precision": estimated.precision, "recall": estimated.recall, "true_pairs": estimated.true_pairs,
            "cut": about.cut, "unsure": unsure}


def candidates(solr: Solr, gold: set[frozenset[str]]) -> dict[str, set[frozenset[str]]]:
    """The true pairs whose records share an LSH band key (``any``), and those
    sharing one held by at most MAX_BUCKET records, the ones the report reads
    (``kept``)."""
    keys: dict[str, set[int]] = {}
    held: Counter[int] = Counter()
    for doc in solr.iter_docs([ID, BAND_KEYS], batch=5000):
        keys[doc[ID]] = set(doc.get(BAND_KEYS, ()))
        held.update(keys[doc[ID]])
    found: dict[str, set[frozenset[str]]] = {"any": set(), "kept": set()}
    for pair in gold:
        a, b = (keys.get(i, set()) for i in pair)
        shared = a & b
        if shared:
            found["any"].add(pair)
        if any(held[key] <= MAX_BUCKET for key in shared):
            found["kept"].add(pair)
    return found


class Cores:
    """Fresh cores from the ``neardup`` configset on one Solr node, one a data
    set, so every set starts from the defaults; each is removed after its set."""

    def __init__(self, core_url: str):
        self.base = core_url.rstrip("/").rsplit("/", 1)[0]

    def create(self, name: str) -> str:
        """A fresh core ``name`` (one a killed run left is removed first)."""
        if name in self._names():
            self.remove(name)
        self._admin(action="CREATE", name=name, configSet="neardup")
        return f"{self.base}/{name}"

    def _names(self) -> set[str]:
        try:
            answer = requests.get(f"{self.base}/admin/cores", params={"action": "STATUS", "wt": "json"}, timeout=300)
            return set(answer.json()["status"]) if answer.status_code == 200 else set()
        except (requests.RequestException, ValueError, KeyError):
            return set()

    def remove(self, name: str) -> None:
        self._admin(action="UNLOAD", core=name, deleteInstanceDir="true")

    def _admin(self, **params: str) -> None:
        try:
            answer = requests.get(f"{self.base}/admin/cores", params={**params, "wt": "json"}, timeout=300)
        except requests.RequestException as err:
            raise SystemExit(f"Solr at {self.base} did not answer: {type(err).__name__}") from None
        if answer.status_code != 200:
            raise SystemExit(f"Solr refused to {params['action'].lower()} a core: {answer.text[:300]}")


def measure(data_set: DataSet, folder: Path, n: int, seed: int, cores: Cores) -> dict:
    """Prepare one data set, run index + report with defaults, score the pairs."""
    folder.mkdir(parents=True, exist_ok=True)
    records, gold_file = data_set.prepare(folder, n, seed)
    gold = read_gold(gold_file)
    name = "quality_" + data_set.name.replace("-", "_")
    url = cores.create(name)
    try:
        pairs = folder / "pairs.tsv"
        pairs.with_suffix(".model.json").unlink(missing_ok=True)  # only this run's model counts
        if data_set.sources:
            index_s = 0.0
            for number, (source, part) in enumerate(zip(data_set.sources, records)):
                appended = ("--append", "--no-pairs") if number else ()
                index_s += run_cli("index", *appended, str(part), "--source", source, "--solr-url", url, "--quiet")[0]
        else:
            index_s, _ = run_cli("index", str(records), *data_set.index_options, "--solr-url", url, "--quiet")
        report_s, said = run_cli("report", *data_set.report_options, str(pairs), "--solr-url", url, "--quiet")
        found = read_pairs(pairs)
        result = score(found, gold)
        solr = Solr(url, timeout=600)
        records_indexed = solr.count()
        shared = candidates(solr, gold)
        checked = None if data_set.peers else kernel_check.check(solr)
        grouped = entities(folder, url, gold) if data_set.peers else None
    finally:
        cores.remove(name)
    reported = {p.key for p in found}
    missed = gold - reported
    return {
        "name": data_set.name, "records": records_indexed, "true_pairs": len(gold), "pairs": result.found,
        "true": result.true, "precision": result.precision, "recall": result.recall, "f1": result.f1,
        "estimated": estimates(pairs), "candidates_any": len(shared["any"]) / len(gold) if gold else 0.0,
        "candidates_kept": len(shared["kept"]) / len(gold) if gold else 0.0,
        "missed_not_candidates": len(missed - shared["kept"]), "missed_below_cut": len(missed & shared["kept"]),
        "index_seconds": index_s, "report_seconds": report_s, "report_said": said.strip(),
        **({} if checked is None else {"kernel": {"pairs": checked.pairs, "plain_seconds": checked.plain_seconds,
                                                  "kernel_seconds": checked.kernel_seconds}}),
        **({"peers": peers(records, gold, data_set.index_options[-1])} if data_set.peers else {}),
        **({"entities": grouped} if grouped is not None else {}),
        "pairs_file": str(pairs), "gold_file": str(gold_file),
        "records_file": ",".join(map(str, records)) if isinstance(records, tuple) else str(records),
    }


def entities(folder: Path, url: str, gold: set[frozenset[str]]) -> dict:
    """``neardup report --entities`` on the core at ``url``, scored pairwise
    against the true entities: the connected components of the true pairs."""
    membership = folder / "entities.csv"
    seconds, _ = run_cli("report", "--entities", str(membership), "--solr-url", url, "--quiet")
    truth = {record: str(number) for number, group in enumerate(connected(gold)) for record in group}
    measured = score_clusters(read_membership(membership), truth)
    about = ReportSummary.read(summary_path(membership))
    said = None if about is None or about.entities is None else \
        {"precision": about.entities.precision, "recall": about.entities.recall}
    return {"precision": measured.precision, "recall": measured.recall, "f1": measured.f1, "seconds": seconds,
            "estimated": said}


def peers(records: Path, gold: set[frozenset[str]], id_column: str) -> dict:
    """The field records' peers on ``records``: F1 and seconds of each."""
    found = {}
    for name, run_peer in (("splink", splink_peer.splink_pairs), ("exact keys", splink_peer.exact_key_pairs)):
        done = run_peer(records, id_column)
        true = len(done.pairs & gold)
        precision = true / len(done.pairs) if done.pairs else 0.0
        recall = true / len(gold) if gold else 0.0
        found[name] = {"precision": precision, "recall": recall,
                       "f1": 2 * precision * recall / (precision + recall) if precision + recall else 0.0,
                       "seconds": done.seconds, "what": done.what}
    return found


def _estimate(results: dict, key: str) -> str:
    estimated = results["estimated"]
    shown = "n/a" if estimated is None else f"{estimated[key]:.3f}"
    if estimated is not None and estimated.get("unsure") is not None:
        shown += f" (unsure by {estimated['unsure']:.0%})"
    return f"{shown} / {results[key]:.3f}"


def _rate(kernel: dict, seconds: str) -> str:
    return f"{kernel['pairs'] / max(kernel[seconds], 1e-9):,.0f}"


def markdown(command: str, machine_info: dict[str, str], rows: list[dict]) -> str:
    field_rows = [r for r in rows if "peers" in r]
    rows = [r for r in rows if "peers" not in r]
    lines = [
        "# Detection quality with defaults only",
        "",
        f"`{command}`: each data set indexed into a fresh core with `neardup index RECORDS` and reported with "
        "`neardup report PAIRS`, no option changed (but the linked sets' sources and `--link`, as their "
        "descriptions below say), both run as child processes as users run them; the pairs "
        "scored against the set's true pairs as `neardup evaluate` scores them.",
        "",
        "Machine: " + ", ".join(f"{k} {v}" for k, v in machine_info.items()) + ".",
        "",
        "| data set | records | true pairs | pairs | precision | recall | F1 | est. precision / measured | "
        "est. recall / measured | LSH candidates | seconds (index + report) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        *(f"| {r['name']} | {r['records']:,} | {r['true_pairs']:,} | {r['pairs']:,} | {r['precision']:.3f} | "
          f"{r['recall']:.3f} | {r['f1']:.3f} | {_estimate(r, 'precision')} | {_estimate(r, 'recall')} | "
          f"{r['candidates_kept']:.3f} ({r['candidates_any']:.3f}) | "
          f"{r['index_seconds'] + r['report_seconds']:.1f} ({r['index_seconds']:.1f} + {r['report_seconds']:.1f}) |"
          for r in rows),
        "",
        "Estimates come from the model file the report writes beside the pairs (`PAIRS.model.json`); n/a where "
        "it wrote none. LSH candidates: the share of true pairs whose two records share a band key held by at "
        f"most {MAX_BUCKET} records (the buckets the report reads); in brackets, sharing any band key.",
        "",
        "## The verification kernel",
        "",
        "The report's compiled kernel gave the plain-Python similarity's scores and number levels to the last "
        "bit on every candidate of every set (`bench/kernel_check.py`), and verified them this much faster per "
        "CPU second (every thread's): the plain way as reports did before the kernel (the close words of the whole "
        "vocabulary by rapidfuzz, then each pair's dicts in Python), the kernel's with the close words its "
        "candidates need:",
        "",
        "| data set | candidates | plain, pairs per CPU second | kernel, pairs per CPU second | speed-up |",
        "| --- | --- | --- | --- | --- |",
        *(f"| {r['name']} | {r['kernel']['pairs']:,} | {_rate(r['kernel'], 'plain_seconds')} | "
          f"{_rate(r['kernel'], 'kernel_seconds')} | "
          f"{r['kernel']['plain_seconds'] / max(r['kernel']['kernel_seconds'], 1e-9):.0f}x |"
          for r in rows if "kernel" in r),
        "",
        "## Where true pairs are lost",
        "",
        "| data set | missed | never candidates | verified below the cut |",
        "| --- | --- | --- | --- |",
        *(f"| {r['name']} | {r['missed_not_candidates'] + r['missed_below_cut']:,} | {r['missed_not_candidates']:,} "
          f"| {r['missed_below_cut']:,} |" for r in rows),
        "",
        "## The data sets",
        "",
        *(f"- `{r['name']}`: {SETS[r['name']].what}." for r in rows),
        "",
    ]
    if not rows:
        lines = lines[:5]
    if field_rows:
        lines += field_markdown(field_rows)
    return "\n".join(lines)


def _f1(numbers: dict) -> str:
    return f"{numbers['f1']:.3f}"


def _entities(row: dict) -> str:
    found = row.get("entities")
    if found is None:
        return "n/a"
    said = found.get("estimated")
    return f"{found['precision']:.3f} / {found['recall']:.3f} / {found['f1']:.3f}" + \
        ("" if said is None else f" (est. {said['precision']:.3f} / {said['recall']:.3f})")


def field_markdown(rows: list[dict]) -> list[str]:
    """The field records' table, their peers beside them, and its summary lines."""
    ours = [r["f1"] for r in rows]
    grouped = [r["entities"]["f1"] for r in rows if "entities" in r]
    entities_off = [r["name"] for r in rows if "entities" in r and (
        r["entities"]["estimated"] is None or max(abs(r["entities"]["estimated"][k] - r["entities"][k])
                                                  for k in ("precision", "recall")) > 0.05)]
    splink = [r["peers"]["splink"]["f1"] for r in rows]
    at_least = sum(o >= s - 5e-4 for o, s in zip(ours, splink))
    short = [r["name"] for r, o, s in zip(rows, ours, splink) if s >= 0.95 and o < 0.95]
    off = [r["name"] for r in rows if r["estimated"] is None or
           max(abs(r["estimated"]["precision"] - r["precision"]), abs(r["estimated"]["recall"] - r["recall"])) > 0.05]
    unsure = [r["name"] for r in rows if r["estimated"] is not None and r["estimated"].get("unsure") is not None]
    return [
        "## Field records",
        "",
        "Each set indexed from Parquet with `--id-column` naming its id (every other column a field) and reported "
        "with defaults; the peers run on the same Parquet file in the same run (`bench/splink_peer.py`): splink "
        "with one generic recipe for every set, and exact keys.",
        "",
        f"Mean F1 {sum(ours) / len(ours):.3f} (splink's recipe {sum(splink) / len(splink):.3f}) over {len(rows)} sets; "
        f"at least splink's F1 on {at_least} of {len(rows)}; under 0.95 where splink reaches it: "
        f"{', '.join(short) or 'none'}; estimates more than 0.05 from the measured: {', '.join(off) or 'none'} "
        f"(the report said they were unsure on {', '.join(unsure) or 'none'}). "
        + (f"As entities (`report --entities`): mean pairwise F1 {sum(grouped) / len(grouped):.3f}; estimates more "
           f"than 0.05 from the measured: {', '.join(entities_off) or 'none'}." if grouped else ""),
        "",
        "| data set | records | true pairs | pairs | precision | recall | F1 | entities: precision / recall / F1 (est.) | "
        "est. precision / measured | est. recall / measured | splink F1 | exact keys F1 | "
        "seconds: ours (index + report) / splink |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        *(f"| {r['name']} | {r['records']:,} | {r['true_pairs']:,} | {r['pairs']:,} | {r['precision']:.3f} | "
          f"{r['recall']:.3f} | {r['f1']:.3f} | {_entities(r)} | {_estimate(r, 'precision')} | "
          f"{_estimate(r, 'recall')} | "
          f"{_f1(r['peers']['splink'])} | {_f1(r['peers']['exact keys'])} | "
          f"{r['index_seconds'] + r['report_seconds']:.1f} ({r['index_seconds']:.1f} + {r['report_seconds']:.1f}) / "
          f"{r['peers']['splink']['seconds']:.1f} |" for r in rows),
        "",
    ]


def sizes(given: list[str]) -> dict[str, int]:
    """``--n SET=N`` options as a dict."""
    found = {}
    for item in given:
        name, _, value = item.partition("=")
        if name not in SETS or SETS[name].size is None or not value.isdigit() or int(value) < 1:
            raise SystemExit(f"--n {item}: expected SET=N with a generated set ({', '.join(k for k, s in SETS.items() if s.size)})")
        found[name] = int(value)
    return found


def run(chosen: list[str], n: dict[str, int], seed: int, data: Path, solr_url: str | None) -> tuple[list[dict], dict]:
    """Measure each chosen set on the given Solr, or on a fresh local one."""
    rows = []
    with bench_solr(solr_url) as url:
        cores = Cores(url)
        info = machine(Solr(url), packages=("numpy", "mmh3", "rapidfuzz", "pysolr", "neardup-solr"))
        for name in chosen:
            print(f"{name} ...", file=sys.stderr, flush=True)
            rows.append(measure(SETS[name], data / name, n.get(name, 0), seed, cores))
            r = rows[-1]
            print(f"{name}: found={r['pairs']} true={r['true']} precision={r['precision']:.3f} "
                  f"recall={r['recall']:.3f} f1={r['f1']:.3f} seconds={r['index_seconds'] + r['report_seconds']:.1f}",
                  file=sys.stderr, flush=True)
    return rows, info


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.quality", description=__doc__.split("\n\n")[0],
                                     epilog="example: python -m bench.quality --sets restaurants-pypi,people")
    parser.add_argument("--sets", default="text,fields", help="comma-separated data sets, or the groups text and "
                        f"fields (default both): {', '.join(SETS)}")
    parser.add_argument("--n", action="append", default=[], metavar="SET=N", help="records of a generated set")
    parser.add_argument("--seed", type=int, default=1, help="seed of the generated sets (default 1)")
    parser.add_argument("--data", type=Path, default=HERE / "data" / "quality", help="folder for the data and pairs")
    parser.add_argument("--solr-url", help="a core on an existing local Solr; fresh cores are made beside it "
                        "(default: a fresh local Solr for the run)")
    parser.add_argument("--out", type=Path, default=OUT / "QUALITY.md", help="file the tables are written to")
    parser.add_argument("--json", type=Path, help="also write the raw numbers here")
    args = parser.parse_args(argv)
    chosen = [found for name in args.sets.split(",") if name.strip()
              for found in GROUPS.get(name.strip(), [name.strip()])]
    unknown = [name for name in chosen if name not in SETS]
    if unknown or not chosen:
        parser.error(f"unknown data set {', '.join(unknown)}; choose from {', '.join(SETS)}")
    n = {name: s.size for name, s in SETS.items() if s.size} | sizes(args.n)
    command = " ".join(["python -m bench.quality", *map(shlex.quote, sys.argv[1:] if argv is None else argv)])
    try:
        rows, info = run(chosen, n, args.seed, args.data, args.solr_url)
    except NeardupError as err:
        raise SystemExit(f"bench.quality: {err}") from None
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(markdown(command, info, rows), encoding="utf-8")
    if args.json:
        args.json.write_text(json.dumps({"command": command, "machine": info, "sets": rows}, indent=1))
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
