import subprocess
import sys

import mmh3
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup_solr.text.shingles import jaccard
from neardup_solr.lsh import minima, signatures
from neardup_solr.lsh.signatures import MinHasher, masks, multipliers, shingle_hash, tagged_values, untag


def reference_signature(shingles, n):
    """The scheme written out plainly: min over shingles of hash XOR mask_i."""
    hashes = [mmh3.hash(s, 42, signed=False) for s in shingles]
    return [min(h ^ int(m) for h in hashes) for m in masks(n)]


def test_shingle_hash_is_unsigned_murmur3_with_seed_42():
    assert shingle_hash("art s deli") == mmh3.hash("art s deli", 42) % 2**32


def test_masks_are_distinct_and_a_longer_list_extends_a_shorter_one():
    assert len(set(masks(128).tolist())) == 128
    assert masks(20).tolist() == masks(128)[:20].tolist()


@given(st.lists(st.lists(st.text(min_size=1), min_size=1, max_size=8), min_size=1, max_size=6))
@settings(max_examples=60)
def test_batch_signatures_equal_the_plain_scheme(shingle_lists):
    got = MinHasher(16).signatures(shingle_lists)
    assert got.dtype == np.uint32
    assert got.tolist() == [reference_signature(s, 16) for s in shingle_lists]


def test_prefix_of_a_long_signature_is_the_short_signature():
    shingles = ["a b c", "b c d", "c d e"]
    assert MinHasher(20).signature(shingles).tolist() == MinHasher(128).signature(shingles)[:20].tolist()


def test_share_of_equal_values_estimates_jaccard():
    rng = np.random.default_rng(7)
    hasher = MinHasher(512)
    for overlap in (0, 10, 25, 40):
        a = [f"a{i}" for i in rng.permutation(50)[:50]]
        b = a[:overlap] + [f"b{i}" for i in range(50 - overlap)]
        estimate = float(np.mean(hasher.signature(a) == hasher.signature(b)))
        assert estimate == pytest.approx(jaccard(a, b), abs=0.07)


def test_tagged_values_keep_positions():
    values = tagged_values(np.array([7, 7, 9], dtype=np.uint32))
    assert values == ["0_7", "1_7", "2_9"]
    assert [untag(v) for v in values] == [(0, 7), (1, 7), (2, 9)]


def test_a_record_without_shingles_cannot_be_signed():
    with pytest.raises(ValueError):
        MinHasher(4).signatures([["a"], []])


@given(st.lists(st.binary(max_size=40), min_size=1, max_size=30), st.integers(0, 2**32 - 1))
def test_vectorized_murmur3_equals_mmh3(strings, seed):
    from neardup_solr.lsh.murmur import murmur3_32

    lengths = np.array([len(s) for s in strings], dtype=np.int64)
    starts = np.cumsum(lengths) - lengths
    buffer = np.frombuffer(b"".join(strings), dtype=np.uint8)
    got = murmur3_32(buffer, starts, lengths, seed)
    assert got.tolist() == [mmh3.hash(s, seed, signed=False) for s in strings]


@given(st.binary(max_size=60), st.integers(1, 9))
def test_window_hashes_equal_mmh3_of_each_window(data, width):
    from neardup_solr.lsh.murmur import window_hashes

    got = window_hashes(np.frombuffer(data, dtype=np.uint8), width, 42)
    assert got.tolist() == [mmh3.hash(data[i : i + width], 42, signed=False) for i in range(len(data) - width + 1)]


@given(st.lists(st.text(min_size=1, max_size=30), min_size=1, max_size=12))
@settings(max_examples=80)
def test_text_signatures_equal_signatures_of_char_shingles(texts):
    from neardup_solr.text.shingles import char_shingles

    hasher = MinHasher(24)
    assert hasher.text_signatures(texts, 3).tolist() == hasher.signatures([char_shingles(t) for t in texts]).tolist()
    assert hasher.text_signatures(texts, 3).tolist() == [reference_signature(char_shingles(t), 24) for t in texts]


# Words of a few letters, spaces of every kind and a non-ASCII letter: the
# windows of single-spaced ASCII texts and the shingles of all the others.
_WORDY = st.text(alphabet=st.sampled_from(["a", "b", "c", " ", "\t", "\x1c", "\u00e9"]), min_size=1,
                 max_size=30).filter(lambda text: text.split())


@given(st.lists(_WORDY, min_size=1, max_size=12), st.integers(1, 4))
@settings(max_examples=150)
def test_word_signatures_equal_signatures_of_word_shingles(texts, k):
    """The byte windows of a text's word shingles sign it as its shingles do."""
    from neardup_solr.text.shingles import word_shingles

    hasher = MinHasher(24, bits=16)
    assert (hasher.word_signatures(texts, k).tolist()
            == hasher.signatures([word_shingles(t.split(), k) for t in texts]).tolist())


