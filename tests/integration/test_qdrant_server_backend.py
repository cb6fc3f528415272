"""The search index on a Qdrant server through qdrant-client (``QDRANT_URL``): the index service
writes the points (services/index/points.py over lecturecopilot.points), ask only reads them and
ranks like the embedded shard: the MIT 6.006 dev set through the product's retrieval on both
backends, plus a second course that must never appear; deleting that course (ingest) removes its
points. qdrant-client's local mode stands in for the server here (no Qdrant server binary can be
installed offline); the code path is the same client API."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def _recall_at(results, questions, lecture_of, k):
    covered = [(r, q) for r, q in zip(results, questions) if q["covered"]]
    hits = sum(any(lecture_of.get(p.hit.lecture_id) == q["lecture_no"] and p.hit.start_s < q["gold_end_s"]
                   and p.hit.end_s > q["gold_start_s"] for p in r[:k]) for r, q in covered)
    return hits / len(covered)


def _count(client, collection, **match) -> int:
    from qdrant_client import models as m

    flt = m.Filter(must=[m.FieldCondition(key=k, match=m.MatchValue(value=v)) for k, v in match.items()])
    return client.count(collection, count_filter=flt, exact=True).count


def _db_points(pool, lecture_ids) -> int:
    with pool.connection() as conn:
        return sum(conn.execute("SELECT (SELECT count(*) FROM segments WHERE lecture_id=%s) + "
                                "(SELECT count(*) FROM subchunks WHERE lecture_id=%s) AS n", (lid, lid)).fetchone()["n"]
                   for lid in lecture_ids)


def test_server_backend_ranks_like_the_embedded_shard_and_keeps_courses_apart(stack, tmp_path):
    from qdrant_client import QdrantClient
    from qdrant_client import models as m

    from evals.retrieval import distractor_lectures, load_dev_set, upload_course
    from lecturecopilot import db, models
    from lecturecopilot.points import SEGMENT, PointWriter, payload
    from lecturecopilot.mediastores import media_store
    from services.ask.retrieve import retrieve
    from services.ask.search_index import EmbeddedSearchIndex, QdrantServerBackend
    from services.index.points import write_all_points, write_points
    from services.ingest.deletion import delete_lectures
    from services.ingest.store import IngestStore

    by_lecture, titles, questions = load_dev_set()
    course, ids = upload_course(stack, "MIT 6.006 (server backend)", by_lecture, titles)
    other, other_ids = upload_course(stack, "Distractor (server backend)", distractor_lectures(by_lecture), titles)
    lecture_of = {lid: no for no, lid in ids.items()}
    pool = db.make_pool(stack.settings, max_size=2)
    client = QdrantClient(location=":memory:")
    writer = PointWriter(client, "lc_test")
    all_ids = [*ids.values(), *other_ids.values()]
    for cid, lids in ((course, ids), (other, other_ids)):  # the backfill: write_points for each ready lecture
        assert write_all_points(pool, writer, cid)[0] == len(lids)
    written = client.count("lc_test", exact=True).count
    assert written == _db_points(pool, all_ids) > 0  # every segment and sub-chunk, once
    some = ids[min(ids)]
    # what the index service does when it indexes a lecture (again):
    # a stale point (a segment a re-index no longer has) is replaced away, and writing again duplicates nothing
    stale = "00000000-0000-4000-8000-000000000001"
    client.upsert("lc_test", wait=True, points=[m.PointStruct(id=stale, vector={
        "dense": [0.1] * 384, "bm25": m.SparseVector(indices=[1], values=[1.0])},
        payload=payload(course, some, 1, SEGMENT, 999, {"start_s": 0.0, "end_s": 1.0, "text": "stale"}))])
    write_points(pool, writer, some)
    assert client.count("lc_test", exact=True).count == written
    assert not client.retrieve("lc_test", [stale])
    # an orphan point of a lecture Postgres does not have (its deletion failed) is never a hit
    orphan = "00000000-0000-4000-8000-000000000002"
    text = questions[0]["question"]
    client.upsert("lc_test", wait=True, points=[m.PointStruct(id=orphan, vector={
        "dense": models.embed(stack.settings.embed_model, [text])[0].tolist(),
        "bm25": m.SparseVector(indices=[1], values=[1.0])},
        payload=payload(course, "00000000-0000-4000-8000-00000000abcd", 1, SEGMENT, 0,
                        {"start_s": 0.0, "end_s": 1.0, "text": text}))])

    edge = EmbeddedSearchIndex(tmp_path / "edge", pool)
    server = EmbeddedSearchIndex(Path("unused"), pool, server=QdrantServerBackend(client, "lc_test"))
    try:
        for index in (edge, server):
            index.sync_course(course)
            index.sync_course(other)
        assert client.count("lc_test", exact=True).count == written + 1  # ask wrote nothing
        qvecs = models.embed(stack.settings.embed_model, [q["question"] for q in questions])
        got = {name: [retrieve(ix, course, None, v, q["question"], k=6) for q, v in zip(questions, qvecs)]
               for name, ix in (("edge", edge), ("server", server))}
        # deleting a course (ingest) deletes its points from the server
        assert _count(client, "lc_test", course_id=other) > 0
        delete_lectures(records=IngestStore(pool), store=media_store(stack.settings),
                        lecture_ids=list(other_ids.values()), course_id=other, points=writer)
        assert _count(client, "lc_test", course_id=other) == 0
        assert _count(client, "lc_test", course_id=course) == _db_points(pool, ids.values()) + 1

        # a lecture deleted while the index service writes its points (after it read the rows, before
        # the write lands) keeps none: the write looks at the row again and removes them
        class DeletedMidWrite(PointWriter):
            def replace_lecture(self, lecture_id, pts):
                delete_lectures(records=IngestStore(pool), store=media_store(stack.settings),
                                lecture_ids=[lecture_id], points=self)
                super().replace_lecture(lecture_id, pts)

        victim = ids[max(ids)]
        assert _count(client, "lc_test", lecture_id=victim) > 0
        assert write_points(pool, DeletedMidWrite(client, "lc_test"), victim) == 0
        assert _count(client, "lc_test", lecture_id=victim) == 0
    finally:
        edge.close()
        server.close()
        pool.close()
    outsiders = set(other_ids.values())
    assert not any(p.hit.lecture_id in outsiders for r in got["server"] for p in r)  # course isolation holds
    assert not any(p.hit.point_id == orphan for r in got["server"] for p in r)
    assert all(len(r) == 6 for r in got["server"])
    r3 = {name: _recall_at(res, questions, lecture_of, 3) for name, res in got.items()}
    top1_same = sum(a[0].hit.point_id == b[0].hit.point_id for a, b in zip(got["edge"], got["server"]))
    print(f"recall@3 {r3}, top-1 the same for {top1_same}/{len(questions)}")
    assert r3["server"] >= r3["edge"] - 0.05, r3
    assert top1_same / len(questions) >= 0.8, top1_same
