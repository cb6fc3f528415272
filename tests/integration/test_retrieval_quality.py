"""Retrieval quality guard: the dev-set evaluation (default configuration, through the
product's captions ingest and its own search) must not fall more than 3 points of recall@3
below the committed baseline (evals/baseline.json), and the gate must keep its decisions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


def test_recall_at_3_holds_against_baseline(stack, tmp_path):
    from evals.retrieval import run

    baseline = json.loads((ROOT / "evals" / "baseline.json").read_text())
    result = run(quick=True, out_dir=tmp_path, eph=stack._eph)
    [row] = result["rows"]
    assert row["other_course_results"] == 0
    assert row["max_passage_s"] <= 90
    assert row["recall_3"] >= baseline["recall_3"] - 0.03, (row, baseline)
    assert row["recall_6"] >= baseline["recall_6"] - 0.03, (row, baseline)
    d = result["decisions"]
    assert d["uncovered_declined"] >= 0.90
    assert d["covered_wrongly_declined"] <= 0.03
    assert result["http_search_ms"]["p50"] > 0
