"""evals.gate_fields on a tiny fixture: coverage counts the words it should under each variant, and
leave-one-group-out scores each group with an operating point fitted on the others."""

from __future__ import annotations

from evals.gate_fields import coverage, fixed, group_cv


def word(idf, in_course, in_top, lex=0.0, lex_top=0.0, sem_top=0.0):
    return {"word": "w", "idf": idf, "in_course": in_course, "in_top": in_top, "lex": lex, "lex_top": lex_top,
            "sem_top": sem_top}


def test_coverage_variants():
    words = [word(1.0, True, False), word(3.0, False, False, lex=0.9, lex_top=0.95, sem_top=0.5)]
    assert coverage(words, local=False, lex=1.01, sem=1.01) == 0.25
    assert coverage(words, local=False, lex=0.85, sem=1.01) == 1.0
    assert coverage(words, local=True, lex=1.01, sem=1.01) == 0.0
    assert coverage(words, local=True, lex=0.9, sem=1.01) == 0.75
    assert coverage([], local=False, lex=1.01, sem=1.01) == 0.0


def test_group_cv_scores_each_group_on_a_point_fitted_elsewhere():
    rows = []
    for g in ("a", "b", "c"):
        rows += [{"group": g, "covered": True, "window": 0.7, "words": [word(1.0, True, True)]},
                 {"group": g, "covered": False, "window": 0.6, "words": [word(1.0, False, False)]}]
    out = group_cv(rows, [(False, 1.01, 1.01, 9.9)])
    assert set(out["per_group"]) == {"a", "b", "c"}
    assert out["pooled_held_out"]["right_call"] == 1.0 and out["sd_right_call"] == 0.0
    assert fixed(rows, (False, 1.01, 1.01, 9.9), 0.0, 0.65)["all"]["right_call"] == 1.0
    assert fixed(rows, (False, 1.01, 1.01, 9.9), 0.0, 0.9)["all"]["covered_declined"] == 1.0
