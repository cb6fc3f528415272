"""The relevance gate across fields: which coverage signal survives other courses, chosen by
cross-validation with whole courses and fields held out.

    .venv/bin/python -m evals.gate_fields            # collect (three throw-away stacks, ~10 min), then compare
    .venv/bin/python -m evals.gate_fields --cached   # compare again on what was collected last time

Questions (never the sealed ones): MIT 6.006 dev + fresh (one course), the robustness benchmark's
six algorithms lectures, and the dev lectures of the fields benchmark (``evals/fields``: biology,
chemistry, physics, economics, linear algebra, statistics, physiology, earth science, astronomy,
psychology), each loaded through the captions path (the narration or transcript as captions); the
robustness and fields lectures also each as a course of its own (what an instructor has after the first
upload: a handful of passages, over which a course's IDF says little), with their covered questions and
the uncovered ones written after them.
Follow-ups are left out (they need their conversation). Per question the collector keeps the
gate's window signal and, per topic word of the question (:func:`services.ask.gate.topic_words`),
its weight in today's coverage (course IDF), whether the course says it, whether the top three
passages say it, and :func:`word_matches`' lexical and semantic similarity to the
course's words (what a misheard, misspelled or differently worded term still shares).

Compared, by right call (covered answered, uncovered declined) on held-out groups — each field of
the fields benchmark, the robustness course and the MIT course is one group, and a fold leaves one
group out, so every operating point is judged on a field it was not fitted on:

- ``exact``: today's coverage (the share of the question's IDF weight the course says);
- ``soft``: a word the course does not say still counts when a course word matches it lexically
  (character similarity ≥ ``lex``) or, among the top passages' words, semantically (MiniLM cosine ≥
  ``sem``);
- ``local``: the coverage counted in the top three passages instead of the whole course (what the
  answer would quote from), exact or soft;
- ``drop_unsaid_common``: today's coverage without the question's words that the course never
  says and that are common in English (Zipf ≥ ``drop``: "handle" in "how does chaining handle
  collisions" — today only words of Zipf ≥ 5.7 are dropped so), whole course or top passages;
- ``background_local``: top-passage coverage with each word's IDF taken over the course plus ``prior``
  passages of general English (:func:`services.ask.gate.idf_with_background`), chosen by right call
  alone, and again among the operating points that decline at least 0.9 of the training groups'
  uncovered questions (``*_declining_0.9``, beside the same constraint on today's signal).

Each variant's weight, threshold and similarity cut-offs are chosen on the other groups; pooled
held-out scores are also given for whole courses and one-lecture courses apart. Results:
``evals/results/gate-fields-latest.json``.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import math
import re
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Callable

import numpy as np
import requests
from rapidfuzz import fuzz, process

from evals.cv import CACHE, dev_course_index, publish, question_set
from evals.retrieval import lecture_vtt, load_jsonl

ROOT = Path(__file__).resolve().parent
WEIGHTS = (0.0, 0.25, 0.5, 0.75, 1.0)
THRESHOLDS = [round(0.40 + 0.01 * i, 2) for i in range(121)]
LEX = (0.8, 0.85, 0.9, 1.01)   # 1.01: off
SEM = (0.6, 0.7, 0.8, 1.01)


_WORD_VECS: dict[str, np.ndarray] = {}  # word -> MiniLM vector, shared by every course (words recur)
_WORD_VECS_MAX = 200_000


def _word_vectors(words: list[str], embed: Callable[[list[str]], np.ndarray]) -> np.ndarray:
    """(len(words), d) L2-normalised vectors of single words, cached across questions."""
    missing = [w for w in dict.fromkeys(words) if w not in _WORD_VECS]
    if missing:
        if len(_WORD_VECS) + len(missing) > _WORD_VECS_MAX:
            _WORD_VECS.clear()
        for w, v in zip(missing, embed(missing)):
            _WORD_VECS[w] = np.asarray(v, dtype=np.float32)
    return np.stack([_WORD_VECS[w] for w in words]) if words else np.zeros((0, 1), dtype=np.float32)


def word_matches(index, course_id: str, top: list, query: str,
                 embed: Callable[[list[str]], np.ndarray]) -> list[dict]:
    """Per topic word of ``query`` (:func:`services.ask.gate.topic_words`): ``word``; ``idf`` (its weight in
    :func:`services.ask.gate.evidence`'s coverage); ``in_course`` / ``in_top`` (its BM25 tokens all said in the course /
    in the passages ``top``); ``lex`` / ``lex_top`` (the best character similarity, rapidfuzz's
    normalised Indel ratio 0–1, to a word of the course / of ``top``); ``sem_top`` (the best MiniLM
    cosine to a word of ``top``). ``embed(texts) -> (n, d)`` L2-normalised vectors."""
    from services.ask import gate

    n, df = index.course_df(course_id)
    words = gate.topic_words(query, lambda w: any(t in df for t in index.query_tokens(w))).split()
    vocab = list(index.course_vocabulary(course_id))
    top_tokens: set[int] = set()
    top_words: set[str] = set()
    for p in top:
        top_tokens |= index.segment_tokens.get((p.hit.lecture_id, p.hit.segment_idx), frozenset())
        top_words |= set(re.findall(r"[a-z]{3,}", p.hit.text.lower()))
    top_list = sorted(top_words)
    top_vecs = _word_vectors(top_list, embed)
    out = []
    for w in words:
        toks = index.query_tokens(w)
        if not toks:
            continue
        lw = w.lower()
        best = lambda choices: (process.extractOne(lw, choices, scorer=fuzz.ratio) or (None, 0.0))[1] / 100  # noqa: E731
        sem = float((top_vecs @ _word_vectors([lw], embed)[0]).max()) if top_list else 0.0
        out.append({"word": w, "idf": sum(math.log((n + 1) / (df.get(t, 0) + 0.5)) for t in toks),
                    "df": [df.get(t, 0) for t in toks], "n": n,
                    "in_course": all(t in df for t in toks), "in_top": all(t in top_tokens for t in toks),
                    "lex": best(vocab) if vocab else 0.0, "lex_top": best(top_list) if top_list else 0.0,
                    "sem_top": sem})
    return out


def collect_rows(index, course_id: str, questions: list[dict], group_of) -> list[dict]:
    """Per question: group, covered, window, and per topic word its weight and matches."""
    from lecturecopilot import models
    from lecturecopilot.settings import Settings
    from services.ask import gate, retrieve, spelling

    settings = Settings()
    embed = lambda texts: models.embed(settings.embed_model, texts)  # noqa: E731
    vocab = index.course_vocabulary(course_id)
    compounds = index.course_compounds(course_id)
    out = []
    for q in questions:
        cq = spelling.correct(q["question"], vocab, compounds)
        sq = gate.request_topic(cq)
        v = embed([sq])[0]
        passages = retrieve.retrieve(index, course_id, None, v, sq, k=6)
        ev = gate.evidence(index, course_id, passages, cq, v, 0.5)
        out.append({"group": group_of(q), "question": q["question"], "form": q.get("form", "dev"),
                    "covered": bool(q["covered"]), "window": ev.window,
                    "words": word_matches(index, course_id, passages[:3], cq, embed)})
    return out


def _captions_lecture(eph, course: str, lec: dict) -> str:
    """Uploads ``lec``'s parts as one captions file (about 2.6 words a second); returns the lecture id."""
    t, segs = 0.0, []
    for part in lec["parts"]:
        d = max(10.0, len(part["narration"].split()) / 2.6)
        segs.append({"start_s": t, "end_s": t + d, "text": part["narration"]})
        t += d
    r = requests.post(f"{eph.base}/api/courses/{course}/lectures", headers=eph.admin, timeout=60,
                      files={"captions": ("l.vtt", lecture_vtt(segs).encode(), "text/vtt")},
                      data={"title": lec["title"], "number": str(lec["number"])})
    r.raise_for_status()
    return r.json()["lecture_id"]


