"""What Solr stores for a record, read back from the real Solr."""

import hashlib

import mmh3
import pytest
from neardup_solr.errors import OldIndex
from neardup_solr.index.documents import DocumentBuilder
from neardup_solr.index.state import IndexSettings
from neardup_solr.index.writer import index_records
from neardup_solr.records.record import Record
from neardup_solr.text.repair import repair
from neardup_solr.index.solr import term

TEXT = "Art's Deli 12224 Ventura Blvd. Studio City"


def test_fields_as_solr_stores_them(core):
    index_records(core, [Record("536", TEXT), Record("7", "Bel-Air")])
    (doc,) = core.search('id:"536"').docs
    assert doc["content"] == TEXT
    assert doc["md5_hash"] == hashlib.md5(b"art s deli 12224 ventura blvd studio city").hexdigest()
    assert doc["first_word"] == "art"
    assert doc["num_words"] == 8
    assert doc["word_shingles"] == [
        "art s deli",
        "s deli 12224",
        "deli 12224 ventura",
        "12224 ventura blvd",
        "ventura blvd studio",
        "blvd studio city",
    ]
    assert len(doc["minhash_values"]) == 20
    positions = [int(v.split("_")[0]) for v in doc["minhash_values"]]
    assert positions == list(range(20))
    # Value 0 is the smallest shingle hash XOR mask 0.
    mask0 = mmh3.hash("mask 0", 1, signed=False)
    expected0 = min(mmh3.hash(s, 42, signed=False) ^ mask0 for s in doc["word_shingles"])
    assert doc["minhash_values"][0] == f"0_{expected0}"
    (short,) = core.search('id:"7"').docs
    assert short["word_shingles"] == ["bel-air"]
    assert short["num_words"] == 1


def test_fields_are_searchable_as_exact_terms(core):
    index_records(core, [Record("1", TEXT)])
    assert core.count('word_shingles:"deli 12224 ventura"') == 1
    assert core.count('word_shingles:"deli"') == 0
    assert core.count('first_word:"art"') == 1
    assert core.count("num_words:[8 TO 8]") == 1


def test_content_is_stored_but_not_searchable(core):
    index_records(core, [Record("1", TEXT)])
    field = core.get("schema/fields/content", showDefaults="true")["field"]
    assert (field["indexed"], field["stored"]) == (False, True)
    assert core.count('content:"Art\'s Deli 12224 Ventura Blvd. Studio City"') == 0


def test_multi_valued_fields_and_types_in_the_schema(core):
    fields = {f["name"]: f for f in core.get("schema/fields", showDefaults="true")["fields"]}
    assert fields["id"]["name"] == core.get("schema/uniquekey")["uniqueKey"]
    assert fields["word_shingles"]["multiValued"] and fields["minhash_values"]["multiValued"]
    assert fields["num_words"]["type"] == "pint"
    for name in ("md5_hash", "first_word", "word_shingles", "minhash_values"):
        assert fields[name]["indexed"], name


def test_a_record_indexed_again_replaces_the_old_one(core):
    index_records(core, [Record("1", TEXT)])
    index_records(core, [Record("1", "Hotel Bel-Air")])
    assert core.count() == 1
    assert core.search('id:"1"').docs[0]["first_word"] == "hotel"


def test_band_keys_and_tokens_as_solr_stores_them(core):
    index_records(core, [Record("1", TEXT), Record("2", "Art's Delicatessen 12224 Ventura Boulevard")])
    (doc,) = core.search('id:"1"', fl="content_lsh").docs
    expected = DocumentBuilder(IndexSettings()).band_keys([repair(TEXT)])[0]
    assert len(expected) == 42 and sorted(doc["content_lsh"]) == sorted(expected)
    assert all(core.count(term("content_lsh", key)) >= 1 for key in expected)
    for word in ["art", "deli", "12224", "ventura", "blvd", "studio", "city"]:
        assert core.count(term("tokens", word)) >= 1, word
    assert core.count(term("tokens", "art's")) == core.count(term("tokens", "s")) == 0
    total, counts = core.term_counts("tokens")
    assert total == 2
    assert counts["art"] == counts["12224"] == counts["blvd"] == 2
    assert counts["deli"] == counts["delicatessen"] == 1
    assert core.term_counts("tokens", ["deli", "blvd", "absent"]) == (2, {"deli": 1, "blvd": 2})


def test_index_settings_are_kept_in_the_index(core):
    assert IndexSettings.load(core) == IndexSettings()
    settings = IndexSettings(minhash_values=32, bands=20, band_rows=5, lsh_shingles="words", reference=False)
    settings.save(core)
    assert IndexSettings.load(core) == settings


