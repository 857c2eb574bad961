"""Reviewing and labeling pairs: `neardup serve --pairs --labels` in a child
process, against a real Solr core, over real HTTP, the page in a real
headless Chromium."""

from __future__ import annotations

import pytest
import requests

from conftest import run_cli

from neardup_solr import NearDuplicates
from neardup_solr.results.evaluate import read_gold
from neardup_solr.results.labels import read_labels

RECORDS = [
    ("1", "Art's Deli 12224 Ventura Blvd. Studio City"),
    ("2", "Arts Deli 12224 Ventura Boulevard Studio City"),
    ("3", "Art's Delicatessen 12224 Ventura Blvd. Studio City"),
    ("10", "Hotel Bel-Air 701 Stone Canyon Rd. Bel Air"),
    ("11", "Bel-Air Hotel 701 Stone Canyon Road Bel Air"),
    ("20", "Hard Rock Cafe 8600 Beverly Blvd. Los Angeles"),
    ("21", "Hard Rock Cafe 221 W. 57th St. New York"),
    ("30", "Philippe the Original 1001 N. Alameda St. Los Angeles"),
]
# A report's pair file, written by hand so the clusters are known: by size,
# cluster 1 is 1 2 3, cluster 2 is 10 11, cluster 3 is 20 21; by the lowest
# probability of each one's pairs, 3 (0.55) comes first, then 2 (0.95), then 1 (0.99).
PAIRS = "1\t2\t1\t0.9100\t0.9990\n1\t3\t1\t0.8500\t0.9900\n10\t11\t2\t0.8000\t0.9500\n20\t21\t4\t0.7100\t0.5500\n"
TOKEN = "s3cret-token-for-the-review"


@pytest.fixture
def reviewed(core, tmp_path):
    """A core indexed with RECORDS, the pair file and where labels go."""
    NearDuplicates(core).index(RECORDS)
    (tmp_path / "pairs.tsv").write_text(PAIRS)
    return core, tmp_path / "pairs.tsv", tmp_path / "labels.tsv"


def watched(context, url: str):
    """A page that records script errors, dialogs and requests beyond ``url``."""
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda err: problems.append(f"page error: {err}"))
    page.on("dialog", lambda dialog: (problems.append(f"dialog: {dialog.message}"), dialog.dismiss()))
    page.on("request", lambda request: None if request.url.startswith(url) else problems.append(request.url))
    return page, problems


def one_line_error(answer: requests.Response, status: int) -> dict:
    assert answer.status_code == status, answer.text
    body = answer.json()
    assert body["error"] and "\n" not in body["error"] and "Traceback" not in answer.text
    return body


def search_a_text(page) -> None:
    """Look up a record's text in the search box: the record itself comes first."""
    page.fill("input[name=text]", RECORDS[1][1])
    page.press("input[name=text]", "Enter")
    page.wait_for_selector("#matches")
    assert page.locator("#matches td.id").first.inner_text() == "2"
    assert page.locator("#matches td.num").first.inner_text() == "1.0000"  # the text itself
    assert page.locator("#matches form").count() == 0  # a text is no record: nothing to label


def label_in_the_clusters(page) -> None:
    """The clusters by size, then least certain first; pairs 20-21 labeled
    different (and still so after a reload), 10-11 same."""
    sizes = page.locator("#clusters section.cluster h3").all_inner_texts()
    # Each cluster is named by its smallest member.
    assert [h.split(" · ")[:2] for h in sizes] == [["Cluster 1", "3 records"], ["Cluster 10", "2 records"],
                                                   ["Cluster 20", "2 records"]]
    assert page.locator("#cluster-1 table.members td.id").all_inner_texts() == ["1", "2", "3"]
    assert page.locator("#cluster-1 table.members td.text").first.inner_text() == RECORDS[0][1]
    assert page.locator("#cluster-1 table.members td.text mark").count() > 0  # differing words marked
    page.click("text=least certain first")
    page.wait_for_url("**order=uncertain**")
    assert [s.get_attribute("id") for s in page.locator("#clusters section.cluster").all()] == [
        "cluster-20", "cluster-10", "cluster-1"]

    row = page.locator("#pair-20\\~21")
    assert row.locator("td.label").inner_text() == "unlabeled"
    row.locator("button[value=different]").click()
    page.wait_for_url("**order=uncertain**#pair-20~21")
    assert page.input_value("input[name=text]") == RECORDS[1][1]  # the search is kept too
    page.reload(wait_until="load")
    row = page.locator("#pair-20\\~21")
    assert row.locator("td.label").inner_text() == "different"
    assert row.locator("button[value=different]").get_attribute("aria-pressed") == "true"
    page.locator("#pair-10\\~11 button[value=same]").click()
    page.wait_for_url("**#pair-10~11")


