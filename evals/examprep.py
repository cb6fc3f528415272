"""Exam-prep evaluation on the MIT 6.006 dev lectures (3–5), no cloud model; and, with
``--fields``, on short narrated lectures of other fields.

    .venv/bin/python -m evals.examprep            # -> evals/results/examprep-latest.json, examprep.md
    .venv/bin/python -m evals.examprep --fields   # -> evals/results/examprep-fields.json, examprep-fields.md

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
import math
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import psycopg

from evals.retrieval import RESULTS, load_dev_set, upload_course


def run(out_dir: Path = RESULTS) -> dict:
    from lecturecopilot import models
    from lecturecopilot_ops.stack import ephemeral
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
    timed = [s for s in samples if s["stem"].startswith(("Which value", "Which expression"))][:2]
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


# -- other fields: the pure writer and check on narrated lectures ------------------------------------
FIELDS = Path(__file__).resolve().parent / "examprep_lectures.json"
NARRATED = Path(__file__).resolve().parent / "fields" / "lectures.json"  # another eval's lectures, when present
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9“\"])")


def timed_sentences(texts: list[str], words_per_minute: float = 150.0):
    """``LectureSentence`` rows for spoken ``texts`` (one sentence each), timed at
    ``words_per_minute`` (a narrated lecture's pace, ~150) from 0 s."""
    from services.ask import examprep as ep

    out, t = [], 0.0
    for i, x in enumerate(texts):
        d = len(x.split()) * 60.0 / words_per_minute
        out.append(ep.LectureSentence(i, round(t, 2), round(t + d, 2), x))
        t += d
    return out


def field_lectures() -> list[dict]:
    """Lectures of other fields: ``{"field", "course", "title", "split", "sentences"}`` from
    evals/examprep_lectures.json, plus those of evals/fields/lectures.json when it exists (each
    lecture's parts' "narration" split into sentences; split "narrated")."""
    doc = json.loads(FIELDS.read_text())
    out = [dict(l) for l in doc["lectures"]]
    if NARRATED.exists():
        raw = json.loads(NARRATED.read_text())
        items = raw.get("lectures", raw) if isinstance(raw, dict) else raw
        for i, l in enumerate(items if isinstance(items, list) else []):
            text = " ".join(p.get("narration", "") for p in l.get("parts", []) if isinstance(p, dict))
            sents = [x.strip() for x in _SENTENCE_END.split(" ".join(text.split())) if x.strip()]
            if sents:
                field = l.get("field") or l.get("subject") or l.get("course") or "narrated"
                out.append({"field": field, "course": f"narrated:{l.get('course') or field}:{i}",
                            "title": l.get("title", f"lecture {i}"), "split": "narrated", "sentences": sents})
    return out


def run_fields(out_dir: Path = RESULTS, embed=None) -> dict:
    """Per lecture of :func:`field_lectures`: minutes (at 150 words a minute), questions written and
    kept, kept per 2 minutes, the share the check dropped, the share of kept questions the check
    rejects once their marked answer is moved to each other option (should be 1.0), and how often the
    set's most offered wrong option recurs (a decoy met in every question is one a student learns to skip)."""
    from services.ask import examprep as ep

    if embed is None:
        from lecturecopilot import models
        from lecturecopilot.settings import Settings

        name = Settings().embed_model
        embed = lambda texts: models.embed(name, texts)  # noqa: E731
    lectures = field_lectures()
    courses: dict[str, list[str]] = {}
    for l in lectures:
        courses.setdefault(l["course"], []).extend(l["sentences"])
    rows, samples = [], []
    for l in lectures:
        sents = timed_sentences(l["sentences"])
        span = (0.0, sents[-1].end_s)
        t0 = time.perf_counter()
        qs = ep.extractive_questions("L", 1, sents, courses[l["course"]], embed=embed)
        kept, dropped = ep.checked(qs, sents, span, embed)
        secs = time.perf_counter() - t0
        moved = [not ep.check(ep.Question(**{**q.__dict__, "answer_index": (q.answer_index + k) % 4}), sents, span,
                              embed).ok for q in kept for k in (1, 2, 3)]
        minutes = span[1] / 60.0
        reasons: dict[str, int] = {}
        for _, r in dropped:
            reasons[r.reason] = reasons.get(r.reason, 0) + 1
        reuse = Counter(o.lower() for q in kept for i, o in enumerate(q.options) if i != q.answer_index)
        rows.append({"field": l["field"], "title": l["title"], "split": l["split"], "minutes": round(minutes, 2),
                     "most_offered_wrong_option": max(reuse.values(), default=0),
                     "needed": math.ceil(minutes / 2), "written": len(qs), "kept": len(kept),
                     "per_2_minutes": round(len(kept) / max(minutes / 2, 1e-9), 2),
                     "dropped_share": round(len(dropped) / max(1, len(qs)), 3), "dropped_reasons": reasons,
                     "moved_answer_rejected": round(sum(moved) / max(1, len(moved)), 3), "seconds": round(secs, 2)})
        samples += [{"field": l["field"], "title": l["title"], "stem": q.stem, "options": q.options,
                     "answer_index": q.answer_index, "chip": f"{q.cite_t_s:.0f} s"} for q in kept[:2]]
    result = {"dataset": "short narrated lectures of other fields (evals/examprep_lectures.json"
                         + (", evals/fields/lectures.json" if NARRATED.exists() else "") + "), 150 words a minute",
              "writer": "extractive (no key)", "lectures": rows,
              "lectures_meeting_rate": sum(r["kept"] >= max(1, r["needed"]) for r in rows),
              "min_per_2_minutes": min(r["per_2_minutes"] for r in rows),
              "dropped_share": sum(r["written"] - r["kept"] for r in rows) / max(1, sum(r["written"] for r in rows)),
              "moved_answer_rejected": min(r["moved_answer_rejected"] for r in rows if r["kept"]),
              "sets_offering_a_wrong_option_over_twice": sum(r["most_offered_wrong_option"] > 2 for r in rows),
              "most_offered_wrong_option_mean": round(statistics.mean(r["most_offered_wrong_option"] for r in rows), 2),
              "samples": samples, "command": "python -m evals.examprep --fields", "machine": "2 cores, no GPU, shared"}
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "examprep-fields.json").write_text(json.dumps(result, indent=2, ensure_ascii=False))
    (out_dir / "examprep-fields.md").write_text(fields_markdown(result))
    return result