def test_an_index_of_an_earlier_layout_is_refused_with_a_hint_not_read_wrong(core, tmp_path):
    from conftest import run_cli

    records = tmp_path / "r.txt"
    records.write_text("1 Art's Deli 12224 Ventura Blvd. Studio City\n2 Art's Deli 12224 Ventura Blvd Studio City\n")
    assert run_cli("index", str(records), "--solr-url", core.url).returncode == 0
    assert IndexSettings.load(core).bands > 0
    # An earlier version kept its settings without the layout (its band keys were text).
    core.set_user_properties({"neardup.layout": ""})
    with pytest.raises(OldIndex):
        IndexSettings.load(core)
    done = run_cli("report", str(tmp_path / "p.tsv"), "--solr-url", core.url)
    assert done.returncode == 1 and "built by an earlier version" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "p.tsv").exists()
    # What the hint says to do: indexing the records again makes an index this version reads.
    assert run_cli("index", str(records), "--solr-url", core.url).returncode == 0
    assert run_cli("report", str(tmp_path / "p.tsv"), "--solr-url", core.url).returncode == 0
    assert (tmp_path / "p.tsv").read_text().startswith("1\t2\t")


def test_a_lean_index_holds_only_the_default_modes_fields(core, tmp_path):
    from conftest import run_cli

    records = tmp_path / "r.txt"
    records.write_text("1 Art's Deli 12224 Ventura Blvd. Studio City\n2 Art's Deli 12224 Ventura Blvd Studio City\n")
    assert run_cli("index", str(records), "--lean", "--solr-url", core.url).returncode == 0
    (doc,) = core.search('id:"1"', fl="*").docs
    assert set(doc) - {"_version_"} == {"id", "content", "md5_hash", "content_lsh", "rank"}
    assert core.count(term("tokens", "deli")) == 2
    done = run_cli("report", "--shingles", str(tmp_path / "p.tsv"), "--solr-url", core.url)
    assert done.returncode == 1 and "(hint: index again with --reference)" in done.stderr
    assert run_cli("report", str(tmp_path / "p.tsv"), "--solr-url", core.url).returncode == 0
    assert (tmp_path / "p.tsv").read_text().startswith("1\t2\t0\t")


def test_records_are_indexed_lean_unless_the_reference_fields_are_asked_for(core, tmp_path):
    """An index keeps only the default mode's fields by default, of a table
    of fields as of records of one text; with --reference the reference
    modes work on it, and the reference workflow's name for the command
    (index-restaurants) asks for them."""
    from conftest import run_cli

    table = tmp_path / "people.csv"
    table.write_text("id,first,last,city\n1,Ann,Lee,Paris\n2,Ann,Lee,Paris\n3,Bob,Stone,Lyon\n", encoding="utf-8")
    assert run_cli("index", str(table), "--solr-url", core.url).returncode == 0
    (doc,) = core.search('id:"1"', fl="*").docs
    assert not {"word_shingles", "minhash_values", "first_word", "num_words"} & set(doc)
    done = run_cli("report", "--minhash", str(tmp_path / "p.tsv"), "--solr-url", core.url)
    assert done.returncode == 1 and "(hint: index again with --reference)" in done.stderr
    assert run_cli("index", str(table), "--reference", "--solr-url", core.url).returncode == 0
    (doc,) = core.search('id:"1"', fl="*").docs
    assert {"word_shingles", "minhash_values", "first_word", "num_words"} <= set(doc)
    done = run_cli("report", "--shingles", str(tmp_path / "p.tsv"), "--solr-url", core.url)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "p.tsv").read_text().startswith("1\t2\t0")
    lines = tmp_path / "r.txt"
    lines.write_text("1 Art's Deli 12224 Ventura Blvd. Studio City\n", encoding="utf-8")
    assert run_cli("index", str(lines), "--solr-url", core.url).returncode == 0
    (doc,) = core.search('id:"1"', fl="*").docs
    assert not {"word_shingles", "minhash_values"} & set(doc)
    done = run_cli("report", "--shingles", str(tmp_path / "p.tsv"), "--solr-url", core.url)
    assert done.returncode == 1 and "(hint: index again with --reference)" in done.stderr
    assert run_cli("index-restaurants", str(lines), "--solr-url", core.url).returncode == 0
    (doc,) = core.search('id:"1"', fl="*").docs
    assert {"word_shingles", "minhash_values"} <= set(doc)