def test_a_word_shingle_longer_than_a_term_signs_as_its_digest():
    """The index keeps a shingle of more than MAX_TERM_BYTES as its digest,
    and the signature is of what the index keeps."""
    from neardup_solr.text.analysis import MAX_TERM_BYTES, lsh_shingles

    texts = ["x" * MAX_TERM_BYTES + " y z", "a b c d"]
    hasher = MinHasher(24, bits=16)
    assert lsh_shingles(texts[0], "words")[0].startswith("md5:")
    assert (hasher.word_signatures(texts, 3).tolist()
            == hasher.signatures([lsh_shingles(t, "words") for t in texts]).tolist())


@given(st.lists(st.lists(st.text(min_size=1), min_size=1, max_size=8), min_size=1, max_size=6))
@settings(max_examples=40)
def test_16_bit_signatures_are_the_minima_of_the_top_16_bits_permuted(shingle_lists):
    got = MinHasher(12, bits=16).signatures(shingle_lists)
    assert got.dtype == np.uint16
    top = [int(m) >> 16 for m in masks(12)]
    odd = [int(a) for a in multipliers(12)]
    assert all(a % 2 == 1 for a in odd)
    assert got.tolist() == [
        [min(((mmh3.hash(s, 42, signed=False) >> 16) ^ m) * a % 65536 for s in shingles) for m, a in zip(top, odd)]
        for shingles in shingle_lists
    ]


def test_16_bit_values_still_estimate_jaccard():
    hasher = MinHasher(512, bits=16)
    a = [f"x{i}" for i in range(60)]
    b = a[:30] + [f"y{i}" for i in range(30)]  # J = 30 / 90
    assert float(np.mean(hasher.signature(a) == hasher.signature(b))) == pytest.approx(1 / 3, abs=0.07)


@pytest.mark.parametrize("bits", [16, 32])
def test_a_large_batch_signs_each_record_as_it_would_alone(bits):
    # Over MinHasher.CHUNK shingles in all: the batch goes through the
    # cache-blocked path, each record alone through the direct one.
    rng = np.random.default_rng(3)
    shingle_lists = [[f"s{v}" for v in rng.integers(0, 400, size=rng.integers(1, 30))] for _ in range(120)]
    hasher = MinHasher(24, bits=bits)
    assert sum(map(len, shingle_lists)) > MinHasher.CHUNK
    batch = hasher.signatures(shingle_lists).tolist()
    assert batch == [hasher.signature(s).tolist() for s in shingle_lists]
    if bits == 32:
        assert batch == [reference_signature(s, 24) for s in shingle_lists]


def test_many_records_16_bit_values_are_the_same_compiled_plain_and_by_numpy(monkeypatch):
    # Over MinHasher.CHUNK hashes: the compiled loop; its plain twin and
    # numpy's chunked passes (numba taken away) must give the formula's values.
    rng = np.random.default_rng(5)
    shingle_lists = [[f"w{v}" for v in rng.integers(0, 900, size=rng.integers(1, 60))] for _ in range(150)]
    hasher = MinHasher(20, bits=16)
    monkeypatch.setattr(signatures, "KERNEL_HASHES", 0)  # the kernel even for a batch this small
    top = [int(m) >> 16 for m in masks(20)]
    odd = [int(a) for a in multipliers(20)]
    formula = [[min(((mmh3.hash(s, 42, signed=False) >> 16) ^ m) * a % 65536 for s in shingles)
                for m, a in zip(top, odd)] for shingles in shingle_lists]
    assert hasher.signatures(shingle_lists).tolist() == formula
    hashes = np.array([mmh3.hash(s, 42, signed=False) >> 16 for shingles in shingle_lists for s in shingles], np.uint16)
    counts = np.array([len(s) for s in shingle_lists], np.int64)
    twin = minima._minima16.py_func(hashes, np.cumsum(counts) - counts, counts, hasher.masks, hasher.multipliers,
                                        np.empty((len(counts), 20), np.uint16))
    assert twin.tolist() == formula
    monkeypatch.setattr(signatures.compiled, "available", lambda: False)
    assert hasher.signatures(shingle_lists).tolist() == formula


def test_a_small_batch_in_a_process_without_numba_does_not_import_it():
    # Importing numba costs a quarter of a second: a small index or a query should not pay it.
    code = ("import sys; from neardup_solr.lsh.signatures import MinHasher; "
            "MinHasher(20, bits=16).signatures([[f'w{i}{j}' for j in range(30)] for i in range(100)]); "
            "print('numba' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
