"""The memory-lean shard layout (``LC_SEARCH_PROFILE=disk``: int8 vectors rescored with the
originals, vectors, payload and BM25 index memory-mapped) ranks like the all-in-RAM one through the
product's own retrieval: the MIT 6.006 dev set loaded through the captions path, every question
retrieved from an :class:`EmbeddedSearchIndex` of each profile, course isolation kept."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow


def test_disk_profile_ranks_like_ram_on_the_dev_set(stack, tmp_path):
    from evals.retrieval import distractor_lectures, load_dev_set, upload_course
    from lecturecopilot import db, models
    from services.ask.retrieve import retrieve
    from services.ask.search_index import EmbeddedSearchIndex

    by_lecture, titles, questions = load_dev_set()
    course, ids = upload_course(stack, "MIT 6.006 (profiles)", by_lecture, titles)
    other, other_ids = upload_course(stack, "Distractor (profiles)", distractor_lectures(by_lecture), titles)
    pool = db.make_pool(stack.settings, max_size=2)
    indexes = {p: EmbeddedSearchIndex(tmp_path / p, pool, profile=p) for p in ("ram", "disk")}
    try:
        qvecs = models.embed(stack.settings.embed_model, [q["question"] for q in questions])
        got = {}
        for name, index in indexes.items():
            index.sync_course(course)
            index.sync_course(other)
            got[name] = [[p.hit.point_id for p in retrieve(index, course, None, v, q["question"], k=6)]
                         for q, v in zip(questions, qvecs)]
    finally:
        for index in indexes.values():
            index.close()
        pool.close()
    main = {h.point_id for (lid, _), h in indexes["disk"].segments.items() if lid in ids.values()}
    outside = {h.point_id for (lid, _), h in indexes["disk"].segments.items() if lid in other_ids.values()}
    assert outside and all(pid in main for r in got["disk"] for pid in r)  # nothing from the distractor course
    same = sum(a == b for a, b in zip(got["ram"], got["disk"]))
    assert all(len(r) == 6 for r in got["disk"])
    assert same / len(questions) >= 0.95, f"top-6 identical for {same}/{len(questions)}"
