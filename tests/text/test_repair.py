"""Each repair rule on its own, then all of them together."""

import re
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from neardup_solr.text.repair import (
    NUMBERS,
    ORDINALS,
    POSTAL,
    ampersand,
    apostrophes,
    fold_accents,
    html_entities,
    repair,
    repaired_words,
)
from neardup_solr.text.normalize import normalize


def test_html_entities_are_decoded():
    assert html_entities("Caf&eacute; Dell&#39;Artista &amp; Co &lt;b&gt;") == "Café Dell'Artista & Co <b>"


def test_accents_fold_to_ascii_letters():
    assert fold_accents("Les Célébrités Crème Brûlée") == "Les Celebrites Creme Brulee"
    assert fold_accents("Straße Øresund Æbleskiver Łódź ﬁne") == "Strasse Oresund AEbleskiver Lodz fine"


def test_possessive_goes_and_inner_apostrophes_close_up():
    assert apostrophes("Philippe's") == "Philippe"
    assert apostrophes("Art’s Deli") == "Art Deli"
    assert apostrophes("O'Groats don't") == "OGroats dont"
    assert apostrophes("'quoted' rock 'n' roll") == "'quoted' rock 'n' roll"


def test_ampersand_becomes_and():
    assert normalize(ampersand("Dean & Deluca")) == normalize("Dean and Deluca")
    assert normalize(ampersand("AT&T")) == "at and t"


def test_ordinal_words_become_numerals():
    assert ORDINALS["seventh"] == "7th"
    assert [ORDINALS[w] for w in ("first", "second", "third", "eleventh", "twelfth", "thirteenth", "twentieth")] == [
        "1st", "2nd", "3rd", "11th", "12th", "13th", "20th"
    ]
    assert repair("Seventh Ave.") == repair("7th Avenue") == "7th ave"


def test_number_words_become_numerals():
    assert [NUMBERS[w] for w in ("one", "seven", "twelve", "twenty")] == ["1", "7", "12", "20"]
    assert repair("Two Sisters") == repair("2 Sisters") == "2 sisters"


def test_postal_abbreviations():
    assert {POSTAL[w] for w in ("street", "str", "strt")} == {"st"}
    assert POSTAL["avenue"] == POSTAL["av"] == "ave"
    assert POSTAL["boulevard"] == "blvd" and POSTAL["north"] == "n" and POSTAL["suite"] == "ste"
    assert repair("1001 North Alameda Street") == repair("1001 N. Alameda St.") == "1001 n alameda st"
    # Abbreviations already in use, and ordinary words, are left alone.
    assert all(v not in POSTAL for v in POSTAL.values())
    assert repair("the best cafe in town") == "the best cafe in town"


def test_write_up_misses_now_match():
    assert repair("Les C&eacute;l&eacute;brit&eacute;s") == repair("Les Celebrites") == "les celebrites"
    assert repair("Philippe's the Original") == repair("Philippe the Original")
    assert repair("Harry's Bar & American Grill") == repair("Harry's Bar and American Grill")


@given(st.text())
def test_repair_never_erases_a_record(text):
    if normalize(text):
        assert repair(text)
    assert repair(text) == " ".join(repair(text).split())


@given(st.one_of(st.text(), st.text(st.sampled_from("ab &amp;'s Seventh Street é́-_ "))))
def test_repair_given_the_normalized_text_is_repair_alone(text):
    assert repair(text, normalize(text)) == repair(text)


WORDY = st.lists(st.sampled_from(["Seventh", "seven", "STREET", "north", "Str.", "twenty-one", "Caf&eacute;", "O'Hara's",
                                   "&", "é́", "_", "Ste", "x", "  ", "\t", "1st", "Zwölf", "ﬁrst"]), max_size=12)


@given(st.one_of(st.text(), WORDY.map(" ".join), WORDY.map("".join)))
def test_repair_is_the_rules_applied_one_after_another(text):
    # The plain reading of the module's rules: each text rule in turn, the
    # normalization, then each word looked up in each word table in turn.
    fixed = ampersand(apostrophes(fold_accents(html_entities(text))))
    words = normalize(fixed).split()
    for table in (ORDINALS, NUMBERS, POSTAL):
        words = [table.get(w, w) for w in words]
    assert repair(text) == (" ".join(words) or normalize(text))
    assert repair(text, normalize(text)) == repair(text)
    assert repaired_words(text) == repair(text).split()


ACCENTED = st.text(st.sampled_from("aeiou sS'’-.&AÆæßøŁé\u0301\u0327\u0308ﬁ½¨²ɑ́👍"))


@given(ACCENTED)
def test_accents_fold_as_the_whole_text_decomposed_would(text):
    # Folding run by run of non-ASCII text matches decomposing it all at once.
    decomposed = unicodedata.normalize("NFKD", text.translate(
        str.maketrans({"ß": "ss", "æ": "ae", "Æ": "AE", "ø": "o", "Ø": "O", "Ł": "L"})))
    assert fold_accents(text) == "".join(c for c in decomposed if not unicodedata.combining(c))


@given(ACCENTED)
def test_apostrophes_go_as_the_plain_patterns_say(text):
    possessive = re.sub(r"(?<=\w)['’]s\b", "", text)
    assert apostrophes(text) == re.sub(r"(?<=\w)['’](?=\w)", "", possessive)
