"""Answer evaluation on the MIT 6.006 dev set, through the HTTP API (SSE), no cloud model.

    .venv/bin/python -m evals.answers          # -> evals/results/answers-latest.json, answers.md

Four properties measured separately (the Cite-or-Decline paper's lesson), plus placement
and latency:

- course isolation: citations outside the course (must be 0);
- citation validity: every sentence cited, every citation inside a returned source passage;
- support proxy: answered covered questions citing a passage that overlaps the gold span,
  citations landing inside the gold span, and their mean distance to it (seconds, 0 inside);
- refusal: the right call on covered vs not covered;
- outline questions answered from the course outline; follow-ups ("explain that more
  simply", "why?") resolved to the first question's gold span, and citing a passage the first
  answer cited (the rewrite kept the topic, whatever retrieval's accuracy);
- latency through the HTTP API: first cited sentence p50, full answer p95.
"""

from __future__ import annotations

import json
import re
import statistics
import tempfile
import time
from pathlib import Path

import requests

from evals.retrieval import RESULTS, load_dev_set, upload_course

OUTLINE_QUESTIONS = [
    ("How many lectures are there?", None), ("how long is lecture 4?", 4), ("Which lecture covers radix sort?", 5),
    ("which lecture talks about merge sort?", 3), ("What is lecture 4 about?", 4),
]


def ask_sse(base: str, course: str, question: str, conversation_id: str | None = None) -> tuple[dict, float, float]:
    """(final object, ms to the first ``sentence`` event, ms to ``done``) for one question."""
    t0 = time.perf_counter()
    first = None
    done = None
    with requests.post(f"{base}/api/courses/{course}/ask", stream=True, timeout=60,
                       headers={"Accept": "text/event-stream"},
                       json={"question": question, "conversation_id": conversation_id}) as r:
        r.raise_for_status()
        event = None
        for line in r.iter_lines(decode_unicode=True):
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                if event == "sentence" and first is None:
                    first = (time.perf_counter() - t0) * 1000
                if event == "done":
                    done = json.loads(line[5:])
    total = (time.perf_counter() - t0) * 1000
    return done, first if first is not None else total, total


def _cited(ans: dict) -> set[tuple[str, float]]:
    return {(c["lecture_id"], c["t_s"]) for s in ans["sentences"] for c in s["citations"]}


def run(out_dir: Path = RESULTS) -> dict:
    from lecturecopilot_ops.stack import ephemeral

    by_lecture, titles, questions = load_dev_set()
    with tempfile.TemporaryDirectory() as tmp, ephemeral(Path(tmp) / "data") as eph:
        course, ids = upload_course(eph, "MIT 6.006 (answers eval)", by_lecture, titles)
        number_of = {lid: no for no, lid in ids.items()}
        rows = []
        firsts, totals = [], []
        for q in questions:
            ans, first, total = ask_sse(eph.base, course, q["question"])
            firsts.append(first)
            totals.append(total)
            rows.append((q, ans))
        outline_rows = [(q, n, ask_sse(eph.base, course, q)[0]) for q, n in OUTLINE_QUESTIONS]
        covered = [(q, a) for q, a in rows if q["covered"]]
        follow, follow_pairs, repeats = [], [], []
        for q, a in covered[::6]:  # every 6th covered question: two follow-ups each
            prev = a
            for msg in ("explain that more simply", "why?"):
                f, _, _ = ask_sse(eph.base, course, msg, a["conversation_id"])
                follow.append((q, f))
                if not a["declined"]:
                    follow_pairs.append((a, f))
                if not prev["declined"] and not f["declined"]:  # cites a sentence the answer before it cited
                    repeats.append(bool(_cited(prev) & _cited(f)))
                prev = f

    def gold_overlap(q, ans) -> bool:
        return any(number_of.get(s["lecture_id"]) == q["lecture_no"] and s["start_s"] < q["gold_end_s"]
                   and s["end_s"] > q["gold_start_s"] and any(
                       c["lecture_id"] == s["lecture_id"] and s["start_s"] - 0.01 <= c["t_s"] <= s["end_s"] + 0.01
                       for x in ans["sentences"] for c in x["citations"]) for s in ans["sources"])

    def cited_passages(ans) -> list[dict]:
        """The answer's sources that hold one of its citations."""
        return [s for s in ans["sources"] if any(c["lecture_id"] == s["lecture_id"] and s["start_s"] - 0.01 <= c["t_s"]
                                                 <= s["end_s"] + 0.01 for x in ans["sentences"] for c in x["citations"])]

    def same_passage(first, f) -> bool:
        """The follow-up cites a moment inside a passage the first answer cited (the rewrite kept the topic)."""
        return any(c["lecture_id"] == s["lecture_id"] and s["start_s"] - 0.01 <= c["t_s"] <= s["end_s"] + 0.01
                   for s in cited_passages(first) for x in f["sentences"] for c in x["citations"])

    all_cites = [(q, c, a) for q, a in rows for s in a["sentences"] for c in s["citations"]]
    outside = sum(1 for _, c, _ in all_cites if c["lecture_id"] not in number_of)

    def valid(a) -> bool:
        return all(s["citations"] and all(any(src["lecture_id"] == c["lecture_id"] and src["start_s"] - 0.01 <= c["t_s"]
                                              <= src["end_s"] + 0.01 for src in a["sources"]) for c in s["citations"])
                   for s in a["sentences"])

    answered = [(q, a) for q, a in rows if not a["declined"]]
    ans_cov = [(q, a) for q, a in covered if not a["declined"]]
    in_gold, dist = [], []
    for q, a in ans_cov:
        for s in a["sentences"]:
            for c in s["citations"]:
                if number_of.get(c["lecture_id"]) != q["lecture_no"]:
                    dist.append(None)
                    in_gold.append(False)
                    continue
                d = max(0.0, q["gold_start_s"] - c["t_s"], c["t_s"] - q["gold_end_s"])
                in_gold.append(d == 0)
                dist.append(d)
    right = sum(a["declined"] != q["covered"] for q, a in rows)
    result = {
        "dataset": "MIT 6.006 dev (90 questions: 72 covered, 18 not)", "writer": "extractive (no key)",
        "citations_outside_course": outside,
        "answers_with_all_citations_valid": sum(valid(a) for _, a in answered) / max(1, len(answered)),
        "answered_covered_citing_gold_passage": sum(gold_overlap(q, a) for q, a in ans_cov) / max(1, len(ans_cov)),
        "citations_inside_gold_span": sum(in_gold) / max(1, len(in_gold)),
        "mean_distance_to_gold_s": statistics.mean([d for d in dist if d is not None] or [0.0]),
        "first_citation_inside_gold_span": sum(
            max(0.0, q["gold_start_s"] - a["sentences"][0]["citations"][0]["t_s"],
                a["sentences"][0]["citations"][0]["t_s"] - q["gold_end_s"]) == 0
            and number_of.get(a["sentences"][0]["citations"][0]["lecture_id"]) == q["lecture_no"]
            for q, a in ans_cov) / max(1, len(ans_cov)),
        "answers_under_15_words": sum(len(re.findall(r"[A-Za-z0-9]+", a["answer"])) < 15 for _, a in ans_cov)
        / max(1, len(ans_cov)),
        "mean_answer_words": statistics.mean([len(re.findall(r"[A-Za-z0-9]+", a["answer"])) for _, a in ans_cov] or [0]),
        "right_call_covered_vs_not": right / len(rows),
        "covered_declined": sum(a["declined"] for _, a in covered) / len(covered),
        "uncovered_declined": sum(a["declined"] for q, a in rows if not q["covered"]) / max(1, len(rows) - len(covered)),
        "outline_answered": sum((not a["declined"]) and a["writer"] == "outline"
                                and (n is None or f"L{n}" in a["answer"]) for _, n, a in outline_rows) / len(outline_rows),
        "follow_ups_resolved": sum((not f["declined"]) and gold_overlap(q, f) for q, f in follow) / max(1, len(follow)),
        "follow_ups_repeating_the_answer_before": sum(repeats) / max(1, len(repeats)),
        "follow_ups_on_first_answers_passage": sum((not f["declined"]) and same_passage(a, f) for a, f in follow_pairs)
        / max(1, len(follow_pairs)),
        "latency_first_sentence_ms": {"p50": statistics.median(firsts), "p95": sorted(firsts)[int(0.95 * (len(firsts) - 1))]},
        "latency_full_answer_ms": {"p50": statistics.median(totals), "p95": sorted(totals)[int(0.95 * (len(totals) - 1))]},
        "samples": [{"question": q["question"], "answer": a["answer"],
                     "chips": [c["label"] for s in a["sentences"] for c in s["citations"]]} for q, a in rows[:3]],
        "command": "python -m evals.answers", "machine": "2 cores, no GPU",
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "answers-latest.json").write_text(json.dumps(result, indent=2))
    (out_dir / "answers.md").write_text(markdown(result))
    return result


