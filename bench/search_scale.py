"""Query latency and memory of the embedded search index (qdrant-edge) as it grows.

    .venv/bin/python -m bench.search_scale --points 1000 10000 100000 [1000000]

Synthetic courses from real lecture text: the 147 MIT 6.006 segments are embedded once with
the product's model; each synthetic point takes a real segment's sentences shuffled (new
text, new BM25 vector), a re-timed span, and the real embedding plus small Gaussian noise
(σ = 0.02 per dimension, re-normalised), so no two points are equal. Courses hold 500
points each. Each query is the product's hybrid request: dense (cosine) and sparse (BM25 with
IDF over the course) in one batch, hard-filtered to one random course, k = 30 each; the
query text and vector come from the dev questions. Reports p50/p95 over 200 queries, the
build time and the process's peak RSS; appends to bench/results/search_scale.json.
"""

from __future__ import annotations

import argparse
import json
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

ROOT = Path(__file__).resolve().parent.parent
COURSE_SIZE = 500


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def build(path: Path, n_points: int, seg_texts: list[str], seg_vecs: np.ndarray, seed: int = 1):
    rnd = random.Random(seed)
    rng = np.random.default_rng(seed)
    cfg = q.EdgeConfig(vectors={"dense": q.EdgeVectorParams(size=seg_vecs.shape[1], distance=q.Distance.Cosine)},
                       sparse_vectors={"bm25": q.EdgeSparseVectorParams(modifier=q.Modifier.Idf)})
    shard = q.EdgeShard.create(str(path), cfg)
    shard.update(q.UpdateOperation.create_field_index("course_id", q.PayloadSchemaType.Keyword))
    shard.update(q.UpdateOperation.create_field_index("kind", q.PayloadSchemaType.Keyword))
    bm25 = q.Bm25(q.Bm25Config(language="english"))
    n_courses = max(1, n_points // COURSE_SIZE)
    courses = [str(uuid.UUID(int=i + 1)) for i in range(n_courses)]
    batch = []
    for i in range(n_points):
        j = rnd.randrange(len(seg_texts))
        sentences = seg_texts[j].split(". ")
        rnd.shuffle(sentences)
        text = ". ".join(sentences)
        v = seg_vecs[j] + rng.normal(0, 0.02, seg_vecs.shape[1]).astype("float32")
        v /= np.linalg.norm(v)
        start = rnd.random() * 3000
        batch.append(q.Point(str(uuid.UUID(int=10**9 + i)), {"dense": v.tolist(), "bm25": bm25.embed_document(text)},
                             {"course_id": courses[i % n_courses], "kind": "segment", "start_s": start,
                              "end_s": start + 60, "text": text}))
        if len(batch) == 2000:
            shard.update(q.UpdateOperation.upsert_points(batch))
            batch = []
    if batch:
        shard.update(q.UpdateOperation.upsert_points(batch))
    shard.optimize()
    return shard, courses, bm25


def measure(shard, courses, bm25, questions: list[str], qvecs: np.ndarray, n_queries: int = 200) -> list[float]:
    rnd = random.Random(3)
    times = []
    for i in range(n_queries):
        k = rnd.randrange(len(questions))
        c = rnd.choice(courses)
        f = q.Filter(must=[q.FieldCondition(key="course_id", match=q.MatchValue(c)),
                           q.FieldCondition(key="kind", match=q.MatchValue("segment"))])
        req = q.QueryBatchRequest([
            q.QueryRequest(limit=30, query=q.Query.Nearest(qvecs[k].tolist(), using="dense"), filter=f,
                           with_payload=True),
            q.QueryRequest(limit=30, query=q.Query.Nearest(bm25.embed_query(questions[k]), using="bm25"), filter=f,
                           params=q.SearchParams(idf=q.IdfParams(corpus=f)), with_payload=True),
        ])
        t = time.perf_counter()
        shard.query_batch(req)
        times.append((time.perf_counter() - t) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--points", type=int, nargs="+", default=[1000, 10000, 100000])
    args = parser.parse_args()
    from lecturecopilot import models
    from lecturecopilot.settings import Settings

    rows = [json.loads(x) for x in (ROOT / "data/mit6006/segments.jsonl").read_text().splitlines() if x.strip()]
    questions = [json.loads(x)["question"] for x in (ROOT / "data/mit6006/questions_dev.jsonl").read_text().splitlines()
                 if x.strip()]
    name = Settings().embed_model
    seg_vecs = models.embed(name, [r["text"] for r in rows])
    qvecs = models.embed(name, questions)
    out_file = ROOT / "bench" / "results" / "search_scale.json"
    results = json.loads(out_file.read_text()) if out_file.exists() else []
    for n in args.points:
        tmp = Path(tempfile.mkdtemp(prefix="lc-scale-"))
        try:
            t0 = time.time()
            shard, courses, bm25 = build(tmp / "shard", n, [r["text"] for r in rows], seg_vecs)
            build_s = time.time() - t0
            times = measure(shard, courses, bm25, questions, qvecs)
            disk_mb = sum(f.stat().st_size for f in tmp.rglob("*") if f.is_file()) / 2**20
            row = {"points": n, "courses": len(courses), "build_s": round(build_s, 1),
                   "p50_ms": round(statistics.median(times), 2), "p95_ms": round(sorted(times)[int(0.95 * 199)], 2),
                   "peak_rss_mb": round(_rss_mb()), "disk_mb": round(disk_mb),
                   "date": time.strftime("%Y-%m-%d"), "machine": "2 cores, no GPU",
                   "command": f"python -m bench.search_scale --points {n}"}
            print(json.dumps(row), flush=True)
            results = [r for r in results if r["points"] != n] + [row]
            shard.close()
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    out_file.write_text(json.dumps(sorted(results, key=lambda r: r["points"]), indent=2))


if __name__ == "__main__":
    main()
