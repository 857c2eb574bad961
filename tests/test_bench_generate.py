"""The benchmark's synthetic data: deterministic, about 10% in clusters of 2-5."""

import itertools

from bench.generate import generate


def read(folder):
    records = [line.split(" ", 1) for line in (folder / "records.txt").read_text().splitlines()]
    pairs = [tuple(line.split("\t")) for line in (folder / "true_pairs.tsv").read_text().splitlines()]
    return records, pairs


def components(pairs):
    """Connected components, by a plain search over the pairs."""
    neighbours = {}
    for a, b in pairs:
        neighbours.setdefault(a, set()).add(b)
        neighbours.setdefault(b, set()).add(a)
    seen, groups = set(), []
    for start in neighbours:
        if start in seen:
            continue
        group, todo = set(), [start]
        while todo:
            node = todo.pop()
            if node not in group:
                group.add(node)
                todo.extend(neighbours[node] - group)
        seen |= group
        groups.append(group)
    return groups


def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path):
    generate(3000, 7, tmp_path / "a")
    generate(3000, 7, tmp_path / "b")
    generate(3000, 8, tmp_path / "c")
    for name in ("records.txt", "true_pairs.tsv"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
        assert (tmp_path / "a" / name).read_bytes() != (tmp_path / "c" / name).read_bytes()


def test_clusters_hold_about_a_tenth_of_the_records_in_groups_of_two_to_five(tmp_path):
    records, pairs = read(generate(20000, 3, tmp_path)[0].parent)
    assert [r[0] for r in records] == [str(i) for i in range(1, 20001)]
    groups = components(pairs)
    assert 0.08 <= sum(map(len, groups)) / len(records) <= 0.12
    assert {len(g) for g in groups} <= {2, 3, 4, 5} and len({len(g) for g in groups}) == 4
    # Every pair inside a cluster is listed, once, smaller id first.
    assert len(pairs) == len(set(pairs)) == sum(len(g) * (len(g) - 1) // 2 for g in groups)
    assert all(int(a) < int(b) for a, b in pairs)
    # Members are spread over the file, not side by side.
    assert sum(abs(int(a) - int(b)) == 1 for a, b in pairs) < len(pairs) * 0.01


def test_cluster_members_are_near_duplicates_and_singles_are_not(tmp_path):
    records, pairs = read(generate(5000, 5, tmp_path)[0].parent)
    text = dict(records)

    def jaccard(a, b):
        x, y = set(text[a].lower().split()), set(text[b].lower().split())
        return len(x & y) / len(x | y)

    for group in components(pairs):
        for member in group:
            assert max(jaccard(member, other) for other in group - {member}) >= 0.4
    clustered = {i for p in pairs for i in p}
    singles = [text[i] for i, _ in records if i not in clustered]
    assert len(set(singles)) >= len(singles) * 0.999
    near = sum(jaccard(a, b) >= 0.6 for a, b in itertools.islice(itertools.combinations(
        [i for i, _ in records if i not in clustered][:300], 2), 40000))
    assert near < 40
