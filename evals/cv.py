"""Choosing retrieval weights by k-fold cross-validation, and reporting the spread.

    .venv/bin/python -m evals.cv                    # collect the lists (a throw-away stack), then CV
    .venv/bin/python -m evals.cv --cached           # CV again on the lists collected last time

A weight or threshold chosen on the 72 covered dev questions and scored on the same questions
overstates what it is worth: the system scored recall@3 0.875 on the dev set and 0.729 on
questions it had never seen. So every fusion weight is chosen here on k−1 folds (grid search,
maximising MRR) and scored on the fold left out; the report gives the mean and the spread
(standard deviation over folds × repeats) of the held-out scores, next to what the same grid
scores when it is allowed to fit all questions (the optimism a single in-sample number hides).

Collecting: the dev course is loaded through the product's captions path (as in
``evals.retrieval``), and for every question the product's own ranked lists are computed
(``EmbeddedSearchIndex.search`` plus ``retrieve.sentence_list`` / ``chapter_list``, depth 30).
Fusing them is then pure arithmetic over those lists, so a grid of thousands of weightings
costs seconds. The hit rule is the Lecture Copilot protocol of ``evals.retrieval``.
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import json
import math
import random
import statistics
import sys
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evals.retrieval import RESULTS, load_dev_set, upload_course

CACHE = Path(__file__).resolve().parent / ".cache"
LISTS = ("dense", "bm25", "dense_sent", "chargram")  # what the grid fuses by default (4 lists: 125 weightings)
DEPTH = 30


@dataclass
class QuestionLists:
    """One question's ranked lists: ``lists[name]`` = [(candidate index, score)] best first;
    ``gold`` = which candidates are hits (same lecture, span overlapping the gold span);
    ``spans`` = where each candidate is, for looking at misses."""

    question: str
    covered: bool
    form: str
    lists: dict[str, list[tuple[int, float]]]
    gold: list[bool]
    spans: list[tuple]  # per candidate: (lecture number, start_s, end_s, is a bridge passage)
    gate: tuple = (0.0, 0.0, 0.0)  # the relevance gate's (window, coverage, local) for the product's passages


HELDOUT = Path(__file__).resolve().parent / "heldout"


def question_set(name: str) -> list[dict]:
    """``dev`` (the 90 dev questions, form ``dev``), or a held-out file of ``evals/heldout/``
    (``fresh``; ``sealed`` is for final reports only, see its README). Retrieval is scored on
    standalone questions with a gold span: outline rows and follow-ups are left out."""
    if name == "dev":
        return [{**q, "form": "dev"} for q in load_dev_set()[2]]
    from evals.retrieval import load_jsonl

    rows = load_jsonl(HELDOUT / f"mit6006_{name}.jsonl")
    return [q for q in rows if not q.get("follows") and q["form"] != "outline"
            and (not q["covered"] or q.get("gold_start_s") is not None)]


@contextmanager
def dev_course_index(name: str = "MIT 6.006 (cv)"):
    """The dev course loaded through a throw-away stack (the product's captions path) and an
    embedded search index synced with it: yields ``(index, course_id, lecture_of)`` where
    ``lecture_of`` maps lecture id → lecture number. Everything is removed on exit."""
    from lecturecopilot import db
    from lecturecopilot.settings import Settings
    from lecturecopilot_ops.stack import ephemeral
    from services.ask.search_index import EmbeddedSearchIndex

    by_lecture, titles, _ = load_dev_set()
    with tempfile.TemporaryDirectory() as tmp, ephemeral(Path(tmp) / "data") as eph:
        course, ids = upload_course(eph, name, by_lecture, titles)
        settings = Settings()
        pool = db.make_pool(settings, max_size=2)
        index = EmbeddedSearchIndex(Path(tmp) / "qdrant-cv", pool, profile=settings.search_profile)
        try:
            index.sync_course(course)
            yield index, course, {lid: no for no, lid in ids.items()}
        finally:
            index.close()
            pool.close()


def collect(extra_lists=None, questions: list[dict] | None = None) -> list[QuestionLists]:
    """Loads the dev course through a throw-away stack and computes every question's lists
    (``questions``: default the dev set). ``extra_lists(index, course_id, query, qvec, lists) ->
    dict[name, list[Hit]]`` may add lists."""
    from lecturecopilot import models
    from lecturecopilot.settings import Settings
    from services.ask import gate, retrieve, spelling

    questions = question_set("dev") if questions is None else questions
    out: list[QuestionLists] = []
    settings = Settings()
    with dev_course_index() as (index, course, lecture_of):
        vocab = index.course_vocabulary(course)  # searched as ask searches: spelling, then no request framing
        compounds = index.course_compounds(course)
        corrected = [spelling.correct(q["question"], vocab, compounds) for q in questions]
        searched = [gate.request_topic(c) for c in corrected]
        qvecs = models.embed(settings.embed_model, searched)
        for q, cq, sq, v in zip(questions, corrected, searched, qvecs):
            ev = gate.evidence(index, course, retrieve.retrieve(index, course, None, v, sq, k=6), cq, v, 1.0)
            lists = index.search(course, None, v, sq, DEPTH)
            lists["chargram"] = retrieve.chargram_list(index, course, lists, sq, DEPTH)
            lists["dense_sent"] = retrieve.sentence_list(index, lists, v, DEPTH)
            lists["chapter"] = retrieve.chapter_list(index, lists, v, DEPTH)
            if extra_lists:
                lists.update(extra_lists(index, course, sq, v, lists))
            cands: dict[str, int] = {}
            meta = []
            for hits in lists.values():
                for h in hits:
                    if h.point_id not in cands:
                        cands[h.point_id] = len(meta)
                        meta.append(h)
            gold = [bool(q["covered"]) and lecture_of.get(h.lecture_id) == q["lecture_no"]
                    and h.start_s < q["gold_end_s"] and h.end_s > q["gold_start_s"] for h in meta]
            out.append(QuestionLists(q["question"], bool(q["covered"]), q.get("form", "dev"),
                                     {n: [(cands[h.point_id], h.score) for h in hits] for n, hits in lists.items()},
                                     gold, [(lecture_of.get(h.lecture_id, 0), h.start_s, h.end_s, getattr(h, "bridge", False)) for h in meta],
                                     (ev.window, ev.coverage, 0.0)))  # the gate has no 'local' signal any more
    return out


def save(rows: list[QuestionLists], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps([r.__dict__ for r in rows]))


def load(path: Path) -> list[QuestionLists]:
    return [QuestionLists(**{**r, "lists": {k: [tuple(x) for x in v] for k, v in r["lists"].items()},
                             "gate": tuple(r.get("gate", (0.0, 0.0, 0.0)))})
            for r in json.loads(path.read_text())]


def splits(n: int, folds: int = 5, repeats: int = 6, seed: int = 1):
    """``folds`` × ``repeats`` (train, test) index lists over ``n`` items: each repeat shuffles once
    (``random.Random(seed)``, one stream for all repeats) and deals fold f every folds-th item."""
    rnd = random.Random(seed)
    for _ in range(repeats):
        order = list(range(n))
        rnd.shuffle(order)
        for f in range(folds):
            test = order[f::folds]
            held_out = set(test)
            yield [i for i in order if i not in held_out], test


def gate_cv(rows: list[QuestionLists], folds: int = 5, repeats: int = 4, seed: int = 1,
            local_weights: tuple[float, ...] = (0.0,)) -> dict:
    """The relevance gate's weights and threshold (answer when window + w_c × coverage + w_l × local ≥
    threshold, ``services.ask.gate``) chosen on k−1 folds by the share of right calls (covered
    answered, uncovered declined; ties: the higher threshold, which declines more) and scored on
    the fold left out: mean and spread of the held-out right-call share, covered declined and
    uncovered declined."""
    weights = (0.0, 0.25, 0.5, 0.75, 1.0)
    thresholds = [round(0.40 + 0.01 * i, 2) for i in range(121)]
    combos = [(w, l, t) for w in weights for l in local_weights for t in thresholds]
    win = np.asarray([q.gate[0] for q in rows])
    cov = np.asarray([q.gate[1] for q in rows])
    loc = np.asarray([q.gate[2] if len(q.gate) > 2 else 0.0 for q in rows])
    covered = np.asarray([q.covered for q in rows])
    answer = np.stack([win + w * cov + l * loc >= t for w, l, t in combos], axis=1)  # questions × combos
    right = answer == covered[:, None]
    held, chosen = [], []
    for train, test in splits(len(rows), folds, repeats, seed):
        acc = right[train].mean(axis=0)
        best = max(range(len(combos)), key=lambda c: (acc[c], combos[c][2]))
        chosen.append(combos[best])
        t = sorted(test)
        held.append({"right_call": float(right[t, best].mean()),
                     "covered_declined": float((~answer[t, best] & covered[t]).sum() / max(1, covered[t].sum())),
                     "uncovered_declined": float((~answer[t, best] & ~covered[t]).sum() / max(1, (~covered[t]).sum()))})
    common = max(set(chosen), key=chosen.count)
    return {"mean": {k: statistics.mean(h[k] for h in held) for k in held[0]},
            "sd": {k: statistics.pstdev(h[k] for h in held) for k in held[0]},
            "most_chosen": {"coverage_weight": common[0], "local_weight": common[1], "threshold": common[2],
                            "times": chosen.count(common), "of": len(chosen)}}


# the operating point before this cross-validation (RRF of dense, BM25 x1.5 and sentence windows, chosen on dev)
PREVIOUS_DEFAULT = {"dense": 1.0, "bm25": 1.5, "dense_sent": 1.0}


def gate_fixed(rows: list[QuestionLists], weight: float, threshold: float) -> dict:
    """The gate's decisions at one fixed weight and threshold over ``rows`` (no fitting)."""
    win = np.asarray([q.gate[0] for q in rows])
    cov = np.asarray([q.gate[1] for q in rows])
    covered = np.asarray([q.covered for q in rows])
    answer = win + weight * cov >= threshold
    return {"right_call": float((answer == covered).mean()),
            "covered_declined": float((~answer & covered).sum() / max(1, covered.sum())),
            "uncovered_declined": float((~answer & ~covered).sum() / max(1, (~covered).sum()))}