def markdown(r: dict) -> str:
    rows = [
        ("citations outside the course", r["citations_outside_course"], "0"),
        ("answers whose citations all pass the check", r["answers_with_all_citations_valid"], "1.00"),
        ("answered covered questions citing a gold-overlapping passage", r["answered_covered_citing_gold_passage"],
         "0.84–0.90 (anchor), ≥ 0.95 (target)"),
        ("citations inside the gold span", r["citations_inside_gold_span"], "48%→95% / 56%→78% (anchor), ≥ 0.95"),
        ("first citation inside the gold span", r["first_citation_inside_gold_span"], ""),
        ("answered covered questions answered in under 15 words", r["answers_under_15_words"], ""),
        ("words in an answer to a covered question (mean)", r["mean_answer_words"], "about 60 (issue #13)"),
        ("mean distance of a citation to the gold span (s)", r["mean_distance_to_gold_s"], "≤ 2 s (target)"),
        ("right call, covered vs not (90 questions)", r["right_call_covered_vs_not"], "0.97–1.00 (anchor, 30 q), ≥ 0.97"),
        ("covered questions declined", r["covered_declined"], ""),
        ("uncovered questions declined", r["uncovered_declined"], ""),
        ("outline questions answered", r["outline_answered"], ""),
        ("follow-ups resolved to the first question's gold", r["follow_ups_resolved"], ""),
        ("follow-ups citing a passage the first answer cited", r["follow_ups_on_first_answers_passage"], ""),
        ("follow-ups repeating a moment of the answer before them", r["follow_ups_repeating_the_answer_before"], "0"),
        ("first cited sentence, p50 (ms, HTTP SSE)", r["latency_first_sentence_ms"]["p50"], "≤ 300"),
        ("full answer, p95 (ms, HTTP SSE)", r["latency_full_answer_ms"]["p95"], "≤ 1000 (anchor cloud: 1310–4020)"),
    ]
    f = lambda v: f"{v:.3f}" if isinstance(v, float) else str(v)
    lines = [f"Writer: {r['writer']}; {r['dataset']}; command `{r['command']}`; {r['machine']}.", "",
             "| measure | ours | anchor / target |", "|---|---|---|"]
    lines += [f"| {a} | {f(b)} | {c} |" for a, b, c in rows]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    res = run()
    print(markdown(res))
