"""The duplicate-check service (`neardup serve`) as users run it: the
command in a child process, against a real Solr core, over real HTTP."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time

import pytest
import requests

from conftest import child_env, free_port, run_cli

from neardup_solr import NearDuplicates

RECORDS = [
    ("1", "Art's Deli 12224 Ventura Blvd. Studio City"),
    ("2", "Hotel Bel-Air 701 Stone Canyon Rd. Bel Air"),
    ("3", "Philippe the Original 1001 N. Alameda St. Los Angeles"),
    ("4", "Grill on the Alley 9560 Dayton Way Beverly Hills"),
    ("5", "Campanile 624 S. La Brea Ave. Los Angeles"),
]
NEAR_COPY = "Arts Deli 12224 Ventura Boulevard Studio City"
TOKEN = "s3cret-token-for-the-test"


@pytest.fixture
def built(core):
    """A core indexed with RECORDS, as `neardup index` would leave it."""
    NearDuplicates(core).index(RECORDS)
    return core


def one_line_error(answer: requests.Response, status: int) -> dict:
    assert answer.status_code == status, answer.text
    body = answer.json()
    assert body["error"] and "\n" not in body["error"] and "Traceback" not in answer.text
    return body


def test_posting_a_record_answers_its_near_duplicates_and_indexes_it(built, serve):
    service = serve("--solr-url", built.url)
    answer = service.post("/records", json={"id": "6", "text": NEAR_COPY})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["added"] == 1 and body["replaced"] == []
    [record] = body["records"]
    assert record["id"] == "6"
    assert [d["id"] for d in record["duplicates"]] == ["1"]
    found = record["duplicates"][0]
    assert 0.5 < found["similarity"] < 1 and found["text"] == RECORDS[0][1]
    assert "probability" in found
    # It is indexed: the original now finds it.
    assert [m["id"] for m in service.get("/records/1/duplicates").json()["matches"]] == ["6"]
    assert sorted(built.texts(["6"])) == ["6"]


def test_the_same_text_posted_twice_finds_the_first(built, serve):
    service = serve("--solr-url", built.url)
    text = "Spago 1114 Horn Ave. West Hollywood"
    first = service.post("/records", json={"id": "s1", "text": text}).json()
    assert first["records"] == [{"id": "s1", "duplicates": []}]
    second = service.post("/records", json=[{"id": "s2", "text": text}]).json()
    [duplicate] = second["records"][0]["duplicates"]
    assert duplicate["id"] == "s1" and duplicate["similarity"] == 1.0 and duplicate["distance"] == 0


def test_reposting_an_id_replaces_it_and_is_not_its_own_duplicate(built, serve):
    service = serve("--solr-url", built.url)
    answer = service.post("/records", json={"id": "1", "text": RECORDS[0][1]}).json()
    assert answer["records"] == [{"id": "1", "duplicates": []}]
    assert answer["added"] == 1 and answer["replaced"] == ["1"]  # the answer says it replaced a record
    assert service.get("/health").json()["records"] == len(RECORDS)


def test_a_list_answers_each_record_and_records_find_each_other(built, serve):
    service = serve("--solr-url", built.url)
    answer = service.post("/records", json=[{"id": "a", "text": "Chinois on Main 2709 Main St. Santa Monica"},
                                            {"id": "b", "text": "Chinois on Main 2709 Main Street Santa Monica"},
                                            {"id": "c", "text": NEAR_COPY}]).json()
    assert answer["added"] == 3
    found = {r["id"]: [d["id"] for d in r["duplicates"]] for r in answer["records"]}
    assert found == {"a": ["b"], "b": ["a"], "c": ["1"]}


def test_duplicates_of_any_text_and_of_an_indexed_record(built, serve):
    service = serve("--solr-url", built.url)
    answer = service.get("/duplicates", params={"text": NEAR_COPY})
    assert answer.status_code == 200, answer.text
    assert answer.json()["query"]["text"] == NEAR_COPY
    assert [m["id"] for m in answer.json()["matches"]] == ["1"]
    similarity = answer.json()["matches"][0]["similarity"]
    for name in ("cut", "threshold"):  # threshold: the old name, kept for a release
        for cut, ids in ((similarity - 0.01, ["1"]), (min(similarity + 0.01, 1.0), [])):
            found = service.get("/duplicates", params={"text": NEAR_COPY, name: cut}).json()["matches"]
            assert [m["id"] for m in found] == ids, (name, cut)
    assert service.get("/duplicates", params={"text": "nothing like any record at all"}).json()["matches"] == []
    own = service.get("/records/2/duplicates").json()
    assert own["query"] == {"id": "2", "text": RECORDS[1][1]} and own["matches"] == []
    missing = one_line_error(service.get("/records/nope/duplicates"), 404)
    assert "nope" in missing["error"]


def test_delete_removes_the_record(built, serve):
    service = serve("--solr-url", built.url)
    answer = service.delete("/records/1")
    assert answer.status_code == 200 and answer.json() == {"deleted": ["1"]}
    assert built.texts(["1"]) == {}
    assert service.get("/duplicates", params={"text": NEAR_COPY}).json()["matches"] == []
    one_line_error(service.delete("/records/1"), 404)


def test_health_tells_the_record_count_and_settings(built, serve):
    service = serve("--solr-url", built.url)
    health = service.get("/health").json()
    assert health["solr"] == "ok" and health["url"] == built.url
    assert health["records"] == len(RECORDS) and health["built"] is True
    settings = NearDuplicates(built).settings
    assert (health["settings"]["bands"], health["settings"]["band_rows"]) == (settings.bands, settings.band_rows)


def test_the_api_is_described(built, serve):
    service = serve("--solr-url", built.url)
    described = service.get("/openapi.json").json()
    assert {"/records", "/duplicates", "/records/{record_id}/duplicates", "/records/{record_id}",
            "/health"} <= set(described["paths"])
    assert "requestBody" in described["paths"]["/records"]["post"]
    docs = service.get("/docs")
    assert docs.status_code == 200 and "openapi.json" in docs.text


def test_an_index_never_built_is_a_409_with_a_hint(core, serve):
    service = serve("--solr-url", core.url)
    body = one_line_error(service.post("/records", json={"id": "1", "text": "some text"}), 409)
    assert "never been built" in body["error"] and "neardup index" in body["hint"]
    assert core.count() == 0
    assert service.get("/health").json()["built"] is False


@pytest.mark.parametrize(("body", "reason"), [
    (b'{"id": "1", "text": ', "the body is not JSON"),
    (b'{"id": "1"}', "a record is an (id, text) pair or a dict with id and text"),
    (b'[{"id": "bad id", "text": "x y z"}]', "breaks the id rule"),
    (b'{"id": "7", "text": "!!! ..."}', "has no letters or digits"),
    (b'[{"id": "7", "text": "fine text"}, 3]', "record 2: a record is a JSON object"),
    (b'[]', "holds no records"),
])
def test_bad_json_or_a_bad_record_is_a_400_with_the_reason(built, serve, body, reason):
    service = serve("--solr-url", built.url)
    answer = one_line_error(service.post("/records", data=body, headers={"Content-Type": "application/json"}), 400)
    assert reason in answer["error"]
    assert built.count() == len(RECORDS)  # nothing of a bad request is indexed


PHILIPPE_COPY = "Philippe the Original 1001 North Alameda Street Los Angeles"


def test_reads_side_by_side_with_a_write_all_answer_right(built, serve):
    """Eight clients read at once while a record is posted: every answer is
    whole and right, and every read sent after the post returned sees it."""
    service = serve("--solr-url", built.url)
    posted = threading.Event()
    ready = threading.Barrier(9)  # the eight readers and the writer
    wrong: list[str] = []
    after: list[int] = []

    def check(session: requests.Session, turn: int) -> bool:
        """One read, checked; whether it was sent after the post returned."""
        seen_post = posted.is_set()
        kind = turn % 4
        if kind == 0:
            answer = session.get(f"{service.url}/duplicates", params={"text": NEAR_COPY}, timeout=60).json()
            ok = answer["query"] == {"id": None, "text": NEAR_COPY} and [m["id"] for m in answer["matches"]] == ["1"]
        elif kind == 1:
            answer = session.get(f"{service.url}/records/3/duplicates", timeout=60).json()
            found = [m["id"] for m in answer["matches"]]
            before = found == [] and not seen_post  # a read the post had not reached yet
            ok = answer["query"] == {"id": "3", "text": RECORDS[2][1]} and (found == ["6"] or before)
        elif kind == 2:
            answer = session.get(f"{service.url}/health", timeout=60).json()
            ok = answer["solr"] == "ok" and answer["records"] in ((6,) if seen_post else (5, 6))
        else:
            page = session.get(f"{service.url}/", params={"text": PHILIPPE_COPY}, timeout=60)
            answer = page.status_code
            ok = answer == 200 and '<td class="id">3</td>' in page.text
        if not ok:
            wrong.append(f"turn {turn} (after the post: {seen_post}): {answer}")
        return seen_post

    def reader() -> None:
        with requests.Session() as session:
            turn = after_post = 0
            while after_post < 8:
                if turn == 8:
                    ready.wait()  # each has read before the post; all go on reading while it runs
                after_post += check(session, turn)
                turn += 1
            after.append(after_post)

    threads = [threading.Thread(target=reader) for _ in range(8)]
    for thread in threads:
        thread.start()
    ready.wait()
    answer = service.post("/records", json={"id": "6", "text": PHILIPPE_COPY})
    posted.set()
    for thread in threads:
        thread.join()
    assert answer.status_code == 200, answer.text
    assert [d["id"] for d in answer.json()["records"][0]["duplicates"]] == ["3"]
    assert not wrong, wrong[:5]
    assert after == [8] * 8


def test_the_cli_gives_the_same_reason_for_a_bad_id(built, serve, tmp_path):
    service = serve("--solr-url", built.url)
    answer = one_line_error(service.post("/records", json={"id": "bad id", "text": "x y z"}), 400)
    source = tmp_path / "records.jsonl"
    source.write_text(json.dumps({"id": "bad id", "text": "x y z"}) + "\n")
    done = run_cli("index", "--append", str(source), "--solr-url", built.url)
    assert answer["error"].removeprefix("record 1: ") in done.stderr


def test_bad_parameters_are_400(built, serve):
    service = serve("--solr-url", built.url)
    one_line_error(service.get("/duplicates"), 400)
    one_line_error(service.get("/duplicates", params={"text": "x", "limit": "0"}), 400)
    one_line_error(service.get("/duplicates", params={"text": "  ...  "}), 400)


def test_solr_down_is_a_503_with_a_hint(serve):
    nowhere = f"http://127.0.0.1:{free_port()}/solr/neardup"
    service = serve("--solr-url", nowhere, "--retries", "0")
    for answer in (service.get("/health"), service.get("/duplicates", params={"text": NEAR_COPY}),
                   service.post("/records", json={"id": "1", "text": NEAR_COPY}), service.delete("/records/1"),
                   service.get("/records/1/duplicates")):
        body = one_line_error(answer, 503)
        assert body["hint"]
    assert "Traceback" not in service.stop()


def test_a_token_guards_writes_but_not_reads(built, serve, tmp_path):
    token_file = tmp_path / "token.txt"
    token_file.write_text(TOKEN + "\n")
    service = serve("--solr-url", built.url, "--token-file", str(token_file))
    record = {"id": "6", "text": NEAR_COPY}
    assert one_line_error(service.post("/records", json=record), 401)["hint"]
    assert service.post("/records", json=record, headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert service.delete("/records/1").status_code == 401
    assert built.count() == len(RECORDS)
    auth = {"Authorization": f"Bearer {TOKEN}"}
    assert service.post("/records", json=record, headers=auth).status_code == 200
    assert service.delete("/records/6", headers=auth).status_code == 200
    assert service.get("/duplicates", params={"text": NEAR_COPY}).status_code == 200


def test_with_token_for_reads_beyond_the_loopback_every_read_needs_the_token(built, serve, tmp_path):
    token_file = tmp_path / "token.txt"
    token_file.write_text(TOKEN + "\n")
    service = serve("--solr-url", built.url, "--host", "0.0.0.0", "--token-file", str(token_file),
                    "--token-for-reads", "--labels", str(tmp_path / "labels.tsv"))
    auth = {"Authorization": f"Bearer {TOKEN}"}
    assert service.post("/labels", json={"a": "1", "b": "2", "label": "same"}, headers=auth).status_code == 200
    reads = [("/duplicates", {"text": NEAR_COPY}), ("/records/1/duplicates", None), ("/labels", None),
             ("/labels/gold", None)]
    for path, params in reads:
        assert "token" in one_line_error(service.get(path, params=params), 401)["error"], path
        assert service.get(path, params=params, headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert service.get(path, params=params, headers=auth).status_code == 200, path
    assert service.get("/labels", headers=auth).json() == [{"a": "1", "b": "2", "label": "same"}]
    assert service.post("/records", json={"id": "6", "text": NEAR_COPY}).status_code == 401
    # What a probe or a client generator needs stays open, and tells no record.
    assert service.get("/health").status_code == 200 and service.get("/openapi.json").status_code == 200
    # The review page shows nothing of the index, only the form that takes the token.
    page = service.get("/", params={"text": NEAR_COPY})
    assert page.status_code == 401 and 'id="sign-in"' in page.text
    assert "Blvd." not in page.text and "records indexed" not in page.text
    assert "Blvd." in service.get("/", params={"text": NEAR_COPY}, headers=auth).text
    # Signed in on the page, a browser sees it; its cookie opens the page, not the API.
    browser = requests.Session()
    signed = browser.post(f"{service.url}/sign-in", data={"token": TOKEN, "text": NEAR_COPY}, timeout=60)
    assert signed.status_code == 200 and "Blvd." in signed.text and 'id="sign-in"' not in signed.text
    assert browser.get(f"{service.url}/labels", timeout=60).status_code == 401


def test_token_for_reads_needs_a_token(tmp_path):
    done = run_cli("serve", "--port", str(free_port()), "--token-for-reads")
    assert done.returncode == 2 and "--token-for-reads needs the token: give --token-file" in done.stderr


def test_without_a_token_writes_are_open_on_the_loopback(built, serve):
    service = serve("--solr-url", built.url)
    assert service.delete("/records/5").status_code == 200


def test_another_host_without_a_token_refuses_to_start(tmp_path):
    done = run_cli("serve", "--host", "0.0.0.0", "--port", str(free_port()))
    assert done.returncode == 1
    assert "refusing to serve on 0.0.0.0 without a token" in done.stderr and "--token-file" in done.stderr
    assert "Traceback" not in done.stderr
    empty = tmp_path / "empty.txt"
    empty.write_text("\n")
    done = run_cli("serve", "--host", "0.0.0.0", "--port", str(free_port()), "--token-file", str(empty))
    assert done.returncode == 1 and "holds no token" in done.stderr


def test_another_host_with_a_token_serves(built, serve, tmp_path):
    token_file = tmp_path / "token.txt"
    token_file.write_text(TOKEN)
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "neardup_solr", "serve", "--host", "0.0.0.0", "--port",
                                str(port), "--token-file", str(token_file), "--solr-url", built.url],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=child_env())
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and process.poll() is None:
            try:
                health = requests.get(f"http://127.0.0.1:{port}/health", timeout=5)
                break
            except requests.ConnectionError:
                time.sleep(0.2)
        assert process.poll() is None, process.stderr.read()
        assert health.json()["records"] == len(RECORDS)
        assert requests.delete(f"http://127.0.0.1:{port}/records/1", timeout=60).status_code == 401
    finally:
        process.terminate()
        process.communicate(timeout=30)


def test_a_taken_port_is_one_line(built, serve):
    service = serve("--solr-url", built.url)
    done = run_cli("serve", "--port", str(service.port), "--solr-url", built.url)
    assert done.returncode == 1
    assert "could not serve on 127.0.0.1" in done.stderr and "Traceback" not in done.stderr


# --- the review page, in a real browser --------------------------------------

HOSTILE = '<script>alert(1)</script> Cafe "Le Chat" & Co 12 Rue Ete <img src=x onerror=alert(2)>'


def test_the_review_page_finds_a_texts_near_duplicates_in_a_real_browser(built, serve, browser):
    NearDuplicates(built).add([("h1", HOSTILE)])
    service = serve("--solr-url", built.url)
    context = browser.new_context(viewport={"width": 1100, "height": 800})
    page = context.new_page()
    problems: list[str] = []
    asked: list[str] = []
    page.on("pageerror", lambda err: problems.append(f"page error: {err}"))
    page.on("dialog", lambda dialog: (problems.append(f"dialog: {dialog.message}"), dialog.dismiss()))
    page.on("request", lambda request: asked.append(request.url))
    page.goto(service.url + "/", wait_until="load")
    assert page.locator("#records").inner_text() == f"{len(RECORDS) + 1} records indexed."
    assert page.locator("#matches").count() == 0

    page.fill("input[name=text]", NEAR_COPY)
    page.press("input[name=text]", "Enter")
    page.wait_for_selector("#matches")
    assert page.locator("#matches td.id").all_inner_texts() == ["1"]
    assert page.locator("#matches td.text").inner_text() == RECORDS[0][1]
    assert page.locator("#matches td.text mark").count() > 0  # the words that differ are marked
    assert page.input_value("input[name=text]") == NEAR_COPY

    page.fill("input[name=text]", HOSTILE.replace("Ete", "Été"))
    page.click("button[type=submit]")
    page.wait_for_selector("#matches")
    assert page.locator("#matches td.id").all_inner_texts() == ["h1"]
    assert page.locator("#matches td.text").inner_text() == HOSTILE  # shown as written, not run
    assert page.locator("script").count() == 0 and page.locator("img").count() == 0

    page.fill("input[name=text]", "nothing like any record at all")
    page.press("input[name=text]", "Enter")
    page.wait_for_selector("#none")
    assert not problems, problems
    assert all(url.startswith(service.url) for url in asked), asked
    context.close()


def test_the_review_page_says_when_solr_is_down(serve):
    service = serve("--solr-url", f"http://127.0.0.1:{free_port()}/solr/neardup", "--retries", "0")
    answer = service.get("/", params={"text": NEAR_COPY})
    assert answer.status_code == 503
    assert "Solr is not reachable" in answer.text and "start a local Solr on port" in answer.text
    assert "Traceback" not in answer.text


def test_records_posted_as_anything_but_json_are_refused(built, serve):
    """Another site's page can post a form or plain text here unasked (a
    browser asks first only for JSON): such a body writes nothing."""
    service = serve("--solr-url", built.url)
    before = service.get("/health").json()
    for kind in ("text/plain", "application/x-www-form-urlencoded"):
        body = '{"id": "x1", "text": "Chinois on Main 2709 Main St. Santa Monica"}'
        answer = one_line_error(service.post("/records", data=body, headers={"Content-Type": kind}), 415)
        assert kind in answer["error"] and "application/json" in answer["hint"]
    assert service.get("/health").json() == before
