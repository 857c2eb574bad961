"""LSH banding: keys, the S-curve, and choosing bands x rows."""


import numpy as np
import pytest

from neardup_solr.lsh.bands import band_hashes, band_keys, band_range, collision_probability, tune
from neardup_solr.lsh.signatures import MinHasher


def test_band_keys_are_tagged_with_their_band_and_depend_only_on_it():
    sig = np.array([[1, 2, 3, 4, 5, 6], [1, 2, 3, 9, 5, 6], [4, 5, 6, 1, 2, 3]], dtype=np.uint32)
    keys = band_keys(sig, bands=3, band_rows=2)
    assert [(k >> 56) & 0xFF for k in keys[0]] == [0, 1, 2]  # the top byte
    assert all(band_range(i)[0] <= k <= band_range(i)[1] for i, k in enumerate(keys[0]))
    assert all(-(1 << 63) <= k < 1 << 63 for k in keys[0])  # Solr's long
    assert keys[0][0] == keys[1][0] and keys[0][2] == keys[1][2]  # same rows, same key
    assert keys[0][1] != keys[1][1]  # one value differs
    # The same values in another band make another key.
    assert keys[2][0] != keys[0][1] and keys[2][1] != keys[0][0]
    assert set(keys[2]).isdisjoint(keys[0])


def test_each_bands_keys_fill_a_range_of_its_own_as_signed_numbers():
    sig = np.arange(2 * 256, dtype=np.uint32).reshape(1, -1)
    keys = band_keys(sig, bands=256, band_rows=2)[0]
    ranges = [band_range(b) for b in range(256)]
    assert [(k >> 56) & 0xFF for k in keys] == list(range(256))
    assert all(low <= k <= high for k, (low, high) in zip(keys, ranges))
    # The ranges are 2^56 numbers each, none overlapping, together every 64-bit number.
    assert all(high - low + 1 == 1 << 56 for low, high in ranges)
    assert sorted(ranges)[0][0] == -(1 << 63) and sorted(ranges)[-1][1] == (1 << 63) - 1
    assert all(a[1] + 1 == b[0] for a, b in zip(sorted(ranges), sorted(ranges)[1:]))


def test_banding_needs_enough_values():
    with pytest.raises(ValueError):
        band_hashes(np.zeros((1, 5), dtype=np.uint32), bands=3, band_rows=2)


