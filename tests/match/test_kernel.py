"""The verification kernel against the plain-Python similarity it replaces in bulk."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from rapidfuzz.distance import JaroWinkler

from conftest import run_cli, write_records

from neardup_solr.match.kernel import CloseTable, Rows, Vocabulary, _jaro_winkler, score_pairs
from neardup_solr.match.similarity import CLOSE, ROUNDING, CloseWords, Weights, number_agreement, numbers, similarity

# Words with close spellings (typos), numbers, and words that share nothing.
WORDS = ["deli", "dell", "delly", "arts", "art", "artz", "ventura", "ventra", "blvd", "studio", "studo", "city",
         "12224", "12242", "1224", "90210", "3rd", "st", "ave", "hotel", "hotl", "bel", "air", "bell", "canyon",
         "stone", "stoner", "701", "7o1", "rd", "los", "angeles", "angels", "a", "aa", "x"]

records = st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=12), min_size=2, max_size=12)


def both_ways(texts, doc_freq, pairs):
    weights = Weights(doc_count=1000, doc_freq=doc_freq)
    vectors = [weights.vector(words) for words in texts]
    close = CloseWords(w for v in vectors for w in v)
    expected_similarity = [similarity(vectors[a], vectors[b], close) for a, b in pairs]
    expected_level = [number_agreement(numbers(vectors[a]), numbers(vectors[b])) for a, b in pairs]
    vocabulary = Vocabulary()
    rows = Rows.of(vectors, vocabulary)
    left = np.array([a for a, _ in pairs], np.int64)
    right = np.array([b for _, b in pairs], np.int64)
    # Close words of the whole vocabulary, or of the pairs' missing words only, compiled or not.
    tables = [CloseTable.of(vocabulary.words),
              *(CloseTable.needed(vocabulary.words, rows, left, right, whole=False, compiled=c) for c in (True, False))]
    results = [score_pairs(rows, table, left, right, compiled=c) for c in (True, False) for table in tables]
    # Rows kept in another order than the record numbers (the order records arrive in a report).
    shuffled = Rows.of(vectors[::-1], Vocabulary())
    row_of = np.arange(len(vectors))[::-1].copy()
    vocabulary_words = [w for v in vectors[::-1] for w in v]
    table = CloseTable.needed(list(dict.fromkeys(vocabulary_words)), shuffled, left, right, row_of, whole=False)
    results.append(score_pairs(shuffled, table, left, right, row_of))
    return expected_similarity, expected_level, results


@settings(max_examples=300, deadline=None)
@given(records, st.dictionaries(st.sampled_from(WORDS), st.integers(1, 999)), st.data())
def test_the_kernel_gives_the_dict_versions_floats_to_the_last_bit(texts, doc_freq, data):
    count = len(texts)
    pairs = data.draw(st.lists(st.tuples(st.integers(0, count - 1), st.integers(0, count - 1)), min_size=1,
                               max_size=30))
    expected_similarity, expected_level, results = both_ways(texts, doc_freq, pairs)
    for similarities, levels in results:
        # Bit for bit, not approximately: the same terms summed in the same order.
        assert similarities.tolist() == expected_similarity
        assert levels.tolist() == expected_level


def test_typos_count_through_close_words_and_numbers_are_told_apart():
    texts = [["arts", "deli", "12224", "ventura", "blvd"], ["artz", "deli", "12224", "ventra", "blvd"],
             ["arts", "deli", "12242", "ventura", "blvd"], ["hotel", "bel", "air"]]
    expected_similarity, expected_level, results = both_ways(texts, {}, [(0, 1), (0, 2), (0, 3), (1, 1)])
    similarities, levels = results[0]
    # Typos cost a little, not the whole word; a record is itself; no shared word is nothing.
    assert 0.8 < similarities[0] < 1.0
    assert similarities[2] == 0.0
    assert abs(similarities[3] - 1.0) < 1e-12
    assert levels.tolist() == [4, 1, 0, 4]
    assert similarities.tolist() == expected_similarity


def jaro_winkler(first: str, second: str, compiled: bool = True) -> float:
    table = CloseTable.spelled([first, second])
    flags = np.zeros(max(len(first), len(second)), bool)
    fn = _jaro_winkler if compiled else _jaro_winkler.py_func
    return fn(table.chars, 0, len(first), len(first), len(first) + len(second), table.letters[0], table.letters[1],
              flags, flags.copy(), CLOSE - ROUNDING)


words = st.text(alphabet=st.sampled_from("abcdeéz1"), max_size=12) | st.text(max_size=8)


@settings(max_examples=3000, deadline=None)
@given(words, words)
def test_jaro_winkler_is_rapidfuzzs_to_the_float32_it_gives(first, second):
    expected = float(np.float32(JaroWinkler.similarity(first, second, score_cutoff=CLOSE - ROUNDING)))
    assert jaro_winkler(first, second) == expected
    assert jaro_winkler(first, second, compiled=False) == expected


def test_jaro_winkler_at_the_close_words_edge():
    # "a" / "aa" is 0.85 exactly in theory, and close; "ab" / "ba" shares nothing in its window.
    assert jaro_winkler("a", "aa") == float(np.float32(JaroWinkler.similarity("a", "aa"))) > 0
    assert jaro_winkler("ab", "ba") == 0.0
    assert jaro_winkler("martha", "marhta") == float(np.float32(JaroWinkler.similarity("martha", "marhta")))


COPIES = ["Art's Deli 12224 Ventura Blvd. Studio City", "Arts Deli, 12224 Ventura Boulevard, Studio City",
          "Hotel Bel-Air 701 Stone Canyon Rd. Bel Air", "Bel-Air Hotel 701 Stone Canyon Road Bel Air",
          "Philippe the Original 1001 N. Alameda St. Los Angeles"]


def test_the_first_report_after_an_install_says_once_that_it_compiles_the_kernels(core, tmp_path):
    records = write_records(tmp_path / "records.txt", [f"{n} {text}" for n, text in enumerate(COPIES, start=1)])
    assert run_cli("index", str(records), "--solr-url", core.url, "-q").returncode == 0
    # numba's cache of a fresh install: empty (numba reads where it is as it is imported).
    fresh = {"NUMBA_CACHE_DIR": str(tmp_path / "numba-cache")}
    said = []
    for run in range(2):
        done = run_cli("report", str(tmp_path / f"pairs{run}.tsv"), "--solr-url", core.url, "-q", env=fresh)
        assert done.returncode == 0, done.stderr
        found = {tuple(line.split("\t")[:2]) for line in (tmp_path / f"pairs{run}.tsv").read_text().splitlines()}
        assert {("1", "2"), ("3", "4")} <= found  # candidates were numbered and scored: the kernels ran
        said.append([line for line in done.stderr.splitlines() if "compiling" in line])
    assert said == [["compiling the kernels (once after an install)..."], []]
    assert any((tmp_path / "numba-cache").rglob("*.nbi"))  # compiled once, into the cache, for the next run
