"""Chapters against the lecturers' own: where the product cuts a lecture, next to where the course cut it.

    .venv/bin/python -m evals.chapters        # -> evals/results/chapters-latest.json, chapters.md

The MIT 6.006 lectures 3–5 are loaded through the captions path of a throw-away stack (as
``evals.heldout`` does) and their chapters read back from ``GET /api/lectures/{id}``. The reference is
the course's published chapter list (``data/mit6006/lectures.jsonl``: 5–6 chapters a lecture, the
video's own chapters, written by people; the chapterer was never fitted to them).

Measured per lecture and pooled (the lectures' 16 chapters):

- **Pk** (Beeferman, Berger & Lafferty, "Statistical Models for Text Segmentation", Machine
  Learning 34, 1999) and **WindowDiff** (Pevzner & Hearst, "A Critique and Improvement of an
  Evaluation Metric for Text Segmentation", Computational Linguistics 28(1), 2002), from
  ``nltk.metrics.segmentation``, over the lecture cut into 1-second units, with the window ``k``
  half the mean reference chapter length, as both papers set it: the chance that a probe of two
  moments ``k`` seconds apart is judged wrongly (same chapter or not); lower is better, 0 is exact;
- **boundary precision / recall / F1** within ±60 s (a chapter start within a minute of the
  lecturer's, each matched once) and the number of chapters;
- **titles**: of the reference chapters, the share whose most-overlapping product chapter's title
  shares a content word (stemmed) with the reference title.

Next to three baselines on the same units: one chapter per lecture; a chapter every 10 minutes;
and the reference's own count cut into equal parts (the count is an oracle the product does not
have). Then two knobs of :func:`services.index.chapters.chapter_boundaries` (TextTiling's block, the
chapter budget's seconds per chapter) over a small grid on the product's own segments (read from
the stack's ``segments`` table), chosen by leave-one-lecture-out: what choosing them on two
lectures would give on the third, and whether the product's choice is far from that.
"""

from __future__ import annotations

import json
import math
import re
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import psycopg
import requests
from nltk.metrics.segmentation import pk, windowdiff
from nltk.stem import PorterStemmer

from evals.retrieval import DATA, RESULTS, load_dev_set, load_jsonl, upload_course
from services.index.chapters import chapter_boundaries

CACHE = Path(__file__).resolve().parent / ".cache" / "chapter-segments.npz"  # the product's segments of the last run (for trying knobs)
TOLERANCE_S = 60.0
BLOCKS = (2, 3, 4)
PER_CHAPTER = (None, 450.0, 600.0, 900.0)
_STOP = {"and", "the", "of", "for", "to", "a", "an", "in", "on", "vs", "with", "its", "their"}


def units(starts: list[float], duration_s: float) -> str:
    """The segmentation as nltk wants it: one character per second of lecture, "1" where a chapter
    starts at the next second (the boundary after that unit), else "0". ``starts``: chapter starts
    (seconds); the one at 0 is implicit."""
    n = max(1, int(math.ceil(duration_s)))
    marks = ["0"] * n
    for s in starts:
        i = int(round(s)) - 1
        if 0 <= i < n - 1:
            marks[i] = "1"
    return "".join(marks)


def boundary_match(ref: list[float], hyp: list[float], tol_s: float = TOLERANCE_S) -> int:
    """How many of ``hyp``'s chapter starts (seconds, 0 excluded) lie within ``tol_s`` of one of
    ``ref``'s, each reference start matched at most once (closest pairs first)."""
    pairs = sorted((abs(h - r), i, j) for i, h in enumerate(hyp) for j, r in enumerate(ref) if abs(h - r) <= tol_s)
    used_h, used_r, hits = set(), set(), 0
    for _, i, j in pairs:
        if i not in used_h and j not in used_r:
            used_h.add(i)
            used_r.add(j)
            hits += 1
    return hits


def _stems(title: str, stem=PorterStemmer().stem) -> set[str]:
    return {stem(w) for w in re.findall(r"[a-z]+", title.lower()) if w not in _STOP and len(w) > 2}


def title_share(ref: list[dict], hyp: list[dict], duration_s: float) -> float:
    """Share of reference chapters whose most-overlapping hypothesis chapter's title shares a
    stemmed content word with theirs. ``ref``/``hyp``: ``{"start_s", "end_s", "title"}``."""
    ok = 0
    for r in ref:
        best = max(hyp, key=lambda h: min(h["end_s"], r["end_s"]) - max(h["start_s"], r["start_s"]))
        ok += bool(_stems(best["title"]) & _stems(r["title"]))
    return ok / len(ref)


