"""Retrieval evaluation on the MIT 6.006 dev set, scored the way the published systems were.

    .venv/bin/python -m evals.retrieval            # full table -> evals/results/
    .venv/bin/python -m evals.retrieval --quick    # the default configuration only

The course is loaded through the product's own path: each lecture's transcript becomes a
WebVTT file uploaded to ``POST /api/courses/{id}/lectures`` (captions import, no audio), and
the pipeline (transcribe → slides → index over NATS) makes it ready. Questions then run
through the product's own retrieval (``services.ask.retrieve``) in each configuration, and
the default configuration also through ``POST /api/courses/{id}/search`` for latency.

With a cloud model configured (a key in the environment, as for ask: ``GROQ_API_KEY``,
``GEMINI_API_KEY`` or ``LC_OPENAI_BASE_URL``), one more row gives the passages as ask serves them:
the default configuration's top 12 reranked by the model (``services.ask.rerank``), with the step's
outcomes; that run is written to ``retrieval-served-latest.json`` (``retrieval-quick-served-…`` with
``--quick``), never over the keyless files. Without a key the output is as it always was.

Hit rule (Lecture Copilot protocol): a retrieved passage of the gold lecture whose span
overlaps the gold span (``start < gold_end and end > gold_start``); rank = first hit in the
top 6; recall@k over covered questions; MRR with misses scoring 0. P@5, nDCG@5 (binary
relevance, ideal = all gold-overlapping passages), timestamp hit@5 and video hit@5 follow
the Cite-or-Decline paper. Every result passage is a segment of at most 90 s.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data" / "mit6006"
RESULTS = ROOT / "evals" / "results"

ANCHORS = [
    {"name": "Lecture Copilot (ref.), search only, 150 q", "recall@1": 0.692, "recall@3": 0.833, "recall@6": 0.933,
     "mrr": 0.774},
    {"name": "Lecture Copilot (ref.), + cloud LLM reranker", "recall@1": 0.800, "recall@3": 0.892, "recall@6": 0.950,
     "mrr": 0.854},
    {"name": "Cite-or-Decline (EduVidQA, not same data), full", "ts_hit@5": 0.457, "video_hit@5": 0.747,
     "p@5": 0.129, "mrr": 0.293, "ndcg@5": 0.330},
    {"name": "Cite-or-Decline (EduVidQA, not same data), dense only", "ts_hit@5": 0.402, "video_hit@5": 0.684,
     "p@5": 0.103, "mrr": 0.250, "ndcg@5": 0.283},
]


def _clock(t: float) -> str:
    """A WebVTT timestamp ``HH:MM:SS.mmm`` for ``t`` seconds, rounded to the millisecond."""
    ms = round(t * 1000)
    h, ms = divmod(ms, 3_600_000)
    m, ms = divmod(ms, 60_000)
    s, ms = divmod(ms, 1000)
    return f"{h:02d}:{m:02d}:{s:02d}.{ms:03d}"


def load_dev_set() -> tuple[dict[int, list[dict]], dict[int, str], list[dict]]:
    """(segments by lecture number, lecture titles by number, questions) of the MIT 6.006 dev set."""
    by_lecture: dict[int, list[dict]] = {}
    for s in load_jsonl(DATA / "segments.jsonl"):
        by_lecture.setdefault(s["lecture_no"], []).append(s)
    titles = {l["lecture_no"]: l["lecture_title"] for l in load_jsonl(DATA / "lectures.jsonl")}
    return by_lecture, titles, load_jsonl(DATA / "questions_dev.jsonl")


def lecture_vtt(segments: list[dict]) -> str:
    """WebVTT of one lecture: one cue per transcript segment (times in seconds)."""
    out = ["WEBVTT", ""]
    for s in segments:
        a, b = s["start_s"], s["end_s"]
        out += [f"{_clock(a)} --> {_clock(b)}", s["text"].strip(), ""]
    return "\n".join(out)


def load_jsonl(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def upload_course(eph, title: str, by_lecture: dict[int, list[dict]], titles: dict[int, str]) -> tuple[str, dict]:
    """Creates a course and uploads each lecture's captions through the public API; waits for ready.

    Returns (course_id, {lecture_no: lecture_id})."""
    course = eph.create_course(title)
    ids = {}
    for no, segs in sorted(by_lecture.items()):
        r = requests.post(f"{eph.base}/api/courses/{course}/lectures", headers=eph.admin,
                          files={"captions": (f"lecture{no}.vtt", lecture_vtt(segs).encode(), "text/vtt")},
                          data={"title": titles[no], "number": str(no)}, timeout=60)
        r.raise_for_status()
        ids[no] = r.json()["lecture_id"]
    for lid in ids.values():
        st = eph.wait_ready(lid, timeout_s=1800)
        if st["status"] != "ready":
            raise RuntimeError(f"lecture {lid} failed: {st['error']}")
    return course, ids


def distractor_lectures(by_lecture: dict[int, list[dict]], seed: int = 7) -> dict[int, list[dict]]:
    """Another course made of the same lectures' text, segments shuffled and re-timed: what
    "isolation off" is up against when several courses share one index."""
    rnd = random.Random(seed)
    out = {}
    for no, segs in by_lecture.items():
        texts = [s["text"] for s in segs]
        rnd.shuffle(texts)
        t, rows = 0.0, []
        for text in texts:
            d = 45 + rnd.random() * 30
            rows.append({"start_s": t, "end_s": t + d, "text": text})
            t += d
        out[no] = rows
    return out


@dataclass
class Scores:
    n_covered: int
    recall_1: float
    recall_3: float
    recall_6: float
    mrr: float
    p_5: float
    ndcg_5: float
    ts_hit_5: float
    video_hit_5: float
    other_course_results: int
    max_passage_s: float


def score(results: list[list], questions: list[dict], lecture_of: dict[str, int], relevant_count: list[int],
          main_lectures: set[str]) -> Scores:
    """Metrics over covered questions; ``results[i]`` are passages for ``questions[i]``."""
    r1 = r3 = r6 = rr = p5 = nd = ts = vh = 0.0
    n = 0
    other = 0
    longest = 0.0
    for q, res, n_rel in zip(questions, results, relevant_count):
        other += sum(1 for p in res if p.hit.lecture_id not in main_lectures)
        longest = max([longest] + [p.hit.end_s - p.hit.start_s for p in res])
        if not q["covered"]:
            continue
        n += 1
        hits = [p.hit.lecture_id in main_lectures and lecture_of.get(p.hit.lecture_id) == q["lecture_no"]
                and p.hit.start_s < q["gold_end_s"] and p.hit.end_s > q["gold_start_s"] for p in res[:6]]
        rank = next((i + 1 for i, h in enumerate(hits) if h), None)
        if rank:
            r1 += rank <= 1
            r3 += rank <= 3
            r6 += rank <= 6
            rr += 1.0 / rank
        top5 = hits[:5]
        p5 += sum(top5) / 5
        dcg = sum(1 / math.log2(i + 2) for i, h in enumerate(top5) if h)
        ideal = sum(1 / math.log2(i + 2) for i in range(min(5, max(1, n_rel))))
        nd += dcg / ideal
        ts += any(top5)
        vh += any(p.hit.lecture_id in main_lectures and lecture_of.get(p.hit.lecture_id) == q["lecture_no"]
                  for p in res[:5])
    return Scores(n, r1 / n, r3 / n, r6 / n, rr / n, p5 / n, nd / n, ts / n, vh / n, other, longest)


def configurations():
    """The ablations, in the order of the table; "default" is ``RetrievalConfig()`` (weighted score
    fusion of dense, BM25, sentence windows and character n-grams, chosen by ``python -m evals.cv``)."""
    from services.ask.retrieve import RetrievalConfig

    base = RetrievalConfig()
    seg = ("dense", "bm25")
    rrf_before = {"dense": 1.0, "bm25": 1.5, "dense_sent": 1.0}
    return [
        ("dense only (segments)", replace(base, lists=("dense",))),
        ("+ BM25 (RRF)", replace(base, lists=seg, fusion="rrf")),
        ("+ BM25 (weighted score fusion)", replace(base, lists=seg)),
        ("+ sentence windows (RRF) = the default before", replace(base, lists=seg + ("dense_sent",), fusion="rrf",
                                                                  weights=rrf_before)),
        ("+ sentence windows (weighted)", replace(base, lists=seg + ("dense_sent",))),
        ("+ character n-grams (weighted) = default", base),
        ("+ character n-grams (RRF)", replace(base, fusion="rrf")),
        ("+ sub-chunks ~20 s", replace(base, lists=base.lists + ("dense_sub",))),
        ("+ sub-chunks + sub-chunk BM25", replace(base, lists=base.lists + ("dense_sub", "bm25_sub"))),
        ("+ chapter-summary prior (weight 0.4)", replace(base, lists=base.lists + ("chapter",))),
        ("rerank: sentence windows over top 12", replace(base, rerank=True)),
        ("+ BM25 pseudo-relevance feedback (3 docs, 5 terms)", replace(base, prf_docs=3, prf_terms=5, prf_weight=0.2)),
        ("+ passages re-centred on the best sentence window", replace(base, center=True, center_target_s=75.0)),
    ]


def served_row(reranker, index, course: str, questions: list[dict], searched: list[str], qvecs, truth: tuple) -> dict:
    """The row of the passages as ask serves them with a cloud model configured: the default
    configuration's top 12, reranked by ``reranker`` (:func:`services.ask.rerank.reranked`, within its
    cap; the search order where it fails), given the question as ask gives it (spelling corrected, its
    framing kept). ``truth``: ``(lecture_of, relevant_count, main_lectures)`` for :func:`score`. The row
    counts the step's outcomes; its times are search and rerank together (milliseconds)."""
    from services.ask import rerank
    from services.ask.answer import corrected
    from services.ask.retrieve import retrieve

    times, results, outcomes = [], [], {}
    for q, sq, v in zip(questions, searched, qvecs):
        t = time.perf_counter()
        passages = retrieve(index, course, None, v, sq, k=rerank.CANDIDATES)
        order, outcome = reranker.order(corrected(index, course, q["question"]), passages)
        results.append(rerank.kept(passages, order))
        times.append((time.perf_counter() - t) * 1000)
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    sc = score(results, questions, *truth)
    print(f"{'as served: + cloud rerank':<40} r@1 {sc.recall_1:.3f} r@3 {sc.recall_3:.3f} r@6 {sc.recall_6:.3f} "
          f"MRR {sc.mrr:.3f} outcomes {outcomes}", file=sys.stderr)
    return {"name": f"as served: default + cloud rerank of the top 12 ({reranker.writer.name} {reranker.model})",
            **asdict(sc), "p50_ms": statistics.median(times), "p95_ms": sorted(times)[int(0.95 * (len(times) - 1))],
            "config": f"rerank:{reranker.writer.name}:{reranker.model}", "rerank_outcomes": outcomes}


