"""Exam-prep evaluation on the MIT 6.006 dev lectures (3–5), no cloud model.

    .venv/bin/python -m evals.examprep     # -> evals/results/examprep-latest.json, examprep.md

The lectures are loaded through the product's captions import in an ephemeral stack (as in
``evals.retrieval``); each lecture's set is generated and stored by
``services.ask.examprep.store.generate`` (extractive writer). Reported per lecture: questions
written, questions kept, the share the blind check dropped (and why), seconds to generate a
set (embedding model warm); then a sample of five kept questions with their chips. As a
sanity figure for the check itself: the share of kept questions it rejects once their marked
answer is moved to another option (it should reject them all).
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path

import psycopg

from evals.retrieval import RESULTS, load_dev_set, upload_course


def run(out_dir: Path = RESULTS) -> dict:
    from lecturecopilot import models
    from lecturecopilot.stack import ephemeral
    from services.ask import examprep as ep
    from services.ask.examprep import store

    by_lecture, titles, _ = load_dev_set()
    with tempfile.TemporaryDirectory() as tmp, ephemeral(Path(tmp) / "data") as eph:
        course, ids = upload_course(eph, "MIT 6.006 (exam prep eval)", by_lecture, titles)
        embed = lambda texts: models.embed(eph.settings.embed_model, texts)  # noqa: E731
        embed(["warm up"])
        rows, samples, swapped = [], [], []
        with psycopg.connect(eph.db_url, autocommit=True) as conn:
            for no, lid in sorted(ids.items()):
                g = store.generate(conn, lid, embed)
                rows.append({"lecture": no, "title": titles[no], "written": g.written, "kept": g.kept,
                             "dropped_share": g.dropped_share, "dropped_reasons": g.dropped_reasons,
                             "seconds": g.seconds, "method": g.method})
                _, sents, span = store.lecture_material(conn, lid)
                for q in g.questions:
                    for k in (1, 2, 3):
                        wrong = ep.Question(lid, q["stem"], ep.statement_of(q["stem"]), list(q["options"]),
                                            (q["answer_index"] + k) % 4, q["explanation"], q["cite_lecture_id"],
                                            q["cite_t_s"])
                        swapped.append(not ep.check(wrong, sents, span, embed).ok)
                samples += [{"lecture": no, "stem": q["stem"], "options": q["options"], "answer_index": q["answer_index"],
                             "chip": q["label"], "method": q["method"]} for q in g.questions]
    written = sum(r["written"] for r in rows)
    result = {
        "dataset": "MIT 6.006 dev lectures 3–5 (captions import)", "writer": "extractive (no key)",
        "lectures": rows,
        "questions_per_lecture": statistics.mean(r["kept"] for r in rows),
        "dropped_share": sum(r["written"] - r["kept"] for r in rows) / max(1, written),
        "seconds_per_set": {"mean": statistics.mean(r["seconds"] for r in rows),
                            "max": max(r["seconds"] for r in rows)},
        "check_rejects_swapped_answers": sum(swapped) / max(1, len(swapped)),
        "samples": pick_samples(samples),
        "command": "python -m evals.examprep", "machine": "2 cores, no GPU, shared",
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "examprep-latest.json").write_text(json.dumps(result, indent=2, ensure_ascii=False))
    (out_dir / "examprep.md").write_text(markdown(result))
    return result


def pick_samples(samples: list[dict], n: int = 5) -> list[dict]:
    """``n`` samples: the running-time questions first (at most 2), then one per lecture in turn."""
    timed = [s for s in samples if s["stem"].startswith("Which running time")][:2]
    rest = [s for s in samples if s not in timed]
    by_lecture: dict[int, list[dict]] = {}
    for s in rest:
        by_lecture.setdefault(s["lecture"], []).append(s)
    out = list(timed)
    while len(out) < n and any(by_lecture.values()):
        for qs in by_lecture.values():
            if qs and len(out) < n:
                out.append(qs.pop(0))
    return sorted(out, key=lambda s: (s["lecture"], s["chip"]))


def sample_text(s: dict) -> str:
    """One sample as text: the stem, the options (the correct one marked ✓) and its chip."""
    opts = "; ".join(f"{'ABCD'[i]}) {o}{' ✓' if i == s['answer_index'] else ''}" for i, o in enumerate(s["options"]))
    return f"{s['stem']} — {opts} — `{s['chip']}`"


def markdown(r: dict) -> str:
    lines = [f"Writer: {r['writer']}; {r['dataset']}; command `{r['command']}`; {r['machine']}.", "",
             "| lecture | written | kept | dropped by the check | why dropped | seconds per set |", "|---|---|---|---|---|---|"]
    for x in r["lectures"]:
        why = ", ".join(f"{k} {v}" for k, v in sorted(x["dropped_reasons"].items())) or "–"
        lines.append(f"| L{x['lecture']} {x['title']} | {x['written']} | {x['kept']} | {x['dropped_share']:.2f} | {why} "
                     f"| {x['seconds']:.2f} |")
    lines += ["", f"Questions kept per lecture: {r['questions_per_lecture']:.2f}; share dropped by the check: "
                  f"{r['dropped_share']:.3f}; seconds per set: mean {r['seconds_per_set']['mean']:.2f}, "
                  f"max {r['seconds_per_set']['max']:.2f}; the check rejects "
                  f"{r['check_rejects_swapped_answers']:.3f} of kept questions with their marked answer swapped.",
              "", "Sample:", ""]
    lines += [f"{i}. {sample_text(s)}" for i, s in enumerate(r["samples"], 1)]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    t0 = time.perf_counter()
    res = run()
    print(markdown(res))
    print(f"({time.perf_counter() - t0:.0f} s)")