def captions_courses(courses: list[tuple[dict, list[dict], Callable]]) -> list[dict]:
    """Each ``(spec, questions, group_of)``: ``spec``'s lectures (``parts`` with ``narration``) as one
    course through the captions path of one throw-away stack, then its questions' rows (each row
    also says ``lectures``, how many lectures its course has)."""
    from lecturecopilot import db
    from lecturecopilot.settings import Settings
    from lecturecopilot_ops.stack import ephemeral
    from services.ask.search_index import EmbeddedSearchIndex

    rows = []
    with tempfile.TemporaryDirectory() as tmp, ephemeral(Path(tmp) / "data") as eph:
        made = []
        for spec, questions, group_of in courses:
            course = eph.create_course(spec["course"])
            made.append((course, [_captions_lecture(eph, course, lec) for lec in spec["lectures"]]))
        for _, ids in made:
            for lid in ids:
                assert eph.wait_ready(lid, timeout_s=1800)["status"] == "ready"
        pool = db.make_pool(Settings(), max_size=2)
        index = EmbeddedSearchIndex(Path(tmp) / "qdrant", pool)
        try:
            for (spec, questions, group_of), (course, _) in zip(courses, made):
                index.sync_course(course)
                rows += [{**r, "lectures": len(spec["lectures"])}
                         for r in collect_rows(index, course, questions, group_of)]
        finally:
            index.close()
            pool.close()
    return rows


