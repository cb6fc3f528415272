"""The search index on a Qdrant server through qdrant-client (``QDRANT_URL``) ranks like the
embedded shard: the MIT 6.006 dev set through the product's retrieval on both backends, plus a
second course that must never appear. qdrant-client's local mode stands in for the server here
(no Qdrant server binary can be installed offline); the code path is the same client API."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def _recall_at(results, questions, lecture_of, k):
    covered = [(r, q) for r, q in zip(results, questions) if q["covered"]]
    hits = sum(any(lecture_of.get(p.hit.lecture_id) == q["lecture_no"] and p.hit.start_s < q["gold_end_s"]
                   and p.hit.end_s > q["gold_start_s"] for p in r[:k]) for r, q in covered)
    return hits / len(covered)


def test_server_backend_ranks_like_the_embedded_shard_and_keeps_courses_apart(stack, tmp_path):
    from qdrant_client import QdrantClient

    from evals.retrieval import distractor_lectures, load_dev_set, upload_course
    from lecturecopilot import db, models
    from services.ask.retrieve import retrieve
    from services.ask.search_index import EmbeddedSearchIndex, QdrantServerBackend

    by_lecture, titles, questions = load_dev_set()
    course, ids = upload_course(stack, "MIT 6.006 (server backend)", by_lecture, titles)
    other, other_ids = upload_course(stack, "Distractor (server backend)", distractor_lectures(by_lecture), titles)
    lecture_of = {lid: no for no, lid in ids.items()}
    pool = db.make_pool(stack.settings, max_size=2)
    edge = EmbeddedSearchIndex(tmp_path / "edge", pool)
    server = EmbeddedSearchIndex(Path("unused"), pool,
                                 server=QdrantServerBackend(QdrantClient(location=":memory:"), "lc_test"))
    try:
        for index in (edge, server):
            index.sync_course(course)
            index.sync_course(other)
        qvecs = models.embed(stack.settings.embed_model, [q["question"] for q in questions])
        got = {name: [retrieve(ix, course, None, v, q["question"], k=6) for q, v in zip(questions, qvecs)]
               for name, ix in (("edge", edge), ("server", server))}
    finally:
        edge.close()
        server.close()
        pool.close()
    outsiders = set(other_ids.values())
    assert not any(p.hit.lecture_id in outsiders for r in got["server"] for p in r)  # course isolation holds
    assert all(len(r) == 6 for r in got["server"])
    r3 = {name: _recall_at(res, questions, lecture_of, 3) for name, res in got.items()}
    top1_same = sum(a[0].hit.point_id == b[0].hit.point_id for a, b in zip(got["edge"], got["server"]))
    print(f"recall@3 {r3}, top-1 the same for {top1_same}/{len(questions)}")
    assert r3["server"] >= r3["edge"] - 0.05, r3
    assert top1_same / len(questions) >= 0.8, top1_same
