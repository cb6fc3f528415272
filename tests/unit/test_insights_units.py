"""Insights' pure pieces: greedy cosine grouping, the period, the CSV export."""

from datetime import date

import numpy as np
import pytest

from services.gateway.insights import cluster, grouped, period, to_csv


def _unit(v):
    v = np.asarray(v, dtype="float32")
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def test_cluster_groups_by_cosine_and_orders_by_centrality():
    vecs = _unit([[1, 0, 0], [0.95, 0.1, 0], [0.9, 0.2, 0.05], [0, 1, 0], [0.05, 0.97, 0], [0, 0, 1]])
    groups = cluster(vecs, 0.6)
    assert [sorted(g) for g in groups] == [[0, 1, 2], [3, 4], [5]]
    assert groups[0][0] == 1  # the middle one of the first group is its most central
    assert cluster(np.zeros((0, 3), dtype="float32")) == []
    # a stricter threshold splits
    assert len(cluster(vecs, 0.999)) == 6


def test_grouped_labels_by_the_central_question_with_distinct_examples():
    texts = ["what is a heap", "what's a heap?", "explain heaps", "what is merge sort", "WHAT IS A HEAP"]
    table = {"what is a heap": [1, 0], "what's a heap?": [0.97, 0.1], "explain heaps": [0.9, 0.2],
             "what is merge sort": [0, 1], "WHAT IS A HEAP": [0.99, 0.05]}
    out = grouped(texts, lambda ts: _unit([table[t] for t in ts]))
    assert out[0]["count"] == 4 and out[1] == {"label": "what is merge sort", "count": 1, "examples": []}
    assert out[0]["label"] in {"what is a heap", "what's a heap?", "WHAT IS A HEAP"}
    assert len(set(e.lower() for e in out[0]["examples"])) == len(out[0]["examples"])
    assert grouped([], lambda ts: None) == []


def test_period_defaults_and_refusals():
    assert period(None, None, today=date(2026, 3, 31)) == (date(2026, 3, 2), date(2026, 3, 31))
    assert period("2026-01-01", "2026-01-07") == (date(2026, 1, 1), date(2026, 1, 7))
    assert period("0001-01-01", "0001-01-02") == (date(1, 1, 1), date(1, 1, 2))
    for bad in (("2026-01-08", "2026-01-07"), ("yesterday", None), ("2024-01-01", "2026-01-01"),
                (None, "0001-01-01"), (None, "9999-12-31"), ("9999-12-30", "9999-12-31")):  # off the calendar: 500 before
        with pytest.raises(ValueError):
            period(*bad)


def test_csv_defuses_formulas():
    ins = {"from": "2026-01-01", "to": "2026-01-02", "questions": 2, "declined": 1, "students": 1,
           "topics": [{"label": "=HYPERLINK(\"x\")", "count": 2, "examples": ["a"]}], "uncovered": [],
           "top_moments": [{"label": "L1 · 0:05", "count": 3, "lecture_number": 1, "t_s": 5.0, "lecture_title": "Heaps"}],
           "thumbs_down": [{"question": "q", "comment": "@bad"}], "per_day": [{"date": "2026-01-01", "questions": 2, "declined": 1}]}
    text = to_csv(ins)
    assert "'=HYPERLINK" in text and "'@bad" in text and "top_moment,L1 · 0:05,3,1,5.0,Heaps" in text
    assert text.splitlines()[0] == "section,label,count,lecture_number,t_s,detail"
