import hashlib
import re

from hypothesis import given
from hypothesis import strategies as st

from neardup_solr.text.shingles import jaccard, word_shingles
from neardup_solr.text.normalize import first_word, is_blank, md5_hex, normalize, words

DELI = "Art's Deli 12224 Ventura Blvd. Studio City"
DELICATESSEN = "Art's Delicatessen 12224 Ventura Blvd. Studio City"
HOTEL = "Hotel Bel-Air 701 Stone Canyon Rd. Bel Air"


def test_normalize_lowercases_and_turns_punctuation_but_hyphen_into_space():
    assert normalize(DELI) == "art s deli 12224 ventura blvd studio city"
    assert normalize(HOTEL) == "hotel bel-air 701 stone canyon rd bel air"


def test_normalize_collapses_any_whitespace_and_symbols():
    assert normalize("  A\t\tB  \u00a0C\n") == "a b c"
    assert normalize('x"y:z(w)[v]{u}\\t*s?r!q_p') == "x y z w v u t s r q p"
    assert normalize("Caf\u00e9 \u2014 M\u00fcnchen") == "caf\u00e9 m\u00fcnchen"


@given(st.text(st.characters(max_codepoint=127)) | st.text()
       | st.text(st.sampled_from("aZ9 _-.,'\t’“”—éÉ\u00a0\u2009\u3000\ud800\u0301ǅ"))
       | st.text(st.characters(codec="utf-8")))
def test_normalize_is_the_plain_pattern_on_any_text(text):
    # ASCII text takes a table instead of the pattern, other text a byte
    # table and the pattern for its words outside ASCII; all say the same.
    assert normalize(text) == " ".join(re.sub(r"[^\w\s-]|_", " ", text.lower()).split())


def test_words_first_word_and_count():
    text = normalize(DELI)
    assert words(text) == ["art", "s", "deli", "12224", "ventura", "blvd", "studio", "city"]
    assert first_word(text) == "art"
    assert first_word("solo") == "solo"


def test_md5_is_the_digest_of_the_normalized_utf8_text():
    assert md5_hex("abc") == "900150983cd24fb0d6963f7d28e17f72"  # RFC 1321 test suite
    assert md5_hex(normalize("Caf\u00e9!")) == hashlib.md5("caf\u00e9".encode()).hexdigest()


@given(st.text())
def test_is_blank_agrees_with_normalize(text):
    assert is_blank(text) == (normalize(text) == "")


def test_word_shingles_of_three_words():
    assert word_shingles(["a", "b", "c", "d"]) == ["a b c", "b c d"]
    assert word_shingles(["a", "b", "a", "b", "a"]) == ["a b a", "b a b"]


def test_a_record_shorter_than_k_words_is_one_shingle_itself():
    assert word_shingles(["a", "b"]) == ["a b"]
    assert word_shingles(["a"]) == ["a"]
    assert word_shingles([]) == []


def test_write_up_example_word_and_shingle_jaccard():
    deli, delicatessen, hotel = (words(normalize(t)) for t in (DELI, DELICATESSEN, HOTEL))
    assert round(jaccard(deli, delicatessen), 3) == 0.778  # 7 shared words of 9
    assert round(jaccard(word_shingles(deli), word_shingles(delicatessen)), 3) == 0.333  # 3 of 9
    assert jaccard(deli, hotel) == 0
    assert jaccard(word_shingles(deli), word_shingles(hotel)) == 0
