"""The rensa peer (``bench/rensa_peer.py``) on 2000 of the generator's short records: its candidates against
a banding of rensa's own one-at-a-time MinHashes done here, its verification against Jaccard computed here,
and its cut against every other cut. No Solr."""

import json
import subprocess
import sys
from collections import defaultdict
from itertools import combinations

import pytest
from rensa import RMinHash

from bench import rensa_peer
from bench.generate import generate
from bench.peer import lsh_shingles
from conftest import ROOT

from neardup_solr.results.evaluate import read_gold
from neardup_solr.records.readers import RecordReader

BANDS, BAND_ROWS = 21, 6  # the banding neardup index chose for the generator's 1M records


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("rensa")
    generate(2000, 5, folder)
    records = [(r.id, r.text) for r in RecordReader(folder / "records.txt")]
    return folder, records, read_gold(folder / "true_pairs.tsv")


def f1_at(similarities, true, gold, cut):
    """F1 of keeping the candidates at or above ``cut``, the true pairs never proposed counted as missed."""
    kept = sum(s >= cut for s in similarities)
    found = sum(t for s, t in zip(similarities, true) if s >= cut)
    return 2 * found / (kept + gold)


def exact_jaccard(a, b):
    a, b = set(a), set(b)
    return len(a & b) / len(a | b)


def test_candidates_are_the_pairs_whose_minhashes_share_a_band_and_find_the_true_pairs(data):
    folder, records, gold = data
    ids, lists, sets = rensa_peer.shingles(str(folder / "records.txt"))
    assert ids == [rid for rid, _ in records] and all(set(group) == s for group, s in zip(lists, sets))
    minhashes = rensa_peer.digests(lists, BANDS * BAND_ROWS)
    found = {(ids[i], ids[j]) for i, j in rensa_peer.candidate_pairs(rensa_peer.index(minhashes, BANDS, BAND_ROWS),
                                                                     minhashes)}
    # The banding done here, on MinHashes made one record at a time with rensa's plain API.
    buckets = defaultdict(list)
    for rid, text in records:
        one = RMinHash(num_perm=BANDS * BAND_ROWS, seed=rensa_peer.SEED)
        one.update(lsh_shingles(text))
        digest = one.digest()
        for band in range(BANDS):
            buckets[band, tuple(digest[band * BAND_ROWS : (band + 1) * BAND_ROWS])].append(rid)
    expected = {pair for members in buckets.values() for pair in combinations(members, 2)}
    assert found == expected
    # Light noise: nearly every true pair shares a band.
    assert len({frozenset(p) for p in found} & gold) >= 0.9 * len(gold)


def test_the_best_cut_has_the_best_f1_of_all_cuts_and_counts_the_pairs_never_proposed():
    similarities = [0.9, 0.9, 0.8, 0.7, 0.7, 0.4]
    true = [True, False, True, True, False, False]
    for gold in (3, 4, 10):
        cut, score = rensa_peer.best_cut(similarities, true, gold)
        assert score.f1 == pytest.approx(max(f1_at(similarities, true, gold, c) for c in set(similarities)))
        assert score.gold == gold and score.recall == score.true / gold
        assert score.found == sum(s >= cut for s in similarities)
    # 0.7 takes in all three true pairs of three for two false: F1 0.75, where 0.8 has 2 of 3 for one false.
    assert rensa_peer.best_cut(similarities, true, 3)[0] == 0.7
    cut, score = rensa_peer.best_cut([], [], 5)
    assert cut is None and score.found == 0 and score.f1 == 0


def test_the_command_writes_the_pairs_at_its_best_cut_verified_by_exact_jaccard(data):
    folder, records, gold = data
    out = folder / "pairs-rensa.tsv"
    done = subprocess.run([sys.executable, "-m", "bench.rensa_peer", str(folder / "records.txt"),
                           str(folder / "true_pairs.tsv"), str(out), "--bands", str(BANDS),
                           "--band-rows", str(BAND_ROWS)], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["records"] == 2000 and result["gold"] == len(gold)
    phases = ("shingles_seconds", "digest_seconds", "build_seconds", "query_seconds", "verify_seconds")
    assert result["seconds"] == pytest.approx(sum(result[p] for p in phases))
    assert result["peak_rss_mb"] > 10
    texts = dict(records)
    shingles = {rid: lsh_shingles(text) for rid, text in texts.items()}
    pairs = [tuple(line.split("\t")) for line in out.read_text().splitlines()]
    assert len(pairs) == result["pairs"] == len({frozenset(p) for p in pairs})
    assert all(exact_jaccard(shingles[a], shingles[b]) >= result["cut"] for a, b in pairs)
    true = sum(frozenset(p) in gold for p in pairs)
    assert true == result["true"] and result["precision"] == pytest.approx(true / len(pairs))
    assert result["recall"] == pytest.approx(true / len(gold))
    # No other cut of the candidates does better: the candidates are made again here and each cut tried.
    ids, lists, _ = rensa_peer.shingles(str(folder / "records.txt"))
    minhashes = rensa_peer.digests(lists, BANDS * BAND_ROWS)
    candidates = rensa_peer.candidate_pairs(rensa_peer.index(minhashes, BANDS, BAND_ROWS), minhashes)
    assert len(candidates) == result["candidates"]
    similarities = [exact_jaccard(lists[i], lists[j]) for i, j in candidates]
    labels = [frozenset((ids[i], ids[j])) in gold for i, j in candidates]
    assert sum(labels) == result["candidates_true"] >= result["true"]
    assert result["f1"] == pytest.approx(max(f1_at(similarities, labels, len(gold), c) for c in set(similarities)))
    assert result["f1"] > f1_at(similarities, labels, len(gold), 0.0)  # verifying beat keeping every candidate


def test_a_missing_records_file_is_one_line_and_leaves_no_pairs_file(tmp_path):
    truth = tmp_path / "true_pairs.tsv"
    truth.write_text("1\t2\n")
    done = subprocess.run([sys.executable, "-m", "bench.rensa_peer", str(tmp_path / "none.txt"), str(truth),
                           str(tmp_path / "pairs.tsv"), "--bands", "2", "--band-rows", "2"],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 4 and done.stderr.count("\n") == 1 and "error: " in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "pairs.tsv").exists()