def label_a_records_match(page) -> None:
    """From a cluster's member to its own near duplicates, and one labeled same there."""
    page.click("#cluster-1 table.members a >> text=1")
    page.wait_for_selector("#asked")
    assert "Near duplicates of record 1" in page.inner_text("#asked")
    page.locator("#match-2 button[value=same]").click()
    page.wait_for_url("**id=1**#match-2")
    assert page.locator("#match-2 td.label").inner_text() == "same"
    assert page.locator("#pair-1\\~2 td.label").inner_text() == "same"  # one label, shown wherever the pair is


def test_search_cluster_label_and_export_in_a_real_browser(reviewed, serve, browser):
    core, pairs, labels = reviewed
    service = serve("--solr-url", core.url, "--pairs", str(pairs), "--labels", str(labels))
    context = browser.new_context(viewport={"width": 1100, "height": 800})
    page, problems = watched(context, service.url)
    page.goto(service.url + "/", wait_until="load")
    search_a_text(page)
    label_in_the_clusters(page)
    label_a_records_match(page)
    assert not problems, problems
    context.close()

    gold = service.get("/labels/gold")
    assert gold.status_code == 200 and gold.text == "1\t2\n10\t11\n"
    assert service.get("/labels").json() == [{"a": "1", "b": "2", "label": "same"},
                                             {"a": "10", "b": "11", "label": "same"},
                                             {"a": "20", "b": "21", "label": "different"}]
    assert labels.read_text() == "20\t21\tdifferent\n10\t11\tsame\n1\t2\tsame\n"
    exported = labels.parent / "gold.tsv"
    exported.write_text(gold.text)
    assert read_gold(exported) == {frozenset(("1", "2")), frozenset(("10", "11"))}
    # The report's 4 pairs hold both gold pairs: precision 2/4, recall 2/2.
    done = run_cli("evaluate", str(pairs), "--gold", str(exported), "--no-plot")
    assert done.stdout.splitlines()[-1] == "found=4 true=2 precision=0.500 recall=1.000 f1=0.667", done.stderr


