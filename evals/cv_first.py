"""First mentions: a term is explained where a lecture (or the course) first says it, tried as a
post-fusion bonus (after ``evals.cv``, on its collected lists):

    .venv/bin/python -m evals.cv_first

Lecturers define a term when they introduce it and use it afterwards; a later passage that uses
the term more often (a recap, an example, the next topic built on it) can outrank the passage
that explains it. The candidate signal: the IDF-weighted share of the question's topic tokens
(the gate's :func:`services.ask.gate.topic_words`, as BM25 tokens) whose first occurrence — in
the passage's lecture (``lecture``), or in the whole course (``course``) — is in the passage; the
fused score gains ``weight × share`` (weight chosen per fold, 0 = the product as it is).
"""

from __future__ import annotations

import math
import sys

import numpy as np

from evals import cv

WEIGHTS = (0.0, 0.25, 0.5, 1.0, 2.0)


def first_shares(questions: list[dict]) -> list[dict[str, dict[tuple[int, float], float]]]:
    """Per question: ``{"lecture"|"course": {(lecture number, start_s rounded to 0.1 s): share}}``,
    over the dev course loaded as ``evals.cv`` loads it, questions searched as ask searches them."""
    from services.ask import gate, spelling

    with cv.dev_course_index() as (index, course, lecture_of):
        segs = sorted(((lecture_of[h.lecture_id], h.start_s, h.segment_idx, key) for key, h in index.segments.items()
                       if index.course_of.get(key[0]) == course))
        n, df = index.course_df(course)
        first_in_lecture: dict[tuple[int, int], tuple[int, float]] = {}
        first_in_course: dict[int, tuple[int, float]] = {}
        for no, start, _, key in segs:  # in lecture order, then time
            for t in index.segment_tokens.get(key, ()):
                first_in_lecture.setdefault((no, t), (no, round(start, 1)))
                first_in_course.setdefault(t, (no, round(start, 1)))
        vocab, compounds = index.course_vocabulary(course), index.course_compounds(course)
        out = []
        for q in questions:
            text = spelling.correct(q["question"], vocab, compounds)
            words = gate.topic_words(text, lambda w: any(t in df for t in index.query_tokens(w)))
            toks = [t for t in set(index.query_tokens(words)) if t in df] if words else []
            idf = {t: math.log((n + 1) / (df[t] + 0.5)) for t in toks}
            total = sum(idf.values()) or 1.0
            row: dict[str, dict] = {"lecture": {}, "course": {}}
            for t, w in idf.items():
                at = first_in_course[t]
                row["course"][at] = row["course"].get(at, 0.0) + w / total
                for no in {s[0] for s in segs}:
                    if (no, t) in first_in_lecture:
                        at = first_in_lecture[(no, t)]
                        row["lecture"][at] = row["lecture"].get(at, 0.0) + w / total
            out.append(row)
        return out


def main() -> None:
    names = ("dev", "fresh")
    rows = [q for name in names for q in cv.load(cv.CACHE / f"cv-lists-{name}.json")]
    questions = [q for name in names for q in cv.question_set(name)]
    assert [q.question for q in rows] == [q["question"] for q in questions], "collect evals.cv's lists again"
    shares = first_shares(questions)
    keep = [i for i, q in enumerate(rows) if q.covered]
    rows, shares = [rows[i] for i in keep], [shares[i] for i in keep]
    grid = np.asarray([[1.0, 1.5, 2.0, 2.0]])  # the product's default weights (RetrievalConfig)
    out = {"n": len(rows), "command": "python -m evals.cv_first " + " ".join(sys.argv[1:])}
    for scope in ("lecture", "course"):
        cols = []
        for w in WEIGHTS:
            by_q = {id(q): s[scope] for q, s in zip(rows, shares)}

            def adjust(q, fused, w=w, by_q=by_q):
                bonus = np.asarray([by_q[id(q)].get((sp[0], round(sp[1], 1)), 0.0) for sp in q.spans])
                return fused + w * bonus
            cols.append(cv.ranks(rows, cv.LISTS, "weighted", grid, adjust=adjust)[:, 0])
        rm = np.stack(cols, axis=1)
        res = cv.cross_validate(rm, 5, 6)
        rr = np.where(rm > 0, 1.0 / np.maximum(rm, 1), 0.0).mean(axis=0)
        out[scope] = {"cv_mean": res["mean"], "cv_sd": res["sd"], "without": cv.metrics(rm[:, 0]),
                      "by_weight": {str(w): cv.metrics(rm[:, i]) for i, w in enumerate(WEIGHTS)},
                      "in_sample_best_weight": WEIGHTS[int(rr.argmax())],
                      "splits_choosing": {str(w): sum(WEIGHTS[c] == w for c in res["chosen"]) for w in WEIGHTS}}
    cv.publish(out, "cv-first-latest.json")


if __name__ == "__main__":
    main()
