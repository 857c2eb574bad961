"""The second peer: Solr's own MinHash, as a Solr user would try it without neardup-solr.

A core from ``bench/solr_minhash/conf`` (not the product's configset): Lucene's
MinHashFilter hashes each record's shingles into ``bands * band_rows``
buckets at index time, and the ``{!min_hash}`` query parser ORs bands of
AND-ed bucket values at query time. The client only sends text: the
repaired text, so Solr shingles what ``neardup index`` signs (character
3-grams, or word 3-shingles for documents), and one ``{!min_hash}`` query per
record finds all pairs. The parser picks its rows per band from two local
parameters, ``sim`` and ``tp`` (the smallest number of bands whose S-curve
passes ``tp`` at ``sim``); :func:`query_parameters` picks the ones that give
the banding ``neardup index`` chose, so both use the same bands.

Its candidates are unverified, as datasketch's are; :func:`verify` applies
our verification to them afterwards (the similarity from our index's
document frequencies, and the cut of the model our report fitted) to measure
the precision they would reach with it.
"""

from __future__ import annotations

import http.client
import json
import shutil
import threading
from array import array
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import numpy as np
import requests

from neardup_solr.match.weighing import scored, weigh
from neardup_solr.match.buckets import Candidates
from neardup_solr.match.stored import load_model
from neardup_solr.records.record import id_key
from neardup_solr.match.text_model import keeps_by_similarity
from neardup_solr.index.solr import Solr

CONF = Path(__file__).resolve().parent / "solr_minhash" / "conf"
FIELDS = {"chars": "minhash_chars", "words": "minhash_words"}
BATCH = 2000  # documents in one update request
IN_FLIGHT = 2  # update requests at once: Solr analyses (shingles and hashes) on both cores
QUERY_THREADS = 4  # queries in flight: Solr does the work, the client mostly waits
ROWS = 100  # candidates read per query, best first by bands shared: what our online query reads


def band_size(hashes: int, sim: float, tp: float) -> int:
    """The rows per band ``{!min_hash}`` uses for ``hashes`` values: for the
    fewest bands (rows = hashes // bands) whose chance to catch a pair of
    similarity ``sim``, 1 - (1 - sim^rows)^bands, exceeds ``tp``; 1 when
    ``tp`` is 1 (then every value is its own band). As the reference guide
    describes the parser; the bands then cover all values, the last one
    wrapping round to the first values."""
    if tp >= 1:
        return 1
    for bands in range(1, hashes + 1):
        rows = hashes // bands
        if 1 - (1 - sim**rows) ** bands > tp:
            return rows
    return 1


def query_parameters(bands: int, band_rows: int) -> tuple[float, float]:
    """``sim`` and ``tp`` for which the parser bands ``bands * band_rows``
    values in rows of ``band_rows``: sim is the similarity that banding
    catches with probability 0.99, tp the highest of 0.99, 0.98, ... that
    gives those rows."""
    hashes = bands * band_rows
    sim = (1 - 0.01 ** (1 / bands)) ** (1 / band_rows)
    for tp in np.arange(0.99, 0.0, -0.01):
        if band_size(hashes, sim, float(tp)) == band_rows:
            return round(sim, 4), round(float(tp), 2)
    raise ValueError(f"no sim and tp make {{!min_hash}} band {hashes} values in rows of {band_rows}")


class Cores:
    """Peer cores on one local Solr node, from the peer configset copied into its Solr home."""

    def __init__(self, base_url: str, home: Path):
        self.base_url, self.home = base_url.rstrip("/"), home

    def create(self, name: str, buckets: int) -> str:
        conf = self.home / "configsets" / name / "conf"
        shutil.rmtree(conf.parent, ignore_errors=True)
        shutil.copytree(CONF, conf)
        self._admin(action="CREATE", name=name, configSet=name, **{"property.minhash.buckets": str(buckets)})
        return f"{self.base_url}/{name}"

    def remove(self, name: str) -> None:
        self._admin(action="UNLOAD", core=name, deleteInstanceDir="true")
        shutil.rmtree(self.home / "configsets" / name, ignore_errors=True)

    def _admin(self, **params: str) -> None:
        answer = requests.get(f"{self.base_url}/admin/cores", params={**params, "wt": "json"}, timeout=600)
        if answer.status_code != 200:
            raise SystemExit(f"Solr refused to {params['action'].lower()} the MinHash peer's core: {answer.text[:300]}")