def captions_course(spec: dict, questions: list[dict], group_of) -> list[dict]:
    """``spec``'s lectures through the captions path, then rows (:func:`captions_courses`)."""
    return captions_courses([(spec, questions, group_of)])


def one_lecture_courses(spec: dict, questions: list[dict], group_of) -> list[tuple[dict, list[dict], Callable]]:
    """Each lecture of ``spec`` as a course of its own (what an instructor has after the first upload:
    a handful of passages, where a course's IDF says little), with its covered questions and the
    uncovered ones written right after them (a question with no lecture belongs to the lecture of the
    question before it)."""
    out, last = [], None
    by_lecture: dict[int, list[dict]] = {}
    for q in questions:
        if q.get("form") == "followup":
            continue
        last = q["lecture"] if q["lecture"] is not None else last
        by_lecture.setdefault(last, []).append(q)
    for lec in spec["lectures"]:
        qs = by_lecture.get(lec["number"], [])
        if qs:
            out.append(({"course": f"{lec['title']} (one lecture)", "lectures": [lec]}, qs, group_of))
    return out


def collect() -> list[dict]:
    """Every group's rows (see the module docstring)."""
    rows = []
    with dev_course_index("MIT 6.006 (gate fields)") as (index, course, _):
        rows += collect_rows(index, course, question_set("dev") + question_set("fresh"), lambda q: "mit6006")
    rob = json.loads((ROOT / "robustness" / "lectures.json").read_text())
    rows += captions_course(rob, load_jsonl(ROOT / "robustness" / "questions.jsonl"), lambda q: "robustness")
    fields = json.loads((ROOT / "fields" / "lectures.json").read_text())
    fields["lectures"] = [lec for lec in fields["lectures"] if lec.get("split", "dev") == "dev"]
    field_of = {lec["number"]: lec["field"] for lec in fields["lectures"]}
    near = {}  # an uncovered question belongs to the field of the question written before it
    qs = []
    for q in load_jsonl(ROOT / "fields" / "questions.jsonl"):
        if q.get("split", "dev") != "dev" or q["form"] == "followup":
            continue
        if q["lecture"] is not None:
            near["last"] = field_of[q["lecture"]]
        qs.append({**q, "_field": field_of[q["lecture"]] if q["lecture"] is not None else near.get("last", "?")})
    rows += captions_course(fields, qs, lambda q: q["_field"])
    rob_qs = load_jsonl(ROOT / "robustness" / "questions.jsonl")
    rows += captions_courses(one_lecture_courses(rob, rob_qs, lambda q: "robustness")
                             + one_lecture_courses(fields, qs, lambda q: q["_field"]))
    return rows


DROP = (4.0, 4.5, 5.0, 9.9)  # 9.9: off (today: only words of Zipf >= 5.7 the course never says are dropped)


@functools.lru_cache(maxsize=100_000)
def _zipf(word: str) -> float:
    import wordfreq

    return wordfreq.zipf_frequency(word.lower(), "en")


PRIOR = (0.0, 3.0, 10.0, 30.0, 100.0, 300.0)  # background passages of English (0: off, today's course IDF)


def coverage(words: list[dict], *, local: bool, lex: float, sem: float, drop: float = 9.9,
             prior: float = 0.0) -> float:
    """The IDF-weighted share of the topic words that count as said (see the module docstring);
    a word the course never says whose English Zipf frequency is ``drop`` or more is not a topic
    word ("handle" in "how does chaining handle collisions"). ``prior`` > 0: each word's IDF is
    taken over the course plus ``prior`` background passages of general English
    (:func:`services.ask.gate.idf_with_background`)."""
    from services.ask.gate import idf_with_background

    words = [w for w in words if w["in_course"] or _zipf(w["word"]) < drop]
    if prior > 0:
        words = [{**w, "idf": sum(idf_with_background(w["word"], d, w["n"], prior) for d in w["df"])}
                 for w in words]
    total = sum(w["idf"] for w in words)
    if total <= 0:
        return 0.0
    said = 0.0
    for w in words:
        exact = w["in_top"] if local else w["in_course"]
        soft = w["lex_top" if local else "lex"] >= lex or w["sem_top"] >= sem
        said += w["idf"] * (exact or soft)
    return said / total


