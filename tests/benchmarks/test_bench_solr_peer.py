"""Solr's own MinHash as the benchmark runs it (``bench/solr_peer.py``), on
the generator's short records: the peer's core, its one query per record and
our verification of its candidates. The 10k smoke run of the benchmark
leaves this peer to the documents and to this test, as its 10,000 queries
cost a minute on two cores."""

import socket
import subprocess
import sys
from urllib.parse import urlsplit

from bench import solr_peer
from conftest import ROOT, _homes

from neardup_solr import NearDuplicates
from neardup_solr.results.evaluate import score
from neardup_solr.results.pairs import Pair
from neardup_solr.records.record import id_key
from neardup_solr.text.repair import repair


def test_solr_minhash_finds_the_generators_pairs_and_our_verification_keeps_only_them(core, tmp_path):
    subprocess.run([sys.executable, "-m", "bench.generate", "--n", "2000", "--seed", "5", "--out-dir", str(tmp_path)],
                   check=True, capture_output=True, cwd=ROOT)
    records = [tuple(line.split(" ", 1)) for line in (tmp_path / "records.txt").read_text().splitlines()]
    gold = {frozenset(line.split("\t")) for line in (tmp_path / "true_pairs.tsv").read_text().splitlines()}
    ours = NearDuplicates(core)
    ours.index(records)
    # The report fits the match model and keeps it with the index, where the peer's verification reads it.
    assert ours.pairs().model.fitted
    bands, band_rows = 20, 3
    sim, tp = solr_peer.query_parameters(bands, band_rows)
    # The parser's own rule for rows per band gives back the banding asked for.
    assert solr_peer.band_size(bands * band_rows, sim, tp) == band_rows
    port = urlsplit(core.url).port
    cores = solr_peer.Cores(core.url.rsplit("/", 1)[0], _homes[port])
    client = solr_peer.Client(cores.create("peer_records", bands * band_rows))
    try:
        repaired = [(rid, repair(text)) for rid, text in records]
        solr_peer.index(client, repaired, solr_peer.FIELDS["chars"])
        found = solr_peer.all_pairs(client, repaired, solr_peer.FIELDS["chars"], sim, tp)
        # A kept-alive connection closed under the client (as Jetty closes one
        # that idled through the all-pairs queries) is reopened: the query answers.
        client._local.connection.sock.shutdown(socket.SHUT_RDWR)
        rid, text = repaired[0]
        assert rid in solr_peer.query(client, solr_peer.FIELDS["chars"], sim, tp, text)
    finally:
        cores.remove("peer_records")
    listed = list(found.pairs())
    # Each pair once, smaller id first, the pairs in id order.
    keys = [(id_key(a), id_key(b)) for a, b in listed]
    assert all(a < b for a, b in keys) and keys == sorted(set(keys))
    candidates = {frozenset(pair) for pair in listed}
    assert len(candidates & gold) >= 0.9 * len(gold)
    # The figures counted on pair numbers are those of scoring the pairs themselves.
    measured = score([Pair(a, b, 0) for a, b in listed], gold)
    assert solr_peer.candidate_quality(found, gold) == {
        "pairs": measured.found, "true": measured.true, "precision": measured.precision, "recall": measured.recall}
    kept = {frozenset(pair) for pair in solr_peer.verify(core, dict(records), found, None)}
    hits = len(kept & gold)
    assert hits >= 0.9 * len(gold) and hits >= 0.9 * len(kept)
