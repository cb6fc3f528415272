"""The robustness benchmark: term-heavy lectures spoken by two voices, through the whole product.

    .venv/bin/python -m evals.robustness                        # base, both voices, vocabulary on and off
    .venv/bin/python -m evals.robustness --models tiny.en --voices piper

The six generated lectures of ``evals/robustness/lectures.json`` (written for this benchmark; each part
a paragraph of narration under a slide naming its terms) are narrated by espeak-ng and by Piper's
neural voice (``lecturecopilot_ops.synth``), uploaded as videos through the public API of a throw-away
stack, and processed by the real pipeline (slides → transcription → index). That happens twice per
voice: with the course's vocabulary prompting speech recognition (``LC_ASR_VOCABULARY=1``, the
default) and without it. Then, through the API:

- **transcripts**: the spoken sentences of ``GET /api/lectures/{id}/transcript`` against the narration:
  word error rate and term error rate (``evals.asr_terms.score``);
- **search**: ``POST /api/courses/{id}/search`` for each of the benchmark's questions; a hit is a
  result in the question's lecture overlapping its part's span; recall@1/3, MRR;
- **answers**: ``POST /api/courses/{id}/ask`` (extractive writer, no key): a covered question is
  answered right when it is not declined and a citation lands inside its part (± 1 s); an uncovered
  one when it is declined.

Results: ``evals/results/robustness-latest.json`` and ``robustness.md``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import requests

from evals.asr_terms import LECTURES, RESULTS, VOICES, lecture_video, score

QUESTIONS = LECTURES.parent / "questions.jsonl"


def load_questions() -> list[dict]:
    return [json.loads(x) for x in QUESTIONS.read_text().splitlines() if x.strip()]


def upload(eph, course_id: str, video: Path, title: str, number: int) -> str:
    with open(video, "rb") as f:
        r = requests.post(f"{eph.base}/api/courses/{course_id}/lectures", headers=eph.admin,
                          files={"video": (video.name, f, "video/mp4")},
                          data={"title": title, "number": str(number)}, timeout=300)
    r.raise_for_status()
    return r.json()["lecture_id"]


def spans_of(lecture: dict, starts: list[float], duration_s: float) -> list[tuple[float, float]]:
    """Each part's span in the video (seconds): from its narration's start to the next part's."""
    ends = starts[1:] + [duration_s]
    return list(zip(starts, ends))


def run_config(eph, voice: str, vocabulary: bool, course: dict, questions: list[dict]) -> dict:
    """One course (all lectures, one voice) through the stack ``eph``; the scores of one row."""
    cid = eph.create_course(f"{course['course']} [{voice}, vocabulary {'on' if vocabulary else 'off'}]")
    ids, spans = {}, {}
    t0 = time.time()
    for lec in course["lectures"]:  # in order: a lecture's vocabulary includes the earlier ones' slides
        video, starts = lecture_video(lec, voice)
        duration = json.loads(video.with_suffix(".json").read_text())["duration_s"]
        ids[lec["number"]] = upload(eph, cid, video, lec["title"], lec["number"])
        spans[lec["number"]] = spans_of(lec, starts, duration)
        st = eph.wait_ready(ids[lec["number"]], timeout_s=900)
        if st["status"] != "ready":
            raise RuntimeError(f"lecture {lec['number']} failed: {st['error']}")
    ready_s = time.time() - t0
    asr = []
    for lec in course["lectures"]:
        tr = requests.get(f"{eph.base}/api/lectures/{ids[lec['number']]}/transcript", timeout=30).json()
        hyp = " ".join(s["text"] for s in tr["segments"] if s.get("kind", "speech") == "speech")
        asr.append(score(" ".join(p["narration"] for p in lec["parts"]), hyp, lec["terms"]))
    number_of = {v: k for k, v in ids.items()}
    ranks, right, rows = [], [], []
    for q in questions:
        r = requests.post(f"{eph.base}/api/courses/{cid}/search", json={"query": q["question"], "k": 6},
                          headers=eph.admin, timeout=30).json()["results"]
        a = requests.post(f"{eph.base}/api/courses/{cid}/ask", json={"question": q["question"]},
                          headers=eph.admin, timeout=60).json()
        if q["covered"]:
            a0, b0 = spans[q["lecture"]][q["part"]]
            hit = [number_of.get(x["lecture_id"]) == q["lecture"] and x["start_s"] < b0 and x["end_s"] > a0 for x in r]
            rank = next((i + 1 for i, h in enumerate(hit) if h), 0)
            ranks.append(rank)
            cites = [c for s in a["sentences"] for c in s["citations"]]
            ok = (not a["declined"]) and any(number_of.get(c["lecture_id"]) == q["lecture"]
                                              and a0 - 1 <= c["t_s"] <= b0 + 1 for c in cites)
        else:
            rank, ok = None, bool(a["declined"])
        right.append(ok)
        rows.append({"id": q["id"], "form": q["form"], "covered": q["covered"], "rank": rank, "right": ok,
                     "declined": a["declined"], "answer": a["answer"][:300]})
    cov = [r for r in rows if r["covered"]]
    words = sum(x["words"] for x in asr)
    occ = sum(x["term_occurrences"] for x in asr)
    return {
        "voice": voice, "vocabulary": vocabulary, "lectures": len(course["lectures"]), "ready_s": round(ready_s, 1),
        "wer": sum(x["wer"] * x["words"] for x in asr) / words, "ter": sum(x["terms_missed"] for x in asr) / occ,
        "recall_1": sum(r == 1 for r in ranks) / len(ranks), "recall_3": sum(1 <= r <= 3 for r in ranks) / len(ranks),
        "mrr": sum(1 / r for r in ranks if r) / len(ranks),
        "covered_answered_in_part": sum(r["right"] for r in cov) / len(cov),
        "uncovered_declined": sum(r["right"] for r in rows if not r["covered"]) / max(1, sum(not r["covered"] for r in rows)),
        "rows": rows,
    }


