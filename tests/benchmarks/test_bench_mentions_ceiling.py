"""The mentions' ceiling: the best pairwise rule on what a pair shows, fitted to the truth."""

from bench.mentions_ceiling import ceiling

RECORDS = """id,first_name,last_name,city,state,country,employer
1,John,Smith,Alpha Park,CA,US,Acme Labs
2,John,Smtih,Alpha Park,CA,US,Acme Labs
3,John,Smith,Beta Falls,NY,US,Bolt Systems
4,John,Smith,Beta Falls,NY,US,Core Devices
5,John,Smith,Beta Falls,NY,US,Dyn Research
"""
# 1 and 2 are one person (a swapped pair of letters in the surname), 3 and 4
# another (a new job), 5 a namesake in 3's city.
CLUSTERS = "id,cluster\n1,a\n2,a\n3,b\n4,b\n5,c\n"


def test_the_ceiling_is_the_best_f1_of_taking_patterns_by_their_share_of_true_pairs(tmp_path):
    (tmp_path / "records.csv").write_text(RECORDS)
    (tmp_path / "true_clusters.csv").write_text(CLUSTERS)
    found = ceiling(tmp_path)
    # 10 pairs: (1,2) alone in its pattern (all but the surname's spelling the
    # same), (3,4) (3,5) (4,5) one pattern with one true pair in three, the
    # six others nothing in common but the name. Taking the first pattern:
    # precision 1, recall 1/2; adding the second: 2/4 and 1. F1 2/3 either way.
    assert found["pairs"] == 10 and found["true pairs"] == 2 and found["true pairs among them"] == 2
    precision, recall, f1 = found["best"]
    assert (precision, recall) == (1.0, 0.5) and abs(f1 - 2 / 3) < 1e-9
    # Components of the pairs whose pattern is at least 1/2 true: {1, 2} only.
    assert found["components"][0.5] == (1.0, 0.5, 2 / 3)