VETO_ZIPF = (2.0, 2.5, 3.0, 3.5, 4.0)  # an unsaid word rarer than this in English names a subject …
VETO_LEX = (0.6, 0.7, 0.8, 0.9)         # … unless a course word is this close in letters (a misspelling, a mishearing)


def unsaid_subject(words: list[dict], zipf_below: float, lex_below: float) -> bool:
    """True when a topic word the course never says is rare in English (Zipf < ``zipf_below``) and
    no course word is close to it in letters (best Indel ratio < ``lex_below``): the question's
    distinctive subject ("Michaelis", "dialysis") is not what the lectures treat."""
    return any(not w["in_course"] and w["lex"] < lex_below and _zipf(w["word"]) < zipf_below for w in words)


def _vetoed(rows: list[dict], v: tuple) -> np.ndarray:
    """Per row, whether variant ``v``'s veto (elements 5 and 6: Zipf and letter cut-offs) declines it."""
    if len(v) < 7:
        return np.zeros(len(rows), dtype=bool)
    return np.asarray([unsaid_subject(r["words"], v[5], v[6]) for r in rows])


def _cov(words: list[dict], v: tuple) -> float:
    """:func:`coverage` under variant ``v`` = (local, lex, sem, drop[, prior])."""
    return coverage(words, local=v[0], lex=v[1], sem=v[2], drop=v[3], prior=v[4] if len(v) > 4 else 0.0)


def decisions(rows: list[dict], variant: tuple, weight: float, threshold: float) -> np.ndarray:
    ans = np.asarray([r["window"] + weight * _cov(r["words"], variant) >= threshold for r in rows])
    return ans & ~_vetoed(rows, variant)


def scores(answer: np.ndarray, covered: np.ndarray) -> dict:
    return {"right_call": float((answer == covered).mean()),
            "covered_declined": float((~answer & covered).sum() / max(1, covered.sum())),
            "uncovered_declined": float((~answer & ~covered).sum() / max(1, (~covered).sum()))}


def group_cv(rows: list[dict], variants: list[tuple], min_declined: float = 0.0,
             weights: tuple[float, ...] = WEIGHTS) -> dict:
    """Leave-one-group-out: each variant's (weight, threshold) and the cut-offs among ``variants``
    chosen on the other groups by right call (ties: the higher threshold), scored on the group.
    ``min_declined`` > 0: only operating points that decline at least that share of the other
    groups' uncovered questions are chosen from (the product's promise to say so when the lectures
    don't answer; ``tests/integration/test_retrieval_quality.py`` holds MIT 6.006 to 0.90)."""
    covered = np.asarray([r["covered"] for r in rows])
    groups = sorted({r["group"] for r in rows})
    gidx = np.asarray([groups.index(r["group"]) for r in rows])
    win = np.asarray([r["window"] for r in rows])
    combos = []
    right_all = []
    for v in variants:
        cov = np.asarray([_cov(r["words"], v) for r in rows])
        veto = _vetoed(rows, v)
        for w in weights:
            ans = ((win + w * cov)[:, None] >= np.asarray(THRESHOLDS)[None, :]) & ~veto[:, None]
            for k, t in enumerate(THRESHOLDS):
                combos.append((v, w, t))
                right_all.append(ans[:, k])
    answer = np.stack(right_all, axis=1)
    right = answer == covered[:, None]
    held = {}
    chosen = []
    for g, name in enumerate(groups):
        train, test = gidx != g, gidx == g
        acc = right[train].mean(axis=0)
        if min_declined > 0:
            unc = train & ~covered
            acc = np.where((~answer[unc]).mean(axis=0) >= min_declined, acc, -1.0)
        best = max(range(len(combos)), key=lambda c: (acc[c], combos[c][2]))
        chosen.append(combos[best])
        held[name] = {**scores(answer[test, best], covered[test]), "n": int(test.sum()),
                      "chosen": {"local": combos[best][0][0], "lex": combos[best][0][1], "sem": combos[best][0][2],
                                 "drop": combos[best][0][3],
                                 "prior": combos[best][0][4] if len(combos[best][0]) > 4 else 0.0,
                                 "veto": list(combos[best][0][5:7]),
                                 "weight": combos[best][1], "threshold": combos[best][2]}}
    rc = [h["right_call"] for h in held.values()]
    pooled = np.zeros(len(rows), dtype=bool)
    for g, name in enumerate(groups):
        c = held[name]["chosen"]
        v = (c["local"], c["lex"], c["sem"], c["drop"], c["prior"], *c["veto"])
        pooled[gidx == g] = decisions([r for r in rows if r["group"] == name], v, c["weight"], c["threshold"])
    one = np.asarray([r.get("lectures", 0) == 1 for r in rows])
    return {"per_group": held, "mean_right_call": statistics.mean(rc), "sd_right_call": statistics.pstdev(rc),
            "pooled_held_out": scores(pooled, covered),
            "pooled_held_out_whole_courses": scores(pooled[~one], covered[~one]),
            "pooled_held_out_one_lecture_courses": scores(pooled[one], covered[one]) if one.any() else None}