def score(ref_starts: list[float], hyp_starts: list[float], duration_s: float) -> dict:
    """Pk, WindowDiff (1-s units, k = half the mean reference chapter length) and boundary
    precision/recall (±``TOLERANCE_S``) of chapter starts ``hyp_starts`` against ``ref_starts``
    (seconds, both including 0)."""
    r_in = [s for s in ref_starts if s > 0.5]
    h_in = [s for s in hyp_starts if s > 0.5]
    k = max(2, int(round(duration_s / len(ref_starts) / 2)))
    ru, hu = units(r_in, duration_s), units(h_in, duration_s)
    hits = boundary_match(r_in, h_in)
    return {"pk": pk(ru, hu, k=k), "windowdiff": windowdiff(ru, hu, k), "chapters": len(hyp_starts),
            "boundaries": len(h_in), "hits": hits, "ref_boundaries": len(r_in)}


def pooled(rows: list[dict]) -> dict:
    """Mean Pk and WindowDiff over lectures; precision/recall/F1 over all boundaries."""
    hits = sum(r["hits"] for r in rows)
    p = hits / max(1, sum(r["boundaries"] for r in rows))
    rc = hits / max(1, sum(r["ref_boundaries"] for r in rows))
    return {"pk": statistics.mean(r["pk"] for r in rows), "windowdiff": statistics.mean(r["windowdiff"] for r in rows),
            "precision": p, "recall": rc, "f1": 2 * p * rc / (p + rc) if p + rc else 0.0,
            "chapters": sum(r["chapters"] for r in rows)}