def run(models_: list[str], voices: list[str], modes: list[bool]) -> dict:
    from lecturecopilot_ops.stack import ephemeral

    course = json.loads(LECTURES.read_text())
    questions = load_questions()
    out = []
    for model in models_:
        for vocabulary in modes:
            env = {"LC_ASR_VOCABULARY": "1" if vocabulary else "0"}
            with tempfile.TemporaryDirectory() as tmp, ephemeral(Path(tmp) / "data", whisper_model=model,
                                                                 whisper_beam_size=None, extra_env=env) as eph:
                for voice in voices:
                    row = run_config(eph, voice, vocabulary, course, questions)
                    row["model"] = model
                    out.append(row)
                    print(f"{model} {voice} vocabulary={vocabulary}: WER {row['wer']:.3f} TER {row['ter']:.3f} "
                          f"R@1 {row['recall_1']:.3f} R@3 {row['recall_3']:.3f} answered-in-part "
                          f"{row['covered_answered_in_part']:.3f} uncovered-declined {row['uncovered_declined']:.3f}",
                          file=sys.stderr)
    return {"rows": out, "command": "python -m evals.robustness " + " ".join(sys.argv[1:]), "machine": "2 cores, no GPU",
            "questions": len(questions)}


def markdown(result: dict) -> str:
    lines = [f"Command `{result['command']}`; {result['machine']}; {result['questions']} questions.", "",
             "| model | voice | course vocabulary | WER | term error rate | search R@1 | R@3 | MRR | covered answered in the right part | uncovered declined | upload→ready, 6 lectures (s) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in result["rows"]:
        lines.append(f"| {r['model']} | {r['voice']} | {'on' if r['vocabulary'] else 'off'} | {r['wer']:.3f} | {r['ter']:.3f} | "
                     f"{r['recall_1']:.3f} | {r['recall_3']:.3f} | {r['mrr']:.3f} | {r['covered_answered_in_part']:.3f} | "
                     f"{r['uncovered_declined']:.3f} | {r['ready_s']} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=["base"])
    parser.add_argument("--voices", nargs="+", default=list(VOICES))
    parser.add_argument("--modes", nargs="+", default=["on", "off"], choices=["on", "off"])
    args = parser.parse_args()
    result = run(args.models, args.voices, [m == "on" for m in args.modes])
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "robustness-latest.json").write_text(json.dumps(result, indent=2))
    (RESULTS / "robustness.md").write_text(markdown(result))
    print(markdown(result))


if __name__ == "__main__":
    main()
