"""Query latency, memory and recall of the embedded search index (qdrant-edge) as it grows.

    .venv/bin/python -m bench.search_scale --points 1000 10000 100000 1000000 [--profile disk|ram]

Synthetic courses from real lecture text: the 147 MIT 6.006 segments are embedded once with
the product's model; each synthetic point takes a real segment's sentences shuffled (new
text, new BM25 vector), a re-timed span, and the real embedding plus small Gaussian noise
(σ = 0.02 per dimension, re-normalised), so no two points are equal. Courses hold 500
points each. The shard is the product's (:func:`services.ask.shard_config.create_shard`,
``--profile`` as ``LC_SEARCH_PROFILE``).

The shard is built in this process, flushed and closed; then a fresh process — an ask replica
restarting on a current shard, without the embedding model — loads it (``load_s``) and runs the
product's hybrid request 200 times: dense (cosine, with the profile's rescoring parameters) and
sparse (BM25, IDF over the course) in one batch, hard-filtered to one random course, k = 30 each;
query text and vector come from the dev questions. Reported: p50/p95 latency, that process's peak
RSS (``replica_rss_mb``, VmHWM, which counts the memory-mapped pages queries touched), the
builder's peak RSS (``build_rss_mb``, with the embedding model; it counts the page cache of the
segment files being written) and peak anonymous RSS (``build_anon_mb``), build time, disk, and the dense
list's recall@30 against an exact float32 search of the same course (``dense_recall_30``, the
quantization's cost). Appends to bench/results/search_scale.json (one row per points × profile).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import random
import resource
import shutil
import statistics
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np
import qdrant_edge as q

from services.ask.shard_config import PROFILES, create_shard, dense_params

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "results" / "search_scale.json"
COURSE_SIZE = 500
BATCH = 5000  # points per upsert


def _rss_mb() -> float:
    """This process's peak resident memory in MB (ru_maxrss; on Linux it carries over an exec)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _status_mb(key: str) -> float:
    """A memory line of /proc/self/status in MB: VmHWM (peak resident, anonymous and mapped-file
    pages) or RssAnon (resident now, anonymous only: what the kernel cannot drop under pressure)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024
    return _rss_mb()


def _hwm_mb() -> float:
    return _status_mb("VmHWM")


def courses_of(n_points: int) -> list[str]:
    """The course ids of a ``n_points`` shard (``COURSE_SIZE`` points each, point i in course i mod n)."""
    return [str(uuid.UUID(int=i + 1)) for i in range(max(1, n_points // COURSE_SIZE))]


def build(path: Path, n_points: int, seg_texts: list[str], seg_vecs: np.ndarray, profile: str = "ram",
          seed: int = 1) -> tuple[q.EdgeShard, int]:
    """A shard of ``n_points`` synthetic points (see the module docstring) at ``path``, optimized,
    and the builder's peak anonymous resident memory in MB (sampled after each batch and at the end)."""
    rnd = random.Random(seed)
    rng = np.random.default_rng(seed)
    shard = create_shard(str(path), seg_vecs.shape[1], profile, keyword_fields=("course_id", "kind"))
    bm25 = q.Bm25(q.Bm25Config(language="english"))
    courses = courses_of(n_points)
    anon = 0.0
    for lo in range(0, n_points, BATCH):
        hi = min(n_points, lo + BATCH)
        picks = [rnd.randrange(len(seg_texts)) for _ in range(lo, hi)]
        vecs = seg_vecs[picks] + rng.normal(0, 0.02, (hi - lo, seg_vecs.shape[1])).astype("float32")
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        batch = []
        for i, j, v in zip(range(lo, hi), picks, vecs):
            sentences = seg_texts[j].split(". ")
            rnd.shuffle(sentences)
            text = ". ".join(sentences)
            start = rnd.random() * 3000
            batch.append(q.Point(str(uuid.UUID(int=10**9 + i)), {"dense": v.tolist(), "bm25": bm25.embed_document(text)},
                                 {"course_id": courses[i % len(courses)], "kind": "segment", "start_s": start,
                                  "end_s": start + 60, "text": text}))
        shard.update(q.UpdateOperation.upsert_points(batch))
        anon = max(anon, _status_mb("RssAnon"))
    shard.optimize()
    return shard, round(max(anon, _status_mb("RssAnon")))


def _course(course: str) -> q.Filter:
    return q.Filter(must=[q.FieldCondition(key="course_id", match=q.MatchValue(course)),
                          q.FieldCondition(key="kind", match=q.MatchValue("segment"))])


