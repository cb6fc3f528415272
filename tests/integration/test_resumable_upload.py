"""Resumable uploads in Content-Range chunks through the gateway: resume after a broken chunk,
refuse out-of-order chunks, other sizes and types, and queue the lecture once complete."""

from __future__ import annotations

import pytest
import requests

pytestmark = pytest.mark.slow


def _err(r, status, code):
    assert r.status_code == status, r.text
    assert r.json()["error"]["code"] == code
    return r.json()["error"]["message"]


def _put(stack, upload_id, data: bytes, first: int, total: int, last: int | None = None):
    last = first + len(data) - 1 if last is None else last
    return requests.put(f"{stack.base}/api/uploads/{upload_id}", data=data, timeout=60,
                        headers={**stack.admin, "Content-Range": f"bytes {first}-{last}/{total}"})


def _start(stack, course, filename, size, **extra):
    return requests.post(f"{stack.base}/api/courses/{course}/uploads", headers=stack.admin, timeout=10,
                         json={"filename": filename, "size": size, **extra})


def test_chunked_upload_resumes_and_queues_the_lecture(stack, synth_video):
    res, _ = synth_video
    data = res.path.read_bytes()
    n = len(data)
    course = stack.create_course("Resumable")
    r = _start(stack, course, "lecture.mp4", n, title="Chunked", number=3)
    assert r.status_code == 201, r.text
    up = r.json()
    assert up["offset"] == 0 and up["size"] == n and up["state"] == "receiving"
    uid = up["upload_id"]
    k = n // 3
    assert _put(stack, uid, data[:k], 0, n).json()["offset"] == k
    # a chunk that skips ahead is refused with where to resume
    assert f"start at byte {k}" in _err(_put(stack, uid, data[k + 10:k + 20], k + 10, n), 409, "wrong_offset")
    # a chunk whose body is shorter than its range (a dropped connection) leaves the offset where it was
    _err(_put(stack, uid, data[k:k + 100], k, n, last=k + 999), 400, "size_mismatch")
    # a chunk claiming another total size
    _err(_put(stack, uid, data[k:k + 100], k, n + 5), 400, "size_mismatch")
    _err(requests.put(f"{stack.base}/api/uploads/{uid}", data=b"x", headers=stack.admin, timeout=10), 400,
         "invalid_range")
    st = requests.get(f"{stack.base}/api/uploads/{uid}", headers=stack.admin, timeout=10).json()
    assert st["offset"] == k and st["state"] == "receiving"
    # resume from the offset the server gave
    assert _put(stack, uid, data[k:2 * k], k, n).json()["offset"] == 2 * k
    last = _put(stack, uid, data[2 * k:], 2 * k, n)
    assert last.status_code == 202, last.text
    done = last.json()
    assert done["state"] == "queued" and done["lecture_id"]
    assert stack.wait_ready(done["lecture_id"])["status"] == "ready"
    lectures = requests.get(f"{stack.base}/api/courses/{course}", timeout=10).json()["lectures"]
    assert [(lec["number"], lec["title"]) for lec in lectures] == [(3, "Chunked")]
    _err(_put(stack, uid, b"x", n - 1, n), 410, "upload_closed")
    assert not list((stack.settings.media_dir / "uploads").glob(f"{uid}*"))  # the part file is gone


def test_resumable_upload_refusals(stack, tmp_path):
    course = stack.create_course("Resumable refusals")
    _err(_start(stack, course, "slides.pdf", 10), 415, "unsupported_type")
    _err(_start(stack, course, "big.mp4", 3 * 1024**3), 413, "too_large")
    _err(_start(stack, course, "x.mp4", -4), 400, "invalid_size")
    _err(_start(stack, course, "x.mp4", "ten"), 400, "invalid_size")
    _err(_start(stack, course, "a\u0000b.mp4", 100), 400, "invalid_filename")
    _err(_start(stack, course, "../../etc/x.mp4", 100), 400, "invalid_filename")
    # a chunk running past the declared size, or a range without a total, changes nothing
    uid = _start(stack, course, "v.mp4", 1000).json()["upload_id"]
    _err(_put(stack, uid, b"x" * 1200, 0, 1000), 400, "invalid_range")
    r = requests.put(f"{stack.base}/api/uploads/{uid}", data=b"x" * 10, timeout=10,
                     headers={**stack.admin, "Content-Range": "bytes 0-9/*"})
    assert "total size" in _err(r, 400, "invalid_range")
    st = requests.get(f"{stack.base}/api/uploads/{uid}", headers=stack.admin, timeout=10).json()
    assert st["state"] == "receiving" and st["offset"] == 0
    _err(requests.get(f"{stack.base}/api/uploads/not-an-id", headers=stack.admin, timeout=10), 404, "not_found")
    _err(requests.post(f"{stack.base}/api/courses/{course}/uploads", json={"filename": "x.mp4", "size": 3},
                       timeout=10), 401, "unauthorized")
    # a complete upload that is not a video: refused with the ffprobe reason, no lecture
    text = b"not a video at all\n" * 40
    uid = _start(stack, course, "notes.mp4", len(text)).json()["upload_id"]
    msg = _err(_put(stack, uid, text, 0, len(text)), 422, "unprocessable_media")
    assert "not a readable video" in msg
    st = requests.get(f"{stack.base}/api/uploads/{uid}", headers=stack.admin, timeout=10).json()
    assert st["state"] == "refused" and st["lecture_id"] is None and "not a readable video" in st["error"]
    assert requests.get(f"{stack.base}/api/courses/{course}", timeout=10).json()["lectures"] == []


def test_deleting_a_course_removes_its_unfinished_uploads(stack):
    course = stack.create_course("Abandoned upload")
    uid = _start(stack, course, "half.mp4", 1000).json()["upload_id"]
    assert _put(stack, uid, b"x" * 400, 0, 1000).json()["offset"] == 400
    part = stack.settings.media_dir / "uploads" / f"{uid}.part"
    assert part.exists()
    assert requests.delete(f"{stack.base}/api/courses/{course}", headers=stack.admin, timeout=30).status_code == 204
    assert not part.exists()
    _err(requests.get(f"{stack.base}/api/uploads/{uid}", headers=stack.admin, timeout=10), 404, "not_found")
