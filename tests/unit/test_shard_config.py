"""The shard layouts of services.ask.shard_config on a real qdrant-edge shard: the memory-lean
``disk`` profile ranks a course's points as the all-in-RAM ``ram`` profile does, keeps every query
inside its course, and survives a close and reload (an ask replica restarting on a current shard)."""

from __future__ import annotations

import uuid

import numpy as np
import pytest
import qdrant_edge as q

from lecturecopilot.points import bm25
from services.ask.shard_config import create_shard, dense_params, edge_config

DIM = 384
WORDS = "hash table chaining collision probe array list tree heap graph sort search key value bucket".split()


def _fill(shard, rng, n=1200, courses=3):
    enc = bm25()
    vecs = rng.normal(size=(n, DIM)).astype("float32")
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    pts = []
    for i, v in enumerate(vecs):
        text = " ".join(rng.choice(WORDS, 12))
        pts.append(q.Point(str(uuid.UUID(int=i + 1)), {"dense": v.tolist(), "bm25": enc.embed_document(text)},
                           {"course_id": f"c{i % courses}", "lecture_id": f"l{i % 7}", "kind": "segment"}))
    shard.update(q.UpdateOperation.upsert_points(pts))
    shard.optimize()
    return vecs


def _top(shard, profile, course, vec, k=20):
    f = q.Filter(must=[q.FieldCondition(key="course_id", match=q.MatchValue(course))])
    res = shard.query(q.QueryRequest(limit=k, query=q.Query.Nearest(vec.tolist(), using="dense"), filter=f,
                                     params=dense_params(profile), with_payload=True))
    return res


def test_disk_profile_ranks_like_ram_and_stays_in_course(tmp_path):
    shards = {p: create_shard(str(tmp_path / p), DIM, p) for p in ("ram", "disk")}
    for shard in shards.values():
        _fill(shard, np.random.default_rng(7))
    rng = np.random.default_rng(11)
    overlap = []
    for _ in range(20):
        v = rng.normal(size=DIM).astype("float32")
        v /= np.linalg.norm(v)
        ram = _top(shards["ram"], "ram", "c1", v)
        disk = _top(shards["disk"], "disk", "c1", v)
        assert {p.payload["course_id"] for p in disk} == {"c1"}
        assert len(disk) == 20
        overlap.append(len({p.id for p in ram} & {p.id for p in disk}) / 20)
        assert disk[0].id == ram[0].id  # rescoring with the original vectors: the best hit is exact
    assert np.mean(overlap) >= 0.95
    for shard in shards.values():
        shard.close()


def test_disk_shard_reloads_without_rebuild(tmp_path):
    shard = create_shard(str(tmp_path / "s"), DIM, "disk")
    vecs = _fill(shard, np.random.default_rng(3))
    before = [p.id for p in _top(shard, "disk", "c2", vecs[5])]
    shard.flush()
    shard.close()
    again = q.EdgeShard.load(str(tmp_path / "s"))
    assert again.count(q.CountRequest(exact=True)) == 1200
    assert [p.id for p in _top(again, "disk", "c2", vecs[5])] == before
    again.close()


def test_profiles():
    assert dense_params("ram") is None
    assert dense_params("disk").quantization.rescore is True
    assert edge_config(DIM, "disk").payload_memory == q.Memory.Cold
    with pytest.raises(ValueError):
        edge_config(DIM, "ssd")