def _requests(course: str, question: str, qvec: list[float], bm25, profile: str) -> q.QueryBatchRequest:
    f = _course(course)
    return q.QueryBatchRequest([
        q.QueryRequest(limit=30, query=q.Query.Nearest(qvec, using="dense"), filter=f, params=dense_params(profile),
                       with_payload=True),
        q.QueryRequest(limit=30, query=q.Query.Nearest(bm25.embed_query(question), using="bm25"), filter=f,
                       params=q.SearchParams(idf=q.IdfParams(corpus=f)), with_payload=True),
    ])


def serve(path: str, n_points: int, profile: str, questions: list[str], qvecs: list[list[float]],
          n_queries: int = 200) -> dict:
    """Runs in a fresh process: loads the shard at ``path`` and measures queries (see the module
    docstring). Returns load_s, p50_ms, p95_ms, dense_recall_30 and replica_rss_mb."""
    t0 = time.time()
    shard = q.EdgeShard.load(path)
    load_s = time.time() - t0
    bm25 = q.Bm25(q.Bm25Config(language="english"))
    courses = courses_of(n_points)
    rnd = random.Random(3)
    times, recalls = [], []
    for i in range(n_queries):
        k, c = rnd.randrange(len(questions)), rnd.choice(courses)
        req = _requests(c, questions[k], qvecs[k], bm25, profile)
        t = time.perf_counter()
        dense, _ = shard.query_batch(req)
        times.append((time.perf_counter() - t) * 1000)
        if i % 4 == 0:  # ground truth: exact float32 cosine over the same course
            exact = shard.query(q.QueryRequest(
                limit=30, query=q.Query.Nearest(qvecs[k], using="dense"), filter=_course(c),
                params=q.SearchParams(exact=True, quantization=q.QuantizationSearchParams(ignore=True))))
            want = {str(p.id) for p in exact}
            recalls.append(len(want & {str(p.id) for p in dense}) / max(1, len(want)))
    shard.close()
    times.sort()
    return {"load_s": round(load_s, 2), "p50_ms": round(statistics.median(times), 2),
            "p95_ms": round(times[int(0.95 * (len(times) - 1))], 2),
            "dense_recall_30": round(statistics.mean(recalls), 4), "replica_rss_mb": round(_hwm_mb())}


def _serve_child(conn, *args) -> None:
    conn.send(serve(*args))
    conn.close()


def run_one(n: int, profile: str, rows: list[dict], seg_vecs: np.ndarray, questions: list[str],
            qvecs: np.ndarray) -> dict:
    """One row: build ``n`` points under ``profile`` in a temporary directory, then serve it from a
    fresh process; the directory is removed afterwards."""
    tmp = Path(tempfile.mkdtemp(prefix="lc-scale-"))
    try:
        t0 = time.time()
        shard, build_anon_mb = build(tmp / "shard", n, [r["text"] for r in rows], seg_vecs, profile)
        build_s = time.time() - t0
        shard.flush()
        shard.close()
        disk_mb = sum(f.stat().st_size for f in tmp.rglob("*") if f.is_file()) / 2**20
        ctx = mp.get_context("spawn")
        parent, child = ctx.Pipe()
        p = ctx.Process(target=_serve_child, args=(child, str(tmp / "shard"), n, profile, questions,
                                                   qvecs.tolist()))
        p.start()
        served = parent.recv()
        p.join()
        return {"points": n, "profile": profile, "courses": len(courses_of(n)), "build_s": round(build_s, 1),
                **served, "build_rss_mb": round(_rss_mb()), "build_anon_mb": build_anon_mb, "disk_mb": round(disk_mb),
                "date": time.strftime("%Y-%m-%d"), "machine": "2 cores shared, no GPU",
                "command": f"python -m bench.search_scale --points {n} --profile {profile}"}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--points", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--profile", choices=PROFILES, default="disk")
    args = parser.parse_args()
    from lecturecopilot import models
    from lecturecopilot.settings import Settings

    rows = [json.loads(x) for x in (ROOT / "data/mit6006/segments.jsonl").read_text().splitlines() if x.strip()]
    questions = [json.loads(x)["question"] for x in (ROOT / "data/mit6006/questions_dev.jsonl").read_text().splitlines()
                 if x.strip()]
    name = Settings().embed_model
    seg_vecs = models.embed(name, [r["text"] for r in rows])
    qvecs = models.embed(name, questions)
    results = json.loads(OUT.read_text()) if OUT.exists() else []
    for n in args.points:
        row = run_one(n, args.profile, rows, seg_vecs, questions, qvecs)
        print(json.dumps(row), flush=True)
        results = [r for r in results if (r["points"], r.get("profile", "ram")) != (n, args.profile)] + [row]
        OUT.write_text(json.dumps(sorted(results, key=lambda r: (r.get("profile", "ram"), r["points"])), indent=2))


if __name__ == "__main__":
    main()