def feature_matrix(q: QuestionLists, names: tuple[str, ...], fusion: str, rrf_k: int = 60) -> np.ndarray:
    """(candidates × lists): each list's contribution per candidate before weighting — RRF's
    1/(k + rank) (Cormack et al. 2009) or the min-max normalised score (weighted score fusion,
    as ``services.ask.retrieve.weighted``); 0 where a list does not hold the candidate."""
    m = np.zeros((len(q.gold), len(names)), dtype="float64")
    for j, name in enumerate(names):
        hits = q.lists.get(name, [])
        if not hits:
            continue
        if fusion == "rrf":
            for rank, (c, _) in enumerate(hits, start=1):
                m[c, j] = 1.0 / (rrf_k + rank)
        else:
            scores = [s for _, s in hits]
            lo, hi = min(scores), max(scores)
            for c, s in hits:
                m[c, j] = (s - lo) / (hi - lo) if hi > lo else 1.0
    return m


def _overlap(a: tuple, b: tuple) -> float:
    """Overlap of two candidate spans as a share of the shorter (0 across lectures)."""
    if a[0] != b[0]:
        return 0.0
    inter = min(a[2], b[2]) - max(a[1], b[1])
    return max(0.0, inter) / max(1e-9, min(a[2] - a[1], b[2] - b[1]))