def run(quick: bool = False, out_dir: Path = RESULTS, eph=None, served: bool = False) -> dict:
    """Runs the evaluation (see module docstring); returns the result dict and writes files.

    ``eph``: an already running ``lecturecopilot_ops.stack.Ephemeral`` to use (tests pass theirs);
    by default a throw-away stack is started for the run. ``served``: add the as-served (reranked)
    row when a cloud model is configured (the command does; a caller that only wants the keyless
    figures, as the tests do with their fake model's key in the environment, leaves it off)."""
    from lecturecopilot import db, models
    from lecturecopilot.settings import Settings
    from lecturecopilot_ops.stack import ephemeral
    from services.ask import gate
    from services.ask.answer import search_query
    from services.ask.rerank import configured_reranker
    from services.ask.retrieve import retrieve
    from services.ask.search_index import ALL_COURSES, EmbeddedSearchIndex

    by_lecture, titles, questions = load_dev_set()

    from contextlib import nullcontext

    with tempfile.TemporaryDirectory() as tmp, (nullcontext(eph) if eph else ephemeral(Path(tmp) / "data")) as eph:
        t0 = time.time()
        course, ids = upload_course(eph, "MIT 6.006 Introduction to Algorithms (eval)", by_lecture, titles)
        other_course = None
        if not quick:  # only the isolation-off row needs a second course
            other_course, _ = upload_course(eph, "Shuffled copy (distractor course)",
                                            distractor_lectures(by_lecture), titles)
        ingest_s = time.time() - t0
        lecture_of = {lid: no for no, lid in ids.items()}
        main = set(ids.values())
        settings = Settings()
        pool = db.make_pool(settings, max_size=2)
        index = EmbeddedSearchIndex(Path(tmp) / "qdrant-eval", pool, profile=settings.search_profile)
        index.sync_course(course)
        if other_course:
            index.sync_course(other_course)
        # searched as ask and the search endpoint search: spelling, then no request framing
        searched = [search_query(index, course, q["question"]) for q in questions]
        qvecs = models.embed(settings.embed_model, searched)
        # relevant passages per question (for nDCG's ideal): segments of the gold lecture overlapping gold
        with pool.connection() as conn:
            seg_rows = conn.execute("SELECT lecture_id::text AS l, start_s, end_s FROM segments").fetchall()
        n_rel = [sum(1 for r in seg_rows if lecture_of.get(r["l"]) == q.get("lecture_no")
                     and r["start_s"] < (q.get("gold_end_s") or -1) and r["end_s"] > (q.get("gold_start_s") or 1e9))
                 for q in questions]

        from services.ask.retrieve import RetrievalConfig

        rows = []
        configs = configurations()
        if quick:
            configs = [c for c in configs if c[1] == RetrievalConfig()]
        for name, cfg in configs:
            times, results = [], []
            for sq, v in zip(searched, qvecs):
                t = time.perf_counter()
                results.append(retrieve(index, course, None, v, sq, k=6, config=cfg))
                times.append((time.perf_counter() - t) * 1000)
            sc = score(results, questions, lecture_of, n_rel, main)
            cos = [gate.evidence(index, course, r, q["question"], v, settings.gate_coverage_weight).score
                   for r, q, v in zip(results, questions, qvecs)]
            rows.append({"name": name, **asdict(sc), "p50_ms": statistics.median(times),
                         "p95_ms": sorted(times)[int(0.95 * (len(times) - 1))], "config": repr(cfg),
                         "_evidence": cos})
            print(f"{name:<40} r@1 {sc.recall_1:.3f} r@3 {sc.recall_3:.3f} r@6 {sc.recall_6:.3f} "
                  f"MRR {sc.mrr:.3f} nDCG@5 {sc.ndcg_5:.3f}", file=sys.stderr)
        reranker = configured_reranker(settings) if served else None
        if reranker is not None:  # a cloud model configured (a key in the environment): the order ask serves
            rows.append(served_row(reranker, index, course, questions, searched, qvecs, (lecture_of, n_rel, main)))
            reranker.close()
        if not quick:
            results = [retrieve(index, ALL_COURSES, None, v, sq, k=6, config=RetrievalConfig())
                       for sq, v in zip(searched, qvecs)]
            sc = score(results, questions, lecture_of, n_rel, main)
            rows.append({"name": "default, course isolation OFF (2 courses in one pool)", **asdict(sc),
                         "p50_ms": None, "p95_ms": None, "config": "ALL_COURSES"})

        # the gate at the operating threshold, on the default configuration
        default = next(r for r in rows if r["config"] == repr(RetrievalConfig()))
        ev = default.pop("_evidence")
        for r in rows:
            r.pop("_evidence", None)
        thr = settings.gate_threshold
        unc = [e for e, q in zip(ev, questions) if not q["covered"]]
        cov = [e for e, q in zip(ev, questions) if q["covered"]]
        decisions = {
            "threshold": thr,
            "uncovered_declined": sum(e < thr for e in unc) / len(unc),
            "covered_wrongly_declined": sum(e < thr for e in cov) / len(cov),
            "right_call": (sum(e < thr for e in unc) + sum(e >= thr for e in cov)) / len(questions),
            "uncovered_max_score": max(unc),
            "covered_min_score": min(cov),
            "covered_below_threshold": sorted(e for e in cov if e < thr),
        }
        # latency through the HTTP API (default configuration)
        http = []
        for q in questions:
            t = time.perf_counter()
            r = requests.post(f"{eph.base}/api/courses/{course}/search", json={"query": q["question"], "k": 6},
                              timeout=30)
            r.raise_for_status()
            http.append((time.perf_counter() - t) * 1000)
        index.close()
        pool.close()

    result = {
        "dataset": "MIT 6.006 dev (90 questions: 72 covered, 18 not)", "questions": len(questions),
        "ingest_s": round(ingest_s, 1), "rows": rows, "decisions": decisions,
        "http_search_ms": {"p50": statistics.median(http), "p95": sorted(http)[int(0.95 * (len(http) - 1))]},
        "anchors": ANCHORS, "command": "python -m evals.retrieval" + (" --quick" if quick else ""),
        "machine": "2 cores, no GPU", "search_profile": settings.search_profile,
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    name = "retrieval-quick" if quick else "retrieval"  # one current file per command (git keeps the earlier ones)
    if settings.search_profile != "ram":  # another profile's run is kept beside the default's, not over it
        name = f"{name}-{settings.search_profile}"
    if reranker is not None:  # with a key: kept beside the published (keyless) figures, never over them
        name = f"{name}-served"
    (out_dir / f"{name}-latest.json").write_text(json.dumps(result, indent=2))
    if not quick and settings.search_profile == "ram" and reranker is None:
        (out_dir / "retrieval.md").write_text(markdown(result))
    return result


def markdown(result: dict) -> str:
    """The table: ours (each configuration) beside the anchors, then the gate and latency."""
    f = lambda v: "" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v))
    lines = [f"Dev set: {result['dataset']}; command `{result['command']}`; {result['machine']}.", "",
             "| system | r@1 | r@3 | r@6 | MRR | nDCG@5 | P@5 | ts hit@5 | video hit@5 | other-course results | p50 ms | p95 ms |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in result["rows"]:
        lines.append(f"| {r['name']} | {f(r['recall_1'])} | {f(r['recall_3'])} | {f(r['recall_6'])} | {f(r['mrr'])} | "
                     f"{f(r['ndcg_5'])} | {f(r['p_5'])} | {f(r['ts_hit_5'])} | {f(r['video_hit_5'])} | "
                     f"{r['other_course_results']} | {f(r['p50_ms'])} | {f(r['p95_ms'])} |")
    for a in result["anchors"]:
        lines.append(f"| *{a['name']}* | {f(a.get('recall@1'))} | {f(a.get('recall@3'))} | {f(a.get('recall@6'))} | "
                     f"{f(a.get('mrr'))} | {f(a.get('ndcg@5'))} | {f(a.get('p@5'))} | {f(a.get('ts_hit@5'))} | "
                     f"{f(a.get('video_hit@5'))} | | | |")
    d = result["decisions"]
    lines += ["", f"Gate (window cosine + 0.5 × course coverage ≥ {d['threshold']}, default configuration): uncovered declined {d['uncovered_declined']:.3f}, "
                  f"covered wrongly declined {d['covered_wrongly_declined']:.3f}, right call {d['right_call']:.3f}.",
              f"Search through the HTTP API (default configuration, 90 queries): p50 "
              f"{result['http_search_ms']['p50']:.1f} ms, p95 {result['http_search_ms']['p95']:.1f} ms. "
              f"Loading the course through the captions path took {result['ingest_s']} s.", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="only the default configuration")
    args = parser.parse_args()
    result = run(quick=args.quick, served=True)
    if not args.quick:
        print(markdown(result))
    else:
        print(json.dumps({k: v for k, v in result["rows"][0].items() if k != "config"}, indent=2))


if __name__ == "__main__":
    main()
