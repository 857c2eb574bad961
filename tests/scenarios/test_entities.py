"""Entities with many records, end to end on a real Solr: identical records
of any number in one entity, names as people write them, and estimates
that see what the candidates missed."""

from __future__ import annotations

import csv

import pandas as pd
import pytest

from bench import historical, mentions
from conftest import create_core, drop_core, run_cli, write_table

from neardup_solr import NearDuplicates
from neardup_solr.match.summary import ReportSummary, summary_path
from neardup_solr.results.evaluate import read_gold, score
from neardup_solr.results.pairs import read_pairs

pytestmark = pytest.mark.solr


@pytest.fixture(scope="module")
def people(solr_node, tmp_path_factory):
    """splink's historical people, the first 3,000 records (whole people,
    3 to 21 records each), indexed and reported with explanations."""
    folder = tmp_path_factory.mktemp("historical")
    records, truth = historical.generate(folder, 3000)
    core = create_core(solr_node)
    done = run_cli("index", str(records), "--id-column", historical.ID_COLUMN, "--solr-url", core.url, "-q")
    assert done.returncode == 0, done.stderr
    pairs = folder / "pairs.csv"
    done = run_cli("report", "--explain", str(pairs), "--solr-url", core.url, "-q")
    assert done.returncode == 0, done.stderr
    yield core, pairs, truth, done.stderr
    drop_core(core)


def test_identical_records_of_an_entity_of_any_size_are_one_entity(core, tmp_path):
    """450 copies of one mention beside 2,000 others: past every bucket's
    limit and past the size clusters are split by a whole matrix, they are
    one entity (no pair of theirs lost), and the others are not in it."""
    records, _ = mentions.generate(2000, 3, tmp_path / "mentions")
    rows = list(csv.DictReader(records.open(encoding="utf-8")))
    copied = rows[7]
    copies = [{**copied, "id": f"copy{n}"} for n in range(450)]
    table = tmp_path / "people.csv"
    write_table(table, rows + copies)
    assert run_cli("index", str(table), "--id-column", "id", "--solr-url", core.url, "-q").returncode == 0
    out = tmp_path / "entities.csv"
    done = run_cli("report", "--entities", str(out), "--solr-url", core.url)
    assert done.returncode == 0, done.stderr
    entity = dict(csv.reader(out.open(encoding="utf-8")))
    assert len(entity) == len(rows) + len(copies) + 1  # every record once, and the header
    assert {entity[c["id"]] for c in copies} | {entity[copied["id"]]} == {entity[copied["id"]]}
    members = [i for i, e in entity.items() if e == entity[copied["id"]]]
    assert len(members) >= 451
    # The 101,475 pairs of the copies are more than the model counts in all (it sees a window of them):
    # the entities' recall is said to be a bound, not an estimate.
    assert "the model's count of all matches is short of the entities': recall at most this" in done.stderr
    assert "entities:" in done.stderr and "(the largest" in done.stderr
    # The API gives the same entities.
    found = NearDuplicates(core).entities()
    assert dict(found) == {i: e for i, e in entity.items() if i != "id"}


def test_nicknames_and_names_written_the_other_way_round_are_matches(people):
    """Records of one person whose given names are a nickname of each
    other (charles and charlie, william and bill), and records with the
    given and family names the other way round, are kept, and nearly all
    such kept pairs are true."""
    _, pairs, truth, _ = people
    gold = read_gold(truth)
    kept = read_pairs(pairs)
    nicknamed = [p for p in kept if "a nickname of the other" in p.explanation]
    swapped = [p for p in kept if "the other's given or family name" in p.explanation]
    assert len(nicknamed) >= 20 and len(swapped) >= 20
    for found in (nicknamed, swapped):
        assert sum(p.key in gold for p in found) >= 0.95 * len(found)


def test_the_estimates_say_what_the_candidates_and_the_model_may_miss(people):
    """The people's true pairs are not all candidates, and the model gives
    many of the rest low odds (a nickname and little else): the recall is
    estimated high, and the report says its estimates are unsure, by about
    as much as they are off (within half the error), where precision holds."""
    _, pairs, truth, stderr = people
    about = ReportSummary.read(summary_path(pairs))
    measured = score(read_pairs(pairs), read_gold(truth))
    assert abs(about.estimated.precision - measured.precision) <= 0.05
    off = about.estimated.recall - measured.recall
    if off > 0.05:
        assert about.fields.unsure and about.fields.doubt >= off / 2
        assert "both unsure" in next(line for line in stderr.splitlines() if line.startswith("model:"))
    assert about.fields.missed > 0.005  # the candidates' misses are counted, not taken for none