def ranks(rows: list[QuestionLists], names: tuple[str, ...], fusion: str, grid: np.ndarray,
          bridges: bool = True, max_overlap: float = 0.5, adjust=None, features=None) -> np.ndarray:
    """(questions × weightings): rank of the first hit in the top 6 under each weighting of
    ``grid`` (weightings × lists), 0 for a miss. As ``retrieve.retrieve`` does: without
    ``bridges`` the bridge passages are not candidates; a candidate overlapping a better-ranked
    result by more than ``max_overlap`` of the shorter is skipped. ``adjust(q, fused)`` may
    re-score the fused column (candidates,) before ranking (a post-fusion candidate, as the
    retired lecture prior had; docs/experiments.md); a candidate the lists scored 0 stays out either way.
    ``features(q, names)`` (default :func:`feature_matrix` with ``fusion``) gives each list's
    contribution per candidate (the retired normalisation harness tried others; docs/experiments.md)."""
    out = np.zeros((len(rows), len(grid)), dtype="int32")
    for i, q in enumerate(rows):
        gold = np.asarray(q.gold, dtype=bool)
        if not gold.any():
            continue
        keep = np.asarray([bridges or not (len(sp) > 3 and sp[3]) for sp in q.spans], dtype=bool)
        fm = feature_matrix(q, names, fusion) if features is None else features(q, names)
        fused = fm @ grid.T  # candidates × weightings
        fused[~keep] = -np.inf
        for w in range(fused.shape[1]):
            chosen: list[int] = []
            final = fused[:, w] if adjust is None else np.where(fused[:, w] > 0, adjust(q, fused[:, w]), fused[:, w])
            for c in np.argsort(-final, kind="stable"):
                if not np.isfinite(final[c]) or fused[c, w] <= 0:
                    break
                if any(_overlap(q.spans[c], q.spans[d]) > max_overlap for d in chosen):
                    continue
                chosen.append(int(c))
                if gold[c]:
                    out[i, w] = len(chosen)
                    break
                if len(chosen) == 6:
                    break
    return out