def fields_markdown(r: dict) -> str:
    lines = [f"Writer: {r['writer']}; {r['dataset']}; command `{r['command']}`; {r['machine']}.", "",
             "| field | lecture | split | minutes | kept (needed) | per 2 min | dropped by the check | why dropped "
             "| moved answer rejected |", "|---|---|---|---|---|---|---|---|---|"]
    for x in r["lectures"]:
        why = ", ".join(f"{k} {v}" for k, v in sorted(x["dropped_reasons"].items())) or "–"
        lines.append(f"| {x['field']} | {x['title']} | {x['split']} | {x['minutes']:.1f} | {x['kept']} ({x['needed']}) "
                     f"| {x['per_2_minutes']:.2f} | {x['dropped_share']:.2f} | {why} "
                     f"| {x['moved_answer_rejected']:.2f} |")
    lines += ["", f"Lectures with at least one kept question per 2 minutes: {r['lectures_meeting_rate']} of "
                  f"{len(r['lectures'])}; lowest rate {r['min_per_2_minutes']:.2f} per 2 minutes; share dropped by "
                  f"the check {r['dropped_share']:.3f}; moved answers rejected (lowest) "
                  f"{r['moved_answer_rejected']:.3f}. Sets offering one wrong option in more than two questions: "
                  f"{r['sets_offering_a_wrong_option_over_twice']} of {len(r['lectures'])}; the most a wrong option "
                  f"recurs in a set, on average: {r['most_offered_wrong_option_mean']:.2f}.",
              "", "Sample:", ""]
    for i, s in enumerate(r["samples"], 1):
        lines.append(f"{i}. ({s['field']}) {sample_text({**s, 'chip': s['chip']})}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    t0 = time.perf_counter()
    if "--fields" in sys.argv[1:]:
        print(fields_markdown(run_fields()))
    else:
        print(markdown(run()))
    print(f"({time.perf_counter() - t0:.0f} s)")
