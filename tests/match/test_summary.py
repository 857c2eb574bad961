"""The report's summary (``PAIRS.model.json``): written, read back equal, in the file format it has always had."""

from __future__ import annotations

import json
import os
from dataclasses import replace

import numpy as np
import pytest

from neardup_solr.errors import NeardupError
from neardup_solr.match.mixture import fit
from neardup_solr.match.text_model import BINS, MatchModel, histogram, with_labels
from neardup_solr.match.summary import Estimates, ReportSummary, summary_path

KEYS = ["cut", "model_cut", "forced", "level_cuts", "candidates", "labeled", "fitted", "estimated", "model"]


def _scores(seed: int = 23) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    scores = np.concatenate([rng.beta(1, 6, 5000), rng.beta(9, 1.5, 300)])
    levels = np.concatenate([rng.integers(0, 2, 5000), np.full(300, 4)])
    return scores, levels


def _summaries() -> dict[str, ReportSummary]:
    scores, levels = _scores()
    with_levels = fit(histogram(scores, levels))
    labeled = with_labels(with_levels, histogram(scores[-3:], levels[-3:]), histogram(scores[:5], levels[:5]))
    no_class = fit(histogram(np.random.default_rng(3).beta(1.0, 5.0, 5000)))
    unfitted = fit(histogram(np.array([1.0] * 7 + [0.2, 0.31])))
    zeros = (0.0,) * BINS
    none_kept = MatchModel(0.0, (20.0,) * BINS, zeros, (20.0,) * BINS, zeros)  # no bin reaches 1/2
    return {
        "the model's cut, with levels": ReportSummary.of(with_levels, with_levels.cut, forced=False, proposed=0.97),
        "labeled": ReportSummary.of(labeled, labeled.cut, forced=False, proposed=0.99),
        "a fixed cut": ReportSummary.of(with_levels, 0.6, forced=True),
        "a fixed cut above every pair": ReportSummary.of(with_levels, 1.0, forced=True),
        "no match class": ReportSummary.of(no_class, no_class.cut, forced=False),
        "too few to fit": ReportSummary.of(unfitted, unfitted.cut, forced=False),
        "no cut": ReportSummary.of(none_kept, none_kept.cut, forced=False),
        "without levels": ReportSummary.of(fit(histogram(scores)), fit(histogram(scores)).cut, forced=False),
    }


@pytest.mark.parametrize("name", list(_summaries()))
def test_a_summary_written_and_read_back_is_equal(name, tmp_path):
    about = _summaries()[name]
    path = summary_path(tmp_path / "pairs.tsv")
    about.write(path)
    assert path.name == "pairs.model.json"
    again = ReportSummary.read(path)
    assert again == about
    # The file is the JSON of its dictionary, one space of indent, keys in their order.
    text = path.read_text(encoding="utf-8")
    assert text == json.dumps(about.to_dict(), indent=1) == json.dumps(again.to_dict(), indent=1)
    assert list(json.loads(text)) == KEYS
    assert json.loads(text)["model"] == about.model.to_dict()


def test_the_summary_holds_what_the_report_decided():
    summaries = _summaries()
    about = summaries["the model's cut, with levels"]
    found = about.model.estimates()
    assert about.cut == about.model_cut == about.model.cut and not about.forced and about.fitted
    assert dict(about.level_cuts) == about.model.cuts() and about.candidates == 5300
    assert about.estimated == Estimates(true_pairs=found["true_pairs"] / 0.97, pairs=found["pairs"],
                                        precision=found["precision"], recall=found["recall"] * 0.97, proposed=0.97)
    assert list(json.loads(json.dumps(about.to_dict()))["estimated"]) == [
        "true_pairs", "pairs", "precision", "recall", "proposed"]
    forced = summaries["a fixed cut"]
    assert forced.forced and forced.cut == 0.6 and forced.model_cut == about.cut
    assert forced.estimated.precision == about.model.estimates(0.6)["precision"]
    labeled = summaries["labeled"]
    assert (labeled.labeled_same, labeled.labeled_different) == (3, 5)
    assert summaries["no match class"].cut == 0.99 and summaries["no match class"].estimated.true_pairs == 0.0
    assert summaries["no cut"].cut is summaries["no cut"].model_cut is None
    unfitted = summaries["too few to fit"]
    assert not unfitted.fitted and unfitted.estimated is None and unfitted.level_cuts == ()


def test_no_file_or_one_that_is_not_a_summary_reads_as_none(tmp_path):
    path = tmp_path / "pairs.model.json"
    assert ReportSummary.read(path) is None
    good = _summaries()["a fixed cut"].to_dict()
    fifty_bins = {**good, "model": {**good["model"], "bins": 50}}
    for text in ("", "{not json", "null", "[]", "{}", json.dumps({**good, "estimated": "high"}),
                 json.dumps({**good, "cut": "0.6"}), json.dumps({**good, "forced": 1}),
                 json.dumps({k: v for k, v in good.items() if k != "model"}), json.dumps(fifty_bins)):
        path.write_text(text, encoding="utf-8")
        assert ReportSummary.read(path) is None, text[:40]
    path.write_bytes(b"\xff\xfe\x00")
    assert ReportSummary.read(path) is None


def test_a_summary_of_an_earlier_version_reads_with_its_defaults(tmp_path):
    """Files written before the levels' cuts, the labels and the proposed share were kept."""
    about = _summaries()["the model's cut, with levels"]
    old = about.to_dict()
    del old["level_cuts"], old["labeled"], old["estimated"]["proposed"]
    path = tmp_path / "pairs.model.json"
    path.write_text(json.dumps(old, indent=1), encoding="utf-8")
    again = ReportSummary.read(path)
    assert again.level_cuts == () and (again.labeled_same, again.labeled_different) == (0, 0)
    assert again.estimated.proposed == 1.0 and again.estimated.recall == about.estimated.recall
    assert again.cut == about.cut and again.model == about.model


def test_a_write_that_fails_leaves_the_summary_that_was_there(tmp_path):
    about = _summaries()["a fixed cut"]
    path = tmp_path / "pairs.model.json"
    about.write(path)
    before = path.read_bytes()
    # A value JSON cannot hold fails the write halfway through the file.
    broken = replace(about, estimated=replace(about.estimated, recall=object()))
    with pytest.raises(TypeError):
        broken.write(path)
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["pairs.model.json"]
    with pytest.raises(NeardupError, match="cannot write"):
        about.write(tmp_path / "pairs.model.json" / "inside")