def metrics(r: np.ndarray) -> dict[str, float]:
    """recall@1/3/6 and MRR of a vector of first-hit ranks (0 = miss)."""
    return {"recall_1": float(np.mean((r >= 1) & (r <= 1))), "recall_3": float(np.mean((r >= 1) & (r <= 3))),
            "recall_6": float(np.mean(r >= 1)), "mrr": float(np.mean(np.where(r > 0, 1.0 / np.maximum(r, 1), 0.0)))}


def cross_validate(rank_matrix: np.ndarray, folds: int = 5, repeats: int = 4, seed: int = 1) -> dict:
    """Chooses a weighting (a column) on k−1 folds by MRR (ties: the earlier column) and scores it
    on the fold left out; ``folds`` × ``repeats`` held-out scores → mean and standard deviation."""
    n = rank_matrix.shape[0]
    rr = np.where(rank_matrix > 0, 1.0 / np.maximum(rank_matrix, 1), 0.0)
    held: list[dict] = []
    chosen: list[int] = []
    for train, test in splits(n, folds, repeats, seed):
        best = int(rr[train].mean(axis=0).argmax())
        chosen.append(best)
        held.append(metrics(rank_matrix[test, best]))
    keys = held[0].keys()
    return {"mean": {k: statistics.mean(h[k] for h in held) for k in keys},
            "sd": {k: statistics.pstdev(h[k] for h in held) for k in keys},
            "chosen": chosen}


def weight_grid(names: tuple[str, ...], values=(0.0, 0.5, 1.0, 1.5, 2.0)) -> np.ndarray:
    """Every weighting with the first list at 1 and the others from ``values`` (scale does not
    change a ranking, so fixing one weight loses nothing)."""
    combos = [(1.0, *rest) for rest in itertools.product(values, repeat=len(names) - 1)]
    return np.asarray(combos, dtype="float64")


def report(rows: list[QuestionLists], names: tuple[str, ...] = LISTS, folds: int = 5, repeats: int = 4,
           bridges: bool = True, max_overlap: float = 0.5) -> dict:
    """For RRF and weighted fusion: the CV estimate, the in-sample best, how many of the splits gave
    each list a weight above 0 (``splits_weighting``), and named fixed weightings."""
    covered = [q for q in rows if q.covered]
    result = {}
    for fusion in ("rrf", "weighted"):
        grid = weight_grid(names)
        rm = ranks(covered, names, fusion, grid, bridges=bridges, max_overlap=max_overlap)
        cv = cross_validate(rm, folds, repeats)
        insample = int(np.where(rm > 0, 1.0 / np.maximum(rm, 1), 0.0).mean(axis=0).argmax())
        common = max(set(cv["chosen"]), key=cv["chosen"].count)
        result[fusion] = {"cv_mean": cv["mean"], "cv_sd": cv["sd"],
                          "in_sample_best": {"weights": dict(zip(names, grid[insample].tolist())),
                                             **metrics(rm[:, insample])},
                          "splits_weighting": {n: int(sum(grid[c][i] > 0 for c in cv["chosen"])) for i, n in enumerate(names)},
                          "most_chosen": {"weights": dict(zip(names, grid[common].tolist())),
                                          "times": cv["chosen"].count(common), "of": len(cv["chosen"]),
                                          **metrics(rm[:, common])}}
    return result


def fixed(rows: list[QuestionLists], names: tuple[str, ...], weights: dict[str, float], fusion: str,
          bridges: bool = True, max_overlap: float = 0.5) -> dict:
    """The metrics of one fixed weighting (no fitting): e.g. the product's current default."""
    covered = [q for q in rows if q.covered]
    grid = np.asarray([[weights.get(n, 0.0) for n in names]], dtype="float64")
    return metrics(ranks(covered, names, fusion, grid, bridges=bridges, max_overlap=max_overlap)[:, 0])