def brute_force(low, high, values, miss=0.01, false_hit=0.001):
    """Every (b, r) within the budget, straight from the S-curve."""
    return [
        (b, r)
        for r in range(1, values + 1)
        for b in range(1, values // r + 1)
        if collision_probability(high, b, r) >= 1 - miss and collision_probability(low, b, r) <= false_hit
    ]


@pytest.mark.parametrize("low,high,values", [(0.2, 0.8, 256), (0.1, 0.7, 200), (0.3, 0.9, 128), (0.05, 0.5, 400)])
def test_tune_picks_the_cheapest_choice_meeting_both_targets(low, high, values):
    tuning = tune(low, high, values)
    feasible = brute_force(low, high, values)
    assert tuning.meets and feasible
    c = tuning.choice
    assert (c.bands, c.band_rows) in feasible
    assert c.values == min(b * r for b, r in feasible)
    assert c.probability(low) == pytest.approx(1 - (1 - low**c.band_rows) ** c.bands)
    assert c.probability(high) == pytest.approx(1 - (1 - high**c.band_rows) ** c.bands)


@pytest.mark.parametrize("low,high,values", [(0.2, 0.8, 128), (0.3, 0.9, 64)])
def test_tune_agrees_with_brute_force_when_nothing_fits(low, high, values):
    tuning = tune(low, high, values)
    assert not tuning.meets and not brute_force(low, high, values)
    assert brute_force(low, high, tuning.values_needed)
    assert not brute_force(low, high, tuning.values_needed - 1)


def test_tune_says_when_no_choice_fits_and_how_many_values_would():
    tuning = tune(0.05, 0.5, 128)
    assert not tuning.meets and not brute_force(0.05, 0.5, 128)
    assert tuning.values_needed == min(
        b * r for r in range(1, 16) for b in range(1, 400)
        if collision_probability(0.5, b, r) >= 0.99 and collision_probability(0.05, b, r) <= 0.001
    )
    assert tuning.choice.values <= 128
    assert brute_force(0.05, 0.5, tuning.values_needed)


@pytest.mark.parametrize("bits", [32, 16])
def test_band_collisions_follow_the_s_curve(bits):
    """Pairs of known Jaccard similarity collide as often as 1-(1-s^r)^b says."""
    bands, band_rows, trials = 8, 4, 400
    hasher = MinHasher(bands * band_rows, bits=bits)
    rng = np.random.default_rng(3)
    for shared in (10, 30, 45):  # of 60 elements each: J = shared / (120 - shared)
        s = shared / (120 - shared)
        hits = 0
        for t in range(trials):
            common = [f"c{t}_{i}" for i in range(shared)]
            a = common + [f"a{t}_{i}" for i in range(60 - shared)]
            b = common + [f"b{t}_{i}" for i in range(60 - shared)]
            ka, kb = band_keys(hasher.signatures([list(rng.permutation(a)), b]), bands, band_rows)
            hits += bool(set(ka) & set(kb))
        expected = collision_probability(s, bands, band_rows)
        assert abs(hits / trials - expected) < 4 * np.sqrt(expected * (1 - expected) / trials) + 0.02, (s, hits)


def test_tune_command_prints_the_table_and_choice_and_saves_the_curve(tmp_path):
    from conftest import run_cli

    plot = tmp_path / "curve.png"
    done = run_cli("tune", "--low", "0.1", "--high", "0.7", "--values", "200", "--plot", str(plot))
    assert done.returncode == 0, done.stderr
    c = tune(0.1, 0.7, 200).choice
    assert f"choice: --bands {c.bands} --band-rows {c.band_rows} " in done.stdout
    assert done.stdout.splitlines()[0].split() == ["rows", "bands", "values", "P(low)", "P(high)", "s*", "meets"]
    assert plot.read_bytes()[:4] == b"\x89PNG"
    done = run_cli("tune", "--low", "0.05", "--high", "0.5", "--values", "128", "--plot", str(plot))
    # r=4: 72 bands catch 0.5 (1-(15/16)^72 >= 0.99) and up to 160 keep 0.05 under 0.001.
    assert "meeting both needs 288 values" in done.stdout
    # The old name of --values gives the same answer, and says its new name.
    old = run_cli("tune", "--low", "0.05", "--high", "0.5", "--hashes", "128", "--plot", str(plot))
    assert old.stdout == done.stdout
    assert "neardup: warning: --hashes is deprecated: use --values" in old.stderr
    assert "deprecated" not in done.stderr


def random_agreements(seed: int = 5) -> np.ndarray:
    """Random pairs of 300 short texts by agreeing MinHash values: mostly
    unrelated, a few sharing words, as a sample of real records is."""
    from neardup_solr.lsh.bands import SIGNATURE_VALUES, agreements

    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(400)]
    texts = [" ".join(rng.choice(words, size=rng.integers(4, 9))) for _ in range(300)]
    grams = [{t[i:i + 3] for i in range(len(t) - 2)} for t in texts]
    return agreements(MinHasher(SIGNATURE_VALUES, bits=16).signatures([sorted(g) for g in grams]))


@pytest.mark.parametrize("records", [300, 20_000, 1_000_000, 10_000_000])
def test_choose_takes_the_lowest_similarity_caught_within_the_budget(records):
    from math import comb

    from neardup_solr.lsh.bands import chance_budget, choose

    agreeing = random_agreements()
    pairs, values = agreeing.sum(), len(agreeing) - 1
    budget = chance_budget(records)
    within = []
    for r in range(1, values + 1):
        for b in range(1, values // r + 1):
            # Per pair agreeing in k values: P(one band agrees) = C(k, r) / C(n, r).
            chance = sum(n * (1 - (1 - comb(k, r) / comb(values, r)) ** b) for k, n in enumerate(agreeing) if n)
            if (records - 1) * chance / pairs <= budget:
                within.append(((1 - 0.01 ** (1 / b)) ** (1 / r), b * r, b, r))
    choice = choose(agreeing, records)
    assert choice.fits and (choice.banding.bands, choice.banding.band_rows) == min(within)[2:]
    assert choice.catches == pytest.approx(min(within)[0]) and choice.records == records


def test_more_records_never_catch_a_lower_similarity_and_the_chance_pairs_stay_bounded():
    from neardup_solr.lsh.bands import CANDIDATE_BUDGET, CHANCE_PAIRS, RECORD_BUDGET, choose

    agreeing = random_agreements()
    caught = []
    for records in (1_000, 10_000, 40_000, 100_000, 200_000, 1_000_000, 10_000_000):
        choice = choose(agreeing, records)
        assert choice.fits
        assert choice.expected <= CANDIDATE_BUDGET  # an online query's 100 candidates hold them
        # A report verifies at most a million chance pairs, or 10 a record.
        assert records * choice.expected / 2 <= max(CHANCE_PAIRS, records * RECORD_BUDGET / 2)
        caught.append(choice.catches)
    assert caught == sorted(caught) and caught[0] < caught[-1]
