"""Synthetic documents of real prose: deterministic, 100-600 words, near copies
that share most sentences, a footer shared by documents that are not copies."""

import re

import pytest

from bench.documents import FOOTERS, generate
from test_bench_generate import check_seeded, components, read

# Sentences end with . ! or ? followed by a space and a capital, a quote or a bracket.
SENTENCE = re.compile(r"(?<=[.!?]) (?=[A-Z\"(‘“*])")


@pytest.fixture(scope="module")
def documents(tmp_path_factory):
    records, pairs = read(generate(1500, 4, tmp_path_factory.mktemp("documents"))[0].parent)
    return dict(records), pairs


def sentences(text):
    return set(SENTENCE.split(text))


def footer_of(text):
    return next((f for f in FOOTERS if text.endswith(f)), None)


def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path):
    check_seeded(tmp_path, lambda seed, folder: generate(300, seed, folder))


def test_each_document_is_one_line_of_100_to_600_words_of_prose(documents):
    text, _ = documents
    assert list(text) == [str(i) for i in range(1, 1501)]
    lengths = [len(t.split()) for t in text.values()]
    assert min(lengths) >= 100 and max(lengths) <= 600
    assert max(lengths) - min(lengths) >= 300  # lengths spread over the range, not one size
    assert not any(re.search(r"[\x00-\x1f]", t) for t in text.values())
    # Prose: sentences of words, mostly letters.
    for t in text.values():
        assert len(sentences(t)) >= 3
        assert sum(c.isalpha() or c == " " for c in t) / len(t) >= 0.85


def test_a_tenth_are_in_clusters_of_near_copies_that_share_most_sentences(documents):
    text, pairs = documents
    groups = components(pairs)
    assert 0.08 <= sum(map(len, groups)) / len(text) <= 0.12 and {len(g) for g in groups} <= {2, 3, 4, 5}
    shares = []
    for a, b in pairs:
        x, y = sentences(text[a]), sentences(text[b])
        assert text[a] != text[b]
        shares.append(len(x & y) / min(len(x), len(y)))
    # A copy keeps at least four in five of its original's sentences and adds at most four.
    assert min(shares) >= 1 / 3
    assert sorted(shares)[len(shares) // 10] >= 0.6


def test_documents_that_share_a_footer_and_are_not_copies_share_little_else(documents):
    text, pairs = documents
    truth = set(pairs)
    footers = {i: footer_of(t) for i, t in text.items()}
    assert 0.2 <= sum(f is not None for f in footers.values()) / len(text) <= 0.4
    boilerplate = set().union(*(sentences(f) for f in FOOTERS))
    by_footer = {}
    for i, f in footers.items():
        if f:
            by_footer.setdefault(f, []).append(i)
    shared = []
    for members in by_footer.values():
        for k, a in enumerate(members[:200]):
            for b in members[k + 1 : 200]:
                if (a, b) not in truth and (b, a) not in truth:
                    x, y = sentences(text[a]) - boilerplate, sentences(text[b]) - boilerplate
                    shared.append((len(x & y), len(x & y) / min(len(x), len(y))))
    assert len(shared) >= 10000  # many documents that are not copies end the same way
    assert max(share for _, share in shared) < 1 / 3
    assert sum(count <= 1 for count, _ in shared) >= 0.99 * len(shared)