def fixed(rows: list[dict], variant: tuple, weight: float, threshold: float) -> dict:
    covered = np.asarray([r["covered"] for r in rows])
    answer = decisions(rows, variant, weight, threshold)
    one = np.asarray([r.get("lectures", 0) == 1 for r in rows])
    out = {"all": scores(answer, covered), "whole_courses": scores(answer[~one], covered[~one])}
    if one.any():
        out["one_lecture_courses"] = scores(answer[one], covered[one])
    for g in sorted({r["group"] for r in rows}):
        sub = [r for r in rows if r["group"] == g]
        out[g] = scores(decisions(sub, variant, weight, threshold), np.asarray([r["covered"] for r in sub]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cached", action="store_true", help="reuse what was collected last time")
    args = parser.parse_args()
    path = CACHE / "gate-fields.json"
    if args.cached:
        rows = json.loads(path.read_text())
    else:
        rows = collect()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(rows))
    from services.ask import gate

    exact = [(False, 1.01, 1.01, 9.9)]
    soft = [(False, lx, sm, 9.9) for lx, sm in itertools.product(LEX, SEM)]
    local = [(True, lx, sm, 9.9) for lx, sm in itertools.product(LEX, SEM)]
    out = {"command": "python -m evals.gate_fields " + " ".join(sys.argv[1:]), "questions": len(rows),
           "groups": {g: sum(r["group"] == g for r in rows) for g in sorted({r["group"] for r in rows})},
           "today_fixed_0.5_0.80": fixed(rows, exact[0], 0.5, 0.80),
           "exact": group_cv(rows, exact), "soft": group_cv(rows, soft), "local": group_cv(rows, local),
           "soft_or_local": group_cv(rows, soft + local),
           "drop_unsaid_common": group_cv(rows, [(False, 1.01, 1.01, d) for d in DROP]),
           "drop_unsaid_common_local": group_cv(rows, [(True, 1.01, 1.01, d) for d in DROP]),
           "before_fixed_local_0.75_0.80": fixed(rows, local[-1], 0.75, 0.80),
           "product_fixed": fixed(rows, (True, 1.01, 1.01, 9.9, gate.BACKGROUND_PASSAGES), gate.COVERAGE_WEIGHT,
                                  gate.THRESHOLD),
           "background_local": group_cv(rows, [(True, 1.01, 1.01, 9.9, b) for b in PRIOR]),
           "local_declining_0.9": group_cv(rows, [(True, 1.01, 1.01, 9.9)], min_declined=0.9),
           "background_local_declining_0.9": group_cv(rows, [(True, 1.01, 1.01, 9.9, b) for b in PRIOR],
                                                      min_declined=0.9),
           "background_local_soft_declining_0.9": group_cv(
               rows, [(True, lx, sm, 9.9, gate.BACKGROUND_PASSAGES) for lx, sm in itertools.product(LEX, SEM)],
               min_declined=0.9),
           "background_local_letters_fixed_weights_declining_0.9": group_cv(
               rows, [(True, lx, 1.01, 9.9, gate.BACKGROUND_PASSAGES) for lx in LEX],
               min_declined=0.9, weights=(gate.COVERAGE_WEIGHT,)),
           "unsaid_subject_declining_0.9": group_cv(
               rows, [(True, 1.01, 1.01, 9.9, gate.BACKGROUND_PASSAGES)]
               + [(True, 1.01, 1.01, 9.9, gate.BACKGROUND_PASSAGES, z, lx) for z in VETO_ZIPF for lx in VETO_LEX],
               min_declined=0.9),
           "unsaid_subject_fixed_weights_declining_0.9": group_cv(
               rows, [(True, 1.01, 1.01, 9.9, gate.BACKGROUND_PASSAGES)]
               + [(True, 1.01, 1.01, 9.9, gate.BACKGROUND_PASSAGES, z, lx) for z in VETO_ZIPF for lx in VETO_LEX],
               min_declined=0.9, weights=(gate.COVERAGE_WEIGHT,))}
    publish(out, "gate-fields-latest.json")


if __name__ == "__main__":
    main()