def test_entities_gain_the_matches_transitivity_implies(people, tmp_path):
    """The people's entities taken as pairs find more of the true pairs than
    the pairs of probability 1/2 or more (A~B and B~C give A~C): a person's
    records join where their fields, taken together, say so, though some
    of their pairs alone would not be kept, so at least a third of the true
    pairs those miss are found, nearly every pair found true. The pairs
    agree with the entities: each has its records in one entity, and those
    kept under 1/2 by their entity are nearly all true."""
    core, pairs, truth, _ = people
    out = tmp_path / "entities.parquet"
    done = run_cli("report", "--entities", str(out), "--solr-url", core.url, "-q")
    assert done.returncode == 0, done.stderr
    entity = pd.read_parquet(out).set_index("id")["cluster_id"]
    gold = read_gold(truth)
    members: dict[str, list[str]] = {}
    for record, cluster in entity.items():
        members.setdefault(cluster, []).append(record)
    within = {frozenset((a, b)) for group in members.values() for i, a in enumerate(group) for b in group[i + 1:]}
    kept = read_pairs(pairs)
    alone = score([p for p in kept if p.probability >= 0.5], gold).recall
    assert len(within & gold) / len(gold) >= alone + (1 - alone) / 3
    assert len(within & gold) / len(within) >= 0.97
    assert all(p.key in within for p in kept)
    joined = [p for p in kept if p.probability < 0.5]
    assert len(joined) >= 0.02 * len(kept)
    assert sum(p.key in gold for p in joined) >= 0.9 * len(joined)


def test_a_banding_of_identical_texts_only_is_said_and_its_groups_are_kept(core, tmp_path):
    """Ten people of 200 identical records each beside 1,000 others: no
    banding keeps the chance candidates within the budget, so the index
    falls back to one band; the summary says its bands pair records of the
    same text only, and each person's 200 records are one entity."""
    import random

    rng = random.Random(2)
    given = ["Ann", "Bob", "Cy", "Dora", "Eve", "Finn", "Gus", "Hal", "Ida", "Jo"]
    rows = [[f"p{p}-{k}", given[p], f"Family{p}", "Paris", f"555 01{p:02d}"] for p in range(10) for k in range(200)]
    rows += [[f"o{n}", rng.choice(given), f"Name{rng.randrange(10**5)}", rng.choice(["Paris", "Lyon", "Nice"]),
              f"{rng.randrange(10**7):07d}"] for n in range(1000)]
    table = tmp_path / "people.csv"
    with table.open("w", newline="", encoding="utf-8") as out:
        csv.writer(out).writerows([["id", "first", "last", "city", "phone"], *rows])
    done = run_cli("index", str(table), "--solr-url", core.url)
    assert done.returncode == 0, done.stderr
    assert "bands: 1 x " in done.stderr
    out = tmp_path / "entities.csv"
    done = run_cli("report", "--entities", str(out), "--solr-url", core.url)
    assert done.returncode == 0, done.stderr
    assert "candidates from the LSH bands (one band: records of the same text only) and the keys" in done.stderr
    entity = dict(csv.reader(out.open(encoding="utf-8")))
    for p in range(10):
        assert len({entity[f"p{p}-{k}"] for k in range(200)}) == 1
    assert len({entity[f"p{p}-0"] for p in range(10)}) == 10


def test_pairs_labeled_different_are_not_written_though_their_entity_holds_them(people, tmp_path):
    """Pairs written only because their entity holds them (probability under
    1/2), labeled different by a person: none of them is written again, and
    the report says it was sharpened by them."""
    core, pairs, _, _ = people
    joined = [p for p in read_pairs(pairs) if p.probability < 0.5][:25]
    assert len(joined) == 25
    labels = tmp_path / "labels.tsv"
    labels.write_text("".join(f"{p.a}\t{p.b}\tdifferent\n" for p in joined), encoding="utf-8")
    after = tmp_path / "after.tsv"
    done = run_cli("report", str(after), "--labels", str(labels), "--solr-url", core.url)
    assert done.returncode == 0, done.stderr
    assert "sharpened by 0 pairs labeled the same, 25 different" in done.stderr
    written = {p.key for p in read_pairs(after)}
    assert not written & {p.key for p in joined}
    assert len(written) >= 0.9 * len(read_pairs(pairs))