def baselines(ref: dict[int, list[float]], durations: dict[int, float]) -> dict[str, dict]:
    """The three baselines of the module docstring, pooled."""
    out = {}
    for name, cut in (("one chapter", lambda n, d: [0.0]),
                      ("every 10 minutes", lambda n, d: [600.0 * i for i in range(int(d // 600) + 1) if 600.0 * i < d - 60]),
                      ("equal parts, reference count (oracle)", lambda n, d: [d * i / n for i in range(n)])):
        out[name] = pooled([score(ref[no], cut(len(ref[no]), durations[no]), durations[no]) for no in ref])
    return out


def segments_of(db_url: str, lecture_id: str) -> tuple[list[float], np.ndarray, list[str]]:
    """(start seconds, embeddings (n, dim), texts) of a lecture's index segments, in order."""
    with psycopg.connect(db_url) as c:
        rows = c.execute("SELECT start_s, embedding, text FROM segments WHERE lecture_id = %s ORDER BY idx",
                         (lecture_id,)).fetchall()
    return [r[0] for r in rows], np.array([r[1] for r in rows], dtype=np.float32), [r[2] for r in rows]


def sweep(segs: dict[int, tuple[list[float], np.ndarray]], ref: dict[int, list[float]],
          durations: dict[int, float]) -> dict:
    """Pk and boundary F1 of every (TextTiling block, seconds per chapter of the budget; None: no
    budget) on each lecture, the product's other knobs as they are, and leave-one-lecture-out: the
    pair with the best F1 on the other lectures, scored on the held-out one."""
    grid = {}
    for block in BLOCKS:
        for per_s in PER_CHAPTER:
            rows = {}
            for no, (starts, vecs) in segs.items():
                top = None if per_s is None else math.ceil(durations[no] / per_s)
                hyp = [starts[i] for i in chapter_boundaries(vecs, max_chapters=top, block=block)]
                rows[no] = score(ref[no], hyp, durations[no])
            grid[(block, per_s)] = rows
    folds = []
    for held in segs:
        fit = max(grid, key=lambda g: pooled([r for no, r in grid[g].items() if no != held])["f1"])
        folds.append({"held_out": held, "chosen": list(fit), **grid[fit][held]})
    return {"grid": [{"block": b, "per_chapter_s": p, "pk_by_lecture": {no: r["pk"] for no, r in rows.items()},
                      **pooled(list(rows.values()))} for (b, p), rows in grid.items()],
            "leave_one_lecture_out": folds, "held_out": pooled(folds),
            "held_out_pk_sd": statistics.pstdev(f["pk"] for f in folds)}


def run() -> dict:
    from lecturecopilot_ops.stack import ephemeral

    by_lecture, titles, _ = load_dev_set()
    lectures = {l["lecture_no"]: l for l in load_jsonl(DATA / "lectures.jsonl")}
    ref = {no: [c["t_s"] for c in lectures[no]["chapters"]] for no in by_lecture}
    durations = {no: lectures[no]["duration_s"] for no in by_lecture}
    t0 = time.time()
    with tempfile.TemporaryDirectory() as tmp, ephemeral(Path(tmp) / "data") as eph:
        _, ids = upload_course(eph, "MIT 6.006 (chapters)", by_lecture, titles)
        got = {no: requests.get(f"{eph.base}/api/lectures/{lid}", timeout=30).json()["chapters"] for no, lid in ids.items()}
        segs = {no: segments_of(eph.db_url, lid) for no, lid in ids.items()}
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    np.savez(CACHE, **{f"starts_{no}": np.array(s) for no, (s, _, _) in segs.items()},
             **{f"vecs_{no}": v for no, (_, v, _) in segs.items()}, **{f"texts_{no}": np.array(t) for no, (_, _, t) in segs.items()})
    segs = {no: (s, v) for no, (s, v, _) in segs.items()}
    per, titles_ok = {}, []
    for no in sorted(ref):
        per[no] = score(ref[no], [c["start_s"] for c in got[no]], durations[no])
        starts = ref[no] + [durations[no]]
        rch = [{"start_s": a, "end_s": b, "title": c["title"]}
               for a, b, c in zip(starts, starts[1:], lectures[no]["chapters"])]
        per[no]["titles"] = [c["title"] for c in got[no]]
        per[no]["starts_s"] = [round(c["start_s"], 1) for c in got[no]]
        per[no]["reference_starts_s"] = ref[no]
        titles_ok.append(title_share(rch, got[no], durations[no]))
    product = pooled(list(per.values()))
    product["title_share"] = statistics.mean(titles_ok)
    return {"command": "python -m evals.chapters", "seconds": round(time.time() - t0, 1),
            "tolerance_s": TOLERANCE_S, "product": product, "by_lecture": per,
            "baselines": baselines(ref, durations), "sweep": sweep(segs, ref, durations)}


def markdown(res: dict) -> str:
    """The result as the table of ``results/chapters.md``."""
    head = "| chapterer | Pk ↓ | WindowDiff ↓ | boundary P | R | F1 (±60 s) | chapters |\n|---|---|---|---|---|---|---|\n"

    def row(name: str, s: dict) -> str:
        return (f"| {name} | {s['pk']:.3f} | {s['windowdiff']:.3f} | {s['precision']:.2f} | {s['recall']:.2f} | "
                f"{s['f1']:.2f} | {s['chapters']} |\n")

    body = row("the product", res["product"])
    body += "".join(row(n, s) for n, s in res["baselines"].items())
    lines = [f"`{res['command']}` — MIT 6.006 lectures 3–5 (captions path), 16 reference chapters.\n", head + body,
             f"\nTitles: {res['product']['title_share']:.2f} of reference chapters overlap a product chapter whose "
             "title shares a content word with theirs.\n"]
    for no, r in res["by_lecture"].items():
        lines.append(f"- L{no}: {r['starts_s']} {r['titles']} — reference {r['reference_starts_s']}\n")
    sw = res["sweep"]
    lines.append("\n| TextTiling block | seconds per chapter | Pk | F1 | chapters |\n|---|---|---|---|---|\n")
    lines += [f"| {g['block']} | {g['per_chapter_s'] or 'no budget'} | {g['pk']:.3f} | {g['f1']:.2f} | {g['chapters']} |\n"
              for g in sw["grid"]]
    lines.append(f"\nLeave-one-lecture-out over that grid (best F1 on two lectures, scored on the third): Pk "
                 f"{sw['held_out']['pk']:.3f} ± {sw['held_out_pk_sd']:.3f}, F1 {sw['held_out']['f1']:.2f}; chosen "
                 f"{[f['chosen'] for f in sw['leave_one_lecture_out']]} (block, seconds per chapter).\n")
    return "".join(lines)


def main() -> None:
    res = run()
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "chapters-latest.json").write_text(json.dumps(res, indent=1, default=str) + "\n")
    (RESULTS / "chapters.md").write_text(markdown(res))
    print(markdown(res))


if __name__ == "__main__":
    main()