class Client:
    """One keep-alive HTTP connection per thread to a core: the peer's
    client costs little next to Solr's work."""

    def __init__(self, core_url: str):
        parts = urlsplit(core_url)
        self.host, self.port, self.path = parts.hostname, parts.port, parts.path.rstrip("/")
        self._local = threading.local()

    def post(self, handler: str, body: bytes, content_type: str) -> dict:
        connection = getattr(self._local, "connection", None)
        answer = None
        if connection is not None:
            try:
                answer = self._send(connection, handler, body, content_type)
            except (ConnectionError, http.client.HTTPException):
                # A kept-alive connection that idled past Jetty's idle timeout
                # (or any closed one) is closed under us: open a new one, once.
                # Every request the peer sends (adds by id, commit, select) can
                # be repeated.
                connection.close()
        if answer is None:
            connection = self._local.connection = http.client.HTTPConnection(self.host, self.port, timeout=600)
            answer = self._send(connection, handler, body, content_type)
        data = answer.read()
        if answer.status != 200:
            raise SystemExit(f"the MinHash peer's Solr answered {answer.status}: {data[:300]!r}")
        return json.loads(data)

    def _send(self, connection: http.client.HTTPConnection, handler: str, body: bytes,
              content_type: str) -> http.client.HTTPResponse:
        connection.request("POST", f"{self.path}/{handler}", body=body, headers={"Content-Type": content_type})
        return connection.getresponse()

    def form(self, handler: str, params: dict[str, str]) -> dict:
        return self.post(handler, urlencode(params).encode(), "application/x-www-form-urlencoded")


def index(client: Client, records: list[tuple[str, str]], field: str) -> None:
    """Every record's repaired text into the peer's core, then one commit."""
    def send(first: int) -> None:
        docs = [{"id": rid, field: text} for rid, text in records[first : first + BATCH]]
        client.post("update?wt=json", json.dumps(docs).encode(), "application/json")

    with ThreadPoolExecutor(IN_FLIGHT) as pool:
        list(pool.map(send, range(0, len(records), BATCH)))
    client.form("update", {"commit": "true", "wt": "json"})


def query(client: Client, field: str, sim: float, tp: float, text: str, rows: int = ROWS) -> list[str]:
    """The ids ``{!min_hash}`` returns for a text, best first."""
    answer = client.form("select", {"q": f"{{!min_hash field={field} sim={sim} tp={tp} v=$text}}", "text": text,
                                    "fl": "id", "rows": str(rows), "wt": "json", "omitHeader": "true"})
    return [doc["id"] for doc in answer["response"]["docs"]]


def all_pairs(client: Client, records: list[tuple[str, str]], field: str, sim: float,
              tp: float) -> Candidates:
    """One query per record; each pair once, smaller id first, in id order.

    The pairs are kept as numbers (``first * n + second`` over the records
    in id order) in one array: each query returns up to ``ROWS`` ids, so at
    1M records up to 100 million pair occurrences, which as a set of Python
    tuples of ids grew by 10.7 KB a query (measured) and would not fit.
    """
    ids = sorted((rid for rid, _ in records), key=id_key)
    number = {rid: n for n, rid in enumerate(ids)}
    size = max(len(ids), 1)

    def codes_of(record: tuple[str, str]) -> list[int]:
        rid, text = record
        own = number[rid]
        others = [number[other] for other in query(client, field, sim, tp, text) if other != rid]
        return [min(own, other) * size + max(own, other) for other in others]

    occurrences = array("q")
    with ThreadPoolExecutor(QUERY_THREADS) as pool:
        for codes in pool.map(codes_of, records, chunksize=256):
            occurrences.extend(codes)
    codes = np.unique(np.frombuffer(occurrences, dtype=np.int64))
    del occurrences
    first, second = np.divmod(codes, size)
    return Candidates(ids, first, second)


def candidate_quality(found: Candidates, gold: set[frozenset[str]]) -> dict[str, float]:
    """``neardup evaluate``'s figures for ``found``, counted on pair numbers:
    the candidates are too many to score as a file of pairs."""
    number = {rid: n for n, rid in enumerate(found.ids)}
    size = max(len(found.ids), 1)
    gold_codes = np.array(sorted({min(number[a], number[b]) * size + max(number[a], number[b])
                                  for a, b in map(tuple, gold) if a in number and b in number}), dtype=np.int64)
    true = int(np.isin(found.left * size + found.right, gold_codes, assume_unique=True).sum())
    pairs = len(found)
    return {"pairs": pairs, "true": true, "precision": true / pairs if pairs else 0.0,
            "recall": true / len(gold) if gold else 0.0}


def verify(solr: Solr, texts: dict[str, str], found: Candidates,
           cut: float | None) -> list[tuple[str, str]]:
    """The pairs of ``found`` our verification keeps, in id order: each
    pair's similarity from our index's document frequencies and its numbers'
    agreement, kept by the model our report fitted and kept with the index
    (or a fixed ``cut``)."""
    if not len(found):
        return []
    scores, levels = scored(found, weigh(solr, texts, found))
    model = load_model(solr)
    if cut is not None or model is None:
        keep = keeps_by_similarity(scores, cut)
    else:
        keep = model.keeps(scores, levels)
    return [pair for pair, kept in zip(found.pairs(), keep.tolist()) if kept]


def write_pairs(path: Path, pairs: Iterable[tuple[str, str]]) -> None:
    """``pairs``, already in id order, one ``a<TAB>b`` line each."""
    with open(path, "w", encoding="utf-8") as out:
        out.writelines(f"{a}\t{b}\n" for a, b in pairs)
