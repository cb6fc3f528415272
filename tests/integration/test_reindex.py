"""``lecture-copilot reindex``: ready lectures rebuilt from their stored transcripts in place, with
the lecture ready throughout, ask answering from the new passages at once, and no mail. Real stack."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid

import pytest
import requests

from lecturecopilot import db
from services.index import store
from services.index.handlers import build_index

pytestmark = pytest.mark.slow

TOPICS = [
    "Merge sort splits the array into two halves and sorts each half recursively.",
    "Then the merge step walks both sorted halves with two fingers and copies the smaller item.",
    "Because every level of the recursion does linear work, merge sort takes n log n time.",
    "Now a different topic: a hash table stores items in an array of buckets chosen by a hash function.",
    "When two keys collide in one bucket, chaining keeps a linked list of the items in that bucket.",
    "With a good hash function the expected chain length is constant, so lookups take constant time.",
    "Our last topic is the binary heap, a complete binary tree stored in an array.",
    "In a max heap every parent is at least as large as its children.",
    "To insert into a max heap, put the key at the end and sift it up past smaller parents.",
]


def _vtt(step: float = 20.0) -> bytes:
    out = ["WEBVTT", ""]
    for i, line in enumerate(TOPICS * 2):
        a, b = i * step, i * step + step - 0.5
        out += [f"{int(a // 60):02d}:{a % 60:06.3f} --> {int(b // 60):02d}:{b % 60:06.3f}", line, ""]
    return "\n".join(out).encode()


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "lecturecopilot_ops.cli", "reindex", *args], capture_output=True,
                          text=True, timeout=300, env=dict(os.environ))


def _segments(stack, lecture_id):
    with stack.db() as conn:
        return conn.execute("SELECT idx, start_s, end_s, text FROM segments WHERE lecture_id=%s ORDER BY idx",
                            (lecture_id,)).fetchall()


def _search_texts(stack, course, query):
    r = requests.post(f"{stack.base}/api/courses/{course}/search", json={"query": query, "k": 6}, timeout=30)
    assert r.status_code == 200, r.text
    return [x["text"] for x in r.json()["results"]]


def test_reindex_rebuilds_a_ready_lecture_in_place_and_ask_serves_it_at_once(stack):
    course = stack.create_course("Reindex course")
    r = requests.post(f"{stack.base}/api/courses/{course}/lectures", headers=stack.admin,
                      files={"captions": ("c.vtt", _vtt(), "text/vtt")}, data={"title": "Three topics"}, timeout=30)
    assert r.status_code == 202, r.text
    lecture_id = r.json()["lecture_id"]
    assert stack.wait_ready(lecture_id, timeout_s=120)["status"] == "ready"
    fresh = _segments(stack, lecture_id)
    assert len(fresh) >= 3

    # an index of an older release: one passage a minute of other text, which ask has loaded
    with stack.db() as conn:
        conn.execute("DELETE FROM segments WHERE lecture_id=%s AND idx > 1", (lecture_id,))
        conn.execute("UPDATE segments SET text='obsolete passage ' || idx WHERE lecture_id=%s", (lecture_id,))
        conn.execute("UPDATE lectures SET indexed_at=clock_timestamp() WHERE id=%s", (lecture_id,))
        before = conn.execute("SELECT indexed_at, status, generation FROM lectures WHERE id=%s",
                              (lecture_id,)).fetchone()
    assert all(t.startswith("obsolete") for t in _search_texts(stack, course, "insert into a max heap"))
    mails = len(stack.mail.messages)

    out = _cli("--lecture", lecture_id)
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"[1/1] L1 'Three topics' ({lecture_id}): 2 → {len(fresh)} passages" in out.stdout
    assert "re-indexed 1 of 1 lectures" in out.stdout
    assert _segments(stack, lecture_id) == fresh  # the same passages as a first indexing makes
    with stack.db() as conn:
        after = conn.execute("SELECT indexed_at, status, generation FROM lectures WHERE id=%s",
                             (lecture_id,)).fetchone()
    assert after[1] == "ready" and after[2] == before[2] and after[0] > before[0]
    texts = _search_texts(stack, course, "insert into a max heap")
    assert texts and not any(t.startswith("obsolete") for t in texts)
    assert "sift it up" in texts[0]
    time.sleep(2)
    assert len(stack.mail.messages) == mails  # no second "lecture ready" mail

    # the whole course (and every course) by default; an unknown or malformed id is refused
    again = _cli("--course", course)
    assert again.returncode == 0 and f"{len(fresh)} → {len(fresh)} passages" in again.stdout
    by_title = _cli("--course", "Reindex course")  # an exact title, as `process --course` takes one
    assert by_title.returncode == 0 and "re-indexed 1 of 1 lectures" in by_title.stdout, by_title.stderr
    none = _cli("--lecture", str(uuid.uuid4()))
    assert none.returncode == 2 and "no ready lecture matched" in none.stderr
    bad = _cli("--course", "not-an-id")
    assert bad.returncode == 2 and "no course is titled 'not-an-id'" in bad.stderr
    huge = _cli("--lecture", "x" * 10_000)
    assert huge.returncode == 2 and len(huge.stderr) < 300 and "(10000 characters)" in huge.stderr


def test_a_lecture_retried_while_it_is_rebuilt_is_left_alone(stack):
    course = stack.create_course("Reindex race")
    r = requests.post(f"{stack.base}/api/courses/{course}/lectures", headers=stack.admin,
                      files={"captions": ("c.vtt", _vtt(), "text/vtt")}, data={"title": "Raced"}, timeout=30)
    lecture_id = r.json()["lecture_id"]
    assert stack.wait_ready(lecture_id, timeout_s=120)["status"] == "ready"
    pool = db.make_pool(stack.settings, max_size=1)
    try:
        (target,) = store.reindex_targets(pool, lecture_id=lecture_id)
        ix = build_index(pool, stack.settings.embed_model, lecture_id)
        with stack.db() as conn:  # what a retry does between the read and the save
            conn.execute("UPDATE segments SET text='kept' WHERE lecture_id=%s", (lecture_id,))
            conn.execute("UPDATE lectures SET generation=generation+1 WHERE id=%s", (lecture_id,))
        assert store.save_reindex(pool, lecture_id, target["generation"], ix) is False
        assert {s[3] for s in _segments(stack, lecture_id)} == {"kept"}
        assert store.save_reindex(pool, lecture_id, target["generation"] + 1, ix) is True
        assert "kept" not in {s[3] for s in _segments(stack, lecture_id)}
    finally:
        pool.close()


class _CommitsMidLoad:
    """A pool whose connections run ``between()`` (another session's committed write) right after the
    first query of a lecture's load, as a re-index saving at that moment would."""

    def __init__(self, pool, between):
        self.pool, self.between, self.fired = pool, between, False

    def connection(self):
        import contextlib

        outer = self

        @contextlib.contextmanager
        def cm():
            with outer.pool.connection() as conn:
                real = conn.execute

                def execute(sql, *a, **k):
                    cur = real(sql, *a, **k)
                    if "FROM segments" in sql and not outer.fired:
                        outer.fired = True
                        outer.between()
                    return cur

                conn.execute = execute
                try:
                    yield conn
                finally:
                    del conn.execute
        return cm()


def test_ask_loads_a_lecture_from_one_snapshot_while_a_reindex_commits(stack, tmp_path):
    from services.ask.search_index import EmbeddedSearchIndex

    course = stack.create_course("Reindex snapshot")
    r = requests.post(f"{stack.base}/api/courses/{course}/lectures", headers=stack.admin,
                      files={"captions": ("c.vtt", _vtt(), "text/vtt")}, data={"title": "Snap"}, timeout=30)
    lecture_id = r.json()["lecture_id"]
    assert stack.wait_ready(lecture_id, timeout_s=120)["status"] == "ready"

    def reindex_commits():
        with stack.db() as conn:
            conn.execute("UPDATE sentences SET text='rewritten' WHERE lecture_id=%s", (lecture_id,))
            conn.execute("UPDATE segments SET text='rewritten' WHERE lecture_id=%s", (lecture_id,))

    pool = db.make_pool(stack.settings, max_size=2)
    wrapped = _CommitsMidLoad(pool, reindex_commits)
    index = EmbeddedSearchIndex(tmp_path / "snap", wrapped)
    try:
        index.sync_course(course)
        assert wrapped.fired
        sentences, _ = index.lecture_sentences[lecture_id]
        texts = {s.text for s in sentences}
        assert "rewritten" not in texts and any("sift it up" in t for t in texts)  # the old rows, all of them
    finally:
        index.close()
        pool.close()