def course_passages(index, course_id: str) -> list:
    """Every passage (segment :class:`~services.ask.search_index.Hit`) of the course in ``index``: what
    a candidate list scored over the whole course ranks."""
    return [h for (lid, _), h in index.segments.items() if index.course_of.get(lid) == course_id]


def top_hits(passages: list, scores, depth: int, positive: bool = False) -> list:
    """The ``depth`` best of ``passages`` by ``scores`` (same order), best first, each carrying its
    score; with ``positive``, passages scoring 0 or less are left out."""
    from services.ask.search_index import Hit

    scores = np.asarray(scores, dtype="float64")
    return [Hit(h.point_id, h.lecture_id, h.lecture_number, h.segment_idx, h.start_s, h.end_s, h.text, float(scores[i]))
            for i in np.argsort(-scores)[:depth] if not positive or scores[i] > 0
            for h in (passages[i],)]


# candidate lists tried before any goes into the product: flag → (module, its extra_lists hook, what it adds),
# e.g. "late": ("evals.cv_late", "late_lists", "the late-interaction (MaxSim) list"). The candidates tried so far
# did not pay and were retired; docs/experiments.md names each and the commit that holds its module.
CANDIDATES: dict[str, tuple[str, str, str]] = {}


def lists_of(sets, suffix: str, extra_lists=None, cached: bool = False, after_each=lambda: None) -> list[QuestionLists]:
    """The questions of ``sets`` (names for :func:`question_set`; ``sealed`` is refused) with their
    lists: collected (:func:`collect` with ``extra_lists``) and saved as ``CACHE/cv-lists-<set><suffix>.json``,
    or, with ``cached``, read from there. ``after_each()`` runs after each set is collected (a module's
    state of one course, cleared)."""
    rows: list[QuestionLists] = []
    for name in sets:
        if name == "sealed":
            raise SystemExit("the sealed set is for reporting only (evals/heldout/README.md), never for choosing")
        path = CACHE / f"cv-lists-{name}{suffix}.json"
        if cached:
            rows += load(path)
            continue
        got = collect(extra_lists, questions=question_set(name))
        save(got, path)
        after_each()
        rows += got
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cached", action="store_true", help="reuse the lists collected last time")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=6)
    parser.add_argument("--lists", default=",".join(LISTS), help="comma-separated list names to fuse")
    parser.add_argument("--questions", default="dev,fresh",
                        help="comma-separated sets, pooled: dev and held-out sets of evals/heldout (fresh)")
    for flag, (module, _, what) in CANDIDATES.items():
        parser.add_argument(f"--{flag}", action="store_true", help=f"also collect {what} ({module.replace('.', '/')}.py)")
    args = parser.parse_args()
    extra, suffix = None, ""
    for flag, (module, function, _) in CANDIDATES.items():
        if getattr(args, flag):
            extra, suffix = getattr(importlib.import_module(module), function), f"-{flag}"
            break
    rows = lists_of(args.questions.split(","), suffix, extra, args.cached)
    names = tuple(args.lists.split(","))
    from lecturecopilot.settings import Settings
    from services.ask.retrieve import RetrievalConfig

    default, settings = RetrievalConfig(), Settings()
    out = {"questions": args.questions, "n": len(rows), "covered": sum(q.covered for q in rows), "lists": names,
           "folds": args.folds, "repeats": args.repeats,
           "default": fixed(rows, names, {n: default.weights.get(n, 1.0) if n in default.lists else 0.0
                                          for n in names}, default.fusion),
           **report(rows, names, args.folds, args.repeats),
           "previous_default": fixed(rows, names, PREVIOUS_DEFAULT, "rrf"),
           "gate": {"cv": gate_cv(rows, args.folds, args.repeats),
                    "default": {"coverage_weight": settings.gate_coverage_weight, "threshold": settings.gate_threshold,
                                **gate_fixed(rows, settings.gate_coverage_weight, settings.gate_threshold)}},
           "command": "python -m evals.cv " + " ".join(sys.argv[1:])}
    publish(out, f"cv{suffix}-latest.json")


def publish(out: dict, name: str) -> None:
    """Writes ``out`` to ``evals/results/<name>`` and prints it (JSON)."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / name).write_text(json.dumps(out, indent=2))
    json.dump(out, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