def test_with_a_token_labels_need_it_over_the_api_and_on_the_page(reviewed, serve, browser, tmp_path):
    core, pairs, labels = reviewed
    (tmp_path / "token.txt").write_text(TOKEN + "\n")
    service = serve("--solr-url", core.url, "--pairs", str(pairs), "--labels", str(labels),
                    "--token-file", str(tmp_path / "token.txt"))
    label = {"a": "20", "b": "21", "label": "different"}
    assert one_line_error(service.post("/labels", json=label), 401)["hint"]
    assert service.post("/labels", json=label, headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert not labels.exists()
    form = {"a": "10", "b": "11", "label": "same"}
    assert service.post("/labels/form", data=form, allow_redirects=False).status_code == 401
    assert service.get("/labels").json() == []
    assert service.post("/labels", json=label, headers={"Authorization": f"Bearer {TOKEN}"}).json() == label

    context = browser.new_context(viewport={"width": 1100, "height": 800})
    page, problems = watched(context, service.url)
    page.goto(service.url + "/?order=uncertain", wait_until="load")
    assert page.locator("#sign-in").count() == 1 and page.locator("form.label").count() == 0
    assert page.locator("#pair-20\\~21 td.label").inner_text() == "different"  # labels are read without it
    page.fill("#token", "wrong")
    page.click("#sign-in button")
    page.wait_for_selector("#error")
    assert page.inner_text("#error") == "that is not the service's token"
    page.click("#back")
    page.fill("#token", TOKEN)
    page.click("#sign-in button")
    page.wait_for_url("**order=uncertain")
    assert page.locator("#sign-in").count() == 0
    [cookie] = context.cookies()
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and TOKEN not in cookie["value"]
    page.locator("#pair-10\\~11 button[value=same]").click()
    page.wait_for_url("**#pair-10~11")
    assert page.locator("#pair-10\\~11 td.label").inner_text() == "same"
    assert not problems, problems
    context.close()
    assert labels.read_text() == "20\t21\tdifferent\n10\t11\tsame\n"


def test_bad_labels_are_400_with_the_reason_and_other_sites_cannot_post(reviewed, serve):
    core, pairs, labels = reviewed
    service = serve("--solr-url", core.url, "--labels", str(labels))
    for body, reason in [
        (b'{"a": "1", "b": ', "the body is not JSON"),
        (b'[{"a": "1", "b": "2", "label": "same"}]', "a label is a JSON object with a, b and label"),
        (b'{"a": "1", "b": "2"}', "the label lacks label"),
        (b'{"a": "1", "b": "2", "label": "maybe"}', "label 'maybe' is neither same nor different"),
        (b'{"a": "1", "b": "1", "label": "same"}', "a pair needs two ids, not '1' twice"),
        (b'{"a": "bad id", "b": "2", "label": "same"}', "breaks the id rule"),
        (b'{"a": ["1"], "b": "2", "label": "same"}', "a is list, not a string"),
    ]:
        answer = one_line_error(service.post("/labels", data=body, headers={"Content-Type": "application/json"}), 400)
        assert reason in answer["error"], (body, answer)
    # A body another site's page could post without asking (text or a form) is refused even when it is JSON.
    for kind in ("text/plain", "application/x-www-form-urlencoded"):
        answer = service.post("/labels", data=b'{"a": "1", "b": "2", "label": "same"}', headers={"Content-Type": kind})
        assert one_line_error(answer, 415)["hint"] == "send it with `Content-Type: application/json`"
    form = {"a": "1", "b": "2", "label": "same", "order": "uncertain"}
    for headers in ({"Origin": "http://evil.example"}, {"Sec-Fetch-Site": "cross-site"}, {"Origin": "null"}):
        refused = service.post("/labels/form", data=form, headers=headers, allow_redirects=False)
        assert refused.status_code == 403 and "another site" in refused.text, headers
    bad_form = service.post("/labels/form", data=form | {"label": "maybe"}, allow_redirects=False)
    assert bad_form.status_code == 400 and "neither same nor different" in bad_form.text
    assert not labels.exists() and service.get("/labels").json() == []
    answer = service.post("/labels/form", data=form | {"anchor": "x\r\nSet-Cookie: a=b"}, allow_redirects=False)
    assert answer.status_code == 303 and answer.headers["location"] == "/?order=uncertain"
    assert service.get("/labels").json() == [{"a": "1", "b": "2", "label": "same"}]


def test_labels_survive_a_restart_and_a_torn_last_line(reviewed, serve):
    core, pairs, labels = reviewed
    first = serve("--solr-url", core.url, "--labels", str(labels))
    for a, b, label in [("1", "2", "same"), ("21", "20", "different"), ("2", "1", "different")]:
        assert first.post("/labels", json={"a": a, "b": b, "label": label}).status_code == 200
    first.stop()
    with labels.open("a") as handle:
        handle.write("10\t11\tsa")  # as a crash in the middle of a write would leave it
    second = serve("--solr-url", core.url, "--labels", str(labels))
    assert second.get("/labels").json() == [{"a": "1", "b": "2", "label": "different"},
                                            {"a": "20", "b": "21", "label": "different"}]
    assert second.post("/labels", json={"a": "10", "b": "11", "label": "same"}).status_code == 200
    assert second.get("/labels/gold").text == "10\t11\n"
    err = second.stop()
    assert f"skipped {labels}:4: label 'sa' is neither same nor different" in err
    bad = []
    assert len(read_labels(labels, on_bad=bad.append)) == 3 and [b.line for b in bad] == [4]


def test_records_of_two_sources_are_clustered_and_labeled_by_their_keys(core, serve, browser, tmp_path):
    # Ids repeat across the sources; the page, its label buttons and the gold export keep them apart.
    nd = NearDuplicates(core)
    nd.index([("1", RECORDS[0][1]), ("10", RECORDS[3][1])], source="ours")
    nd.add([("1", RECORDS[1][1]), ("10", RECORDS[4][1])], source="theirs")
    pairs = tmp_path / "links.csv"
    pairs.write_text("source_a,id_a,source_b,id_b,distance,similarity,probability\n"
                     "ours,1,theirs,1,1,0.9100,0.9990\nours,10,theirs,10,2,0.8000,0.9500\n")
    labels = tmp_path / "labels.tsv"
    service = serve("--solr-url", core.url, "--pairs", str(pairs), "--labels", str(labels))
    context = browser.new_context(viewport={"width": 1100, "height": 800})
    page, problems = watched(context, service.url)
    page.goto(service.url + "/", wait_until="load")
    first = page.locator('[id="cluster-ours/1"]')  # named by its smallest member's key
    assert first.locator("table.members td.id").all_inner_texts() == ["ours/1", "theirs/1"]
    assert first.locator("table.members td.text").all_inner_texts() == [RECORDS[0][1], RECORDS[1][1]]
    page.locator('[id="pair-ours/10~theirs/10"] button[value=different]').click()
    page.wait_for_url("**#pair-ours/10~theirs/10")
    assert page.locator('[id="pair-ours/10~theirs/10"] td.label').inner_text() == "different"
    page.locator('[id="pair-ours/1~theirs/1"] button[value=same]').click()
    page.wait_for_url("**#pair-ours/1~theirs/1")
    # A member's own near duplicates, by its key.
    page.click('[id="cluster-ours/1"] table.members a >> text=ours/1')
    page.wait_for_selector("#asked")
    assert "ours/1" in page.inner_text("#asked")
    assert page.locator('[id="match-theirs/1"] td.label').inner_text() == "same"
    assert not problems, problems
    context.close()
    assert read_labels(labels) == {frozenset(("ours/10", "theirs/10")): False,
                                   frozenset(("ours/1", "theirs/1")): True}
    assert service.get("/labels/gold").text == "ours/1\ttheirs/1\n"
