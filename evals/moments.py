"""Questions about a moment ("Ask about this moment", issue 33 item 1), through the public API.

    .venv/bin/python -m evals.moments                       # MIT 6.006 (captions) and the robustness lectures
    .venv/bin/python -m evals.moments --corpus mit6006      # the MIT part only (captions: minutes, no speech recognition)

The set is ``evals/moments/questions.jsonl`` (see its README): questions that point at the screen ("what
does this mean?", "explain this slide", "what did he just say about X?"), each keyed to a second of a
lecture: MIT 6.006 lectures 3–5 loaded through the captions path (no slides: the moment's window is 30 s
either side of the second), and the six generated robustness lectures narrated by espeak-ng and processed
by the whole pipeline (slides → transcription → index), where the window is the time the part's slide is
on screen (the part's span) and the second is ``offset_s`` into the part.

Each question is asked twice through ``POST /api/courses/{id}/ask`` (extractive writer, no key): on the
**moment path**, with ``at: {lecture_id, t_s}`` as the page sends it while the video is paused, and on the
**plain path**, without it, as before this feature. Measured per path: answered from the right window (not
declined, and the answer's first citation in the question's lecture inside the window, ± 1 s: what the
student hears first is what was on screen and said then), every citation inside it, declined, and the
same per corpus and form. Results: ``evals/results/moments-latest.json`` and ``moments.md``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import requests

from evals.asr_terms import LECTURES as ROBUSTNESS_LECTURES, lecture_video
from evals.retrieval import RESULTS, load_dev_set, load_jsonl, upload_course
from evals.robustness import spans_of, upload

QUESTIONS = Path(__file__).resolve().parent / "moments" / "questions.jsonl"
NEAR_S = 30.0  # without a slide the moment is what is said 30 s either side (issue 33)
SLACK_S = 1.0  # a citation this close to a window's edge counts (as evals.robustness counts a part's)


def _ask(eph, course_id: str, question: str, at: dict | None) -> dict:
    body = {"question": question, **({"at": at} if at else {})}
    r = requests.post(f"{eph.base}/api/courses/{course_id}/ask", json=body, headers=eph.admin, timeout=120)
    r.raise_for_status()
    return r.json()


def _cites(a: dict) -> list[dict]:
    return [c for s in a["sentences"] for c in s["citations"]]


def judged(a: dict, lecture_id: str, lo: float, hi: float) -> dict:
    """What one answer came to for a window ``lo``..``hi`` (seconds) of ``lecture_id``."""
    inside = [c["lecture_id"] == lecture_id and lo - SLACK_S <= c["t_s"] <= hi + SLACK_S for c in _cites(a)]
    return {"declined": a["declined"], "right_window": bool(not a["declined"] and inside and inside[0]),
            "all_inside": bool(not a["declined"] and inside and all(inside)),
            "labels": [c["label"] for c in _cites(a)], "answer": a["answer"][:300]}


def mit_course(eph) -> tuple[str, dict[int, str]]:
    """MIT 6.006 lectures 3–5 through the captions path: (course id, {lecture number: id})."""
    by_lecture, titles, _ = load_dev_set()
    return upload_course(eph, "MIT 6.006 Introduction to Algorithms (moments)", by_lecture, titles)


def robustness_course(eph, voice: str = "espeak") -> tuple[str, dict[int, str], dict[int, list[tuple[float, float]]]]:
    """The robustness lectures narrated by ``voice`` through the whole pipeline: (course id, {number: id},
    {number: each part's span in seconds})."""
    course = json.loads(ROBUSTNESS_LECTURES.read_text())
    cid = eph.create_course(f"{course['course']} [{voice}] (moments)")
    ids, spans = {}, {}
    for lec in course["lectures"]:
        video, starts = lecture_video(lec, voice)
        duration = json.loads(video.with_suffix(".json").read_text())["duration_s"]
        ids[lec["number"]] = upload(eph, cid, video, lec["title"], lec["number"])
        spans[lec["number"]] = spans_of(lec, starts, duration)
        st = eph.wait_ready(ids[lec["number"]], timeout_s=900)
        if st["status"] != "ready":
            raise RuntimeError(f"lecture {lec['number']} failed: {st['error']}")
    return cid, ids, spans


def keyed(q: dict, ids: dict[int, str], spans: dict[int, list[tuple[float, float]]] | None) -> tuple[str, float, float, float]:
    """(lecture id, second, window start, window end) of question ``q``."""
    if q["corpus"] == "robustness":
        lo, hi = spans[q["lecture"]][q["part"]]
        return ids[q["lecture"]], lo + q["offset_s"], lo, hi
    return ids[q["lecture"]], q["t_s"], max(0.0, q["t_s"] - NEAR_S), q["t_s"] + NEAR_S


def ask_both(eph, course_id: str, questions: list[dict], ids: dict, spans: dict | None) -> list[dict]:
    """Each question on the moment path and the plain path; one row each."""
    rows = []
    for q in questions:
        lecture_id, t, lo, hi = keyed(q, ids, spans)
        moment = judged(_ask(eph, course_id, q["question"], {"lecture_id": lecture_id, "t_s": round(t, 2)}), lecture_id, lo, hi)
        plain = judged(_ask(eph, course_id, q["question"], None), lecture_id, lo, hi)
        rows.append({"id": q["id"], "corpus": q["corpus"], "form": q["form"], "question": q["question"],
                     "t_s": round(t, 2), "window": [round(lo, 2), round(hi, 2)], "moment": moment, "plain": plain})
    return rows


def summary(rows: list[dict]) -> dict:
    """Shares per path (moment, plain) over ``rows``."""
    n = max(1, len(rows))
    return {"questions": len(rows), **{f"{path}_{key}": sum(r[path][key] for r in rows) / n
                                      for path in ("moment", "plain") for key in ("right_window", "all_inside", "declined")}}


def score(rows: list[dict]) -> dict:
    """The summary over all rows, per corpus and per form."""
    groups = {f"{field}={v}": summary([r for r in rows if r[field] == v])
              for field in ("corpus", "form") for v in sorted({r[field] for r in rows})}
    return {**summary(rows), "by": groups}


def run(corpora: list[str], model: str) -> dict:
    from lecturecopilot_ops.stack import ephemeral

    questions = [q for q in load_jsonl(QUESTIONS) if q["corpus"] in corpora]
    rows: list[dict] = []
    t0 = time.time()
    with tempfile.TemporaryDirectory() as tmp, \
            ephemeral(Path(tmp) / "data", whisper_model=model, whisper_beam_size=None) as eph:
        if "mit6006" in corpora:
            cid, ids = mit_course(eph)
            rows += ask_both(eph, cid, [q for q in questions if q["corpus"] == "mit6006"], ids, None)
        if "robustness" in corpora:
            cid, ids, spans = robustness_course(eph)
            rows += ask_both(eph, cid, [q for q in questions if q["corpus"] == "robustness"], ids, spans)
    return {"command": "python -m evals.moments " + " ".join(sys.argv[1:]), "machine": "2 cores, no GPU",
            "writer": "extractive (no key)", "whisper_model": model, "voice": "espeak", "seconds": round(time.time() - t0, 1),
            **score(rows), "rows": rows}


def markdown(r: dict) -> str:
    lines = [f"Command `{r['command']}`; {r['writer']}; {r['machine']}; {r['questions']} questions.", "",
             "| questions | n | moment path: answered from the right window | plain path | moment: every citation inside | "
             "plain | moment: declined | plain |", "|---|---|---|---|---|---|---|---|"]
    for name, s in [("all", r), *r["by"].items()]:
        lines.append(f"| {name} | {s['questions']} | {s['moment_right_window']:.3f} | {s['plain_right_window']:.3f} | "
                     f"{s['moment_all_inside']:.3f} | {s['plain_all_inside']:.3f} | {s['moment_declined']:.3f} | "
                     f"{s['plain_declined']:.3f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", nargs="+", default=["mit6006", "robustness"], choices=["mit6006", "robustness"])
    parser.add_argument("--model", default="base", help="the speech recognition model of the robustness lectures")
    args = parser.parse_args()
    r = run(args.corpus, args.model)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "moments-latest.json").write_text(json.dumps(r, indent=2))
    (RESULTS / "moments.md").write_text(markdown(r))
    print(markdown(r))


if __name__ == "__main__":
    main()
