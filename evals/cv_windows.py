"""Which run of sentences an extractive answer quotes, chosen by cross-validation.

    .venv/bin/python -m evals.cv_windows            # collect (a throw-away stack), then CV
    .venv/bin/python -m evals.cv_windows --cached   # CV again on the windows collected last time

The extractive writer (``services.ask.writers.extractive.extractive_answer``) quotes the run of 2–3 consecutive
sentences, among the top 3 passages, that scores best: cosine(question, run) minus ``rank_penalty``
per rank of the run's passage. Retrieval can rank the right passage first and the answer still cite
outside the gold span (passages last up to 90 s; gold spans 14–69 s). This harness collects, for the
covered dev and fresh questions with a gold span (follow-ups and outline rows left out; the sealed set
is refused), every candidate run of the product's own top 3 passages with its signals:

- ``cos``: the writer's cosine;
- ``lex``: the IDF-weighted share of the question's topic tokens (``gate.topic_words``, BM25 tokens,
  IDF over the course) that occur in the run — the gate's coverage measured on the run alone;
- ``rank``: its passage's rank (0-based).

and whether the run holds a sentence that starts inside the gold span (same lecture). A choice rule
``cos + lex_weight · lex − rank_penalty · rank`` is then fitted on k−1 folds (grid, maximising the
share of questions whose chosen run is inside the gold span) and scored on the fold left out,
5 folds × 6 repeats, next to the product's fixed rule.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

from evals.cv import CACHE, dev_course_index, question_set, splits
from evals.retrieval import RESULTS

PENALTIES = (0.0, 0.05, 0.1, 0.15, 0.2, 0.3)
LEX_WEIGHTS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5)
WIDTHS = (2, 3)


def _runs(sents, vecs, qvec, tokens, idf, total, query_tokens):
    out = []
    for w in WIDTHS:
        for i in range(0, max(1, len(sents) - w + 1)):
            j = min(len(sents), i + w)
            if j <= i:
                continue
            s = vecs[i:j].sum(axis=0)
            cos = float(s @ qvec / (np.linalg.norm(s) + 1e-9))
            have = set(query_tokens(" ".join(x.text for x in sents[i:j])))
            lex = sum(idf[t] for t in tokens if t in have) / total if total > 0 else 0.0
            out.append((i, j, cos, lex, float((vecs[i:j] @ qvec).max())))
    return out


def collect(questions: list[dict]) -> list[dict]:
    """Per question: ``runs`` = [(rank, cos, lex, inside)] over the product's top 3 passages."""
    from lecturecopilot import models
    from lecturecopilot.settings import Settings
    from services.ask import gate, retrieve, spelling

    out = []
    settings = Settings()
    with dev_course_index("MIT 6.006 (cv windows)") as (index, course, lecture_of):
        vocab = index.course_vocabulary(course)
        n, df = index.course_df(course)
        for q in questions:
            cq = spelling.correct(q["question"], vocab, index.course_compounds(course))
            sq = gate.request_topic(cq)
            v = models.embed(settings.embed_model, [sq])[0]
            passages = retrieve.retrieve(index, course, None, v, sq, k=6)
            words = gate.topic_words(cq, lambda w: any(t in df for t in index.query_tokens(w)))
            tokens = list(dict.fromkeys(index.query_tokens(words))) if words else []
            idf = {t: math.log((n + 1) / (df.get(t, 0) + 0.5)) for t in tokens}
            total = sum(idf.values())
            runs = []
            for rank, p in enumerate(passages[:3]):
                entry = index.sentences.get((p.hit.lecture_id, p.hit.segment_idx))
                if not entry:
                    continue
                sents, vecs = entry
                same = lecture_of.get(p.hit.lecture_id) == q["lecture_no"]
                for i, j, cos, lex, peak in _runs(sents, vecs, v, tokens, idf, total, index.query_tokens):
                    inside = same and any(q["gold_start_s"] <= s.start_s <= q["gold_end_s"] for s in sents[i:j])
                    runs.append((rank, cos, lex, bool(inside), peak, j - i, i, len(sents), p.score))
            out.append({"question": q["question"], "form": q.get("form", "dev"), "runs": runs})
    return out


def chosen_inside(rows: list[dict], grid: list[tuple], score=None) -> np.ndarray:
    """(questions × rules): 1 when the rule's best run is inside the gold span. ``score(a, rule)``
    scores the runs ``a`` (runs × (rank, signal 1, signal 2)); by default the writer's rule
    ``(penalty, lex_weight)``: cos + lex_weight · lex − penalty · rank."""
    score = score or (lambda a, rule: a[:, 1] + rule[1] * a[:, 2] - rule[0] * a[:, 0])
    m = np.zeros((len(rows), len(grid)))
    for qi, r in enumerate(rows):
        if not r["runs"]:
            continue
        a = np.asarray([x[:3] for x in r["runs"]], dtype="float64")
        inside = np.asarray([x[3] for x in r["runs"]])
        for gi, rule in enumerate(grid):
            m[qi, gi] = inside[int(np.argmax(score(a, rule)))]
    return m


def cross_validate(m: np.ndarray, grid, folds=5, repeats=6, seed=1) -> dict:
    """Chooses a rule (a column of ``m``) on k−1 folds and scores it on the fold left out."""
    held, chosen = [], []
    for train, test in splits(m.shape[0], folds, repeats, seed):
        best = int(m[train].mean(axis=0).argmax())
        chosen.append(grid[best])
        held.append(float(m[test, best].mean()))
    common = max(set(chosen), key=chosen.count)
    return {"cv_mean": statistics.mean(held), "cv_sd": statistics.pstdev(held),
            "most_chosen": {"rank_penalty": common[0], "lex_weight": common[1], "times": chosen.count(common),
                            "of": len(chosen)}}


def window_rows(prefix: str, collect_runs, cached: bool) -> list[dict]:
    """The covered dev and fresh questions with a gold span and their candidate runs: collected by
    ``collect_runs(questions)`` and saved as ``CACHE/<prefix>-<set>.json``, or read from there."""
    rows = []
    for name in ("dev", "fresh"):
        path = CACHE / f"{prefix}-{name}.json"
        if cached:
            rows += json.loads(path.read_text())
            continue
        got = collect_runs([q for q in question_set(name) if q["covered"] and q.get("gold_start_s") is not None])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(got))
        rows += got
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cached", action="store_true")
    args = parser.parse_args()
    rows = window_rows("cv-windows", collect, args.cached)
    grid = list(itertools.product(PENALTIES, LEX_WEIGHTS))
    m = chosen_inside(rows, grid)
    fixed = {f"{p}/{lw}": float(m[:, grid.index((p, lw))].mean()) for p, lw in ((0.15, 0.0), (0.15, 0.1), (0.15, 0.2))}
    lex_off = [i for i, (p, lw) in enumerate(grid) if lw == 0.0]
    out = {"questions": len(rows), "any_run_inside": float(np.mean([any(x[3] for x in r["runs"]) for r in rows])),
           "fixed (rank_penalty/lex_weight)": fixed,
           "cv_both": cross_validate(m, grid),
           "cv_penalty_only": cross_validate(m[:, lex_off], [grid[i] for i in lex_off]),
           "in_sample_best": {"rule": grid[int(m.mean(axis=0).argmax())], "inside": float(m.mean(axis=0).max())},
           "command": "python -m evals.cv_windows " + " ".join(sys.argv[1:])}
    (RESULTS / "cv-windows-latest.json").write_text(json.dumps(out, indent=2))
    json.dump(out, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
