"""Resumable uploads in Content-Range chunks through the gateway: resume after a broken chunk,
refuse out-of-order chunks, other sizes and types, and queue the lecture once complete."""

from __future__ import annotations

import io
import json
import uuid

import pytest
import requests

from web_helpers import blocked_at_lecture_insert

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


def test_the_course_of_an_upload_comes_from_ingest(stack):
    """Ingest owns ``uploads``: the gateway asks it for an upload's course and checks who may manage it."""
    from web_helpers import mint

    course = stack.create_course("Upload's course")
    uid = _start(stack, course, "mine.mp4", 1000).json()["upload_id"]
    r = requests.get(f"{stack.settings.ingest_url}/v1/uploads/{uid}/course", timeout=10)
    assert r.status_code == 200 and r.json() == {"upload_id": uid, "course_id": course}
    r = requests.get(f"{stack.settings.ingest_url}/v1/uploads/00000000-0000-0000-0000-000000000000/course", timeout=10)
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
    other = mint(stack, "instructor", "someone-else@example.edu")  # may see the public course, not manage it
    # whoever may not manage the upload learns nothing of whether it exists: the same answer as for none
    for url in (f"{stack.base}/api/uploads/{uid}", f"{stack.base}/api/uploads/{uuid.uuid4()}"):
        assert _err(requests.get(url, headers=other, timeout=10), 404, "not_found") == "Unknown upload."
        assert _err(requests.put(url, data=b"x" * 10, timeout=10,
                                 headers={**other, "Content-Range": "bytes 0-9/1000"}), 404, "not_found") == "Unknown upload."
        _err(requests.get(url, timeout=10), 401, "unauthorized")
    assert _status(stack, uid)["offset"] == 0


# -- issue #12: checks at the start (19), abandoned uploads (16), an interrupted finish (17) -----

VTT = b"WEBVTT\n\n00:01.000 --> 00:04.000\nA heap is a binary tree with the heap property.\n"


def _status(stack, uid, headers=None):
    r = requests.get(f"{stack.base}/api/uploads/{uid}", headers=headers or stack.admin, timeout=60)
    assert r.status_code == 200, r.text
    return r.json()


def _uploads_of(stack, course) -> int:
    with stack.db() as conn:
        return conn.execute("SELECT count(*) FROM uploads WHERE course_id=%s", (course,)).fetchone()[0]


def _age(stack, uid, seconds: float) -> None:
    """Makes the upload's last chunk ``seconds`` older (as if nothing had arrived since)."""
    with stack.db() as conn:
        conn.execute("UPDATE uploads SET active_at = active_at - make_interval(secs => %s) WHERE id=%s",
                     (seconds, uid))


def test_an_upload_is_checked_when_it_starts(stack):
    """Item 19: what the finish would refuse, the start refuses, before a byte is sent."""
    course = stack.create_course("Checked at the start")
    r = requests.post(f"{stack.base}/api/courses/{course}/lectures", headers=stack.admin, timeout=30,
                      files={"captions": ("a.vtt", VTT, "text/vtt")}, data={"title": "One", "number": "1"})
    assert r.status_code == 202, r.text
    assert "lecture 1" in _err(_start(stack, course, "two.mp4", 5000, title="Two", number=1), 409, "number_taken")
    assert "200 characters" in _err(_start(stack, course, "two.mp4", 5000, title="x" * 300), 400, "invalid_title")
    _err(_start(stack, course, "two.mp4", 5000, title="Heaps\x07"), 400, "invalid_title")
    _err(_start(stack, course, "two.mp4", 5000, title=["not", "text"]), 400, "invalid_title")
    # a file name that would become a 300-character title
    _err(_start(stack, course, "y" * 250 + ".mp4", 5000), 400, "invalid_title")
    _err(_start(stack, "00000000-0000-0000-0000-000000000000", "two.mp4", 5000), 404, "not_found")
    assert _uploads_of(stack, course) == 0
    # the start keeps the title it checked: the finish uses the same one
    r = _start(stack, course, "two.mp4", 5000, title="  Two \n  heaps ", number=2)
    assert r.status_code == 201, r.text
    with stack.db() as conn:
        meta = conn.execute("SELECT meta FROM uploads WHERE id=%s", (r.json()["upload_id"],)).fetchone()[0]
    assert meta["title"] == "Two heaps" and meta["number"] == 2


def _captions_lecture(stack, course, title, number=None):
    data = {"title": title} if number is None else {"title": title, "number": str(number)}
    return requests.post(f"{stack.base}/api/courses/{course}/lectures", headers=stack.admin, timeout=30,
                         files={"captions": ("a.vtt", VTT, "text/vtt")}, data=data)


def _numbers(stack, course) -> list[int]:
    lectures = requests.get(f"{stack.base}/api/courses/{course}", timeout=10).json()["lectures"]
    return sorted(lec["number"] for lec in lectures)


def test_an_open_upload_holds_its_lecture_number(stack):
    """An upload that declared lecture 2 keeps it while it is open: another upload naming 2 is
    refused at once (multipart or resumable), one naming no number gets the next one not held, and the
    hold ends when the upload goes idle past LC_UPLOAD_IDLE_S."""
    course = stack.create_course("Numbers held")
    assert _captions_lecture(stack, course, "One").status_code == 202
    held = _start(stack, course, "two.mp4", 5000, title="Two", number=2)
    assert held.status_code == 201, held.text
    uid = held.json()["upload_id"]
    assert _put(stack, uid, b"x" * 1000, 0, 5000).json()["offset"] == 1000
    assert "being uploaded" in _err(_captions_lecture(stack, course, "Also two", 2), 409, "number_taken")
    assert "being uploaded" in _err(_start(stack, course, "b.mp4", 5000, number=2), 409, "number_taken")
    # the number is held in this course only
    other = stack.create_course("Numbers elsewhere")
    assert _captions_lecture(stack, other, "Two there", 2).status_code == 202
    # without a number, the next lectures skip the held one
    assert _captions_lecture(stack, course, "Next").status_code == 202
    assert _captions_lecture(stack, course, "And next").status_code == 202
    assert _numbers(stack, course) == [1, 3, 4]
    # an upload idle past its expiry holds nothing
    _age(stack, uid, stack.settings.upload_idle_s + 5)
    assert _captions_lecture(stack, course, "Two at last", 2).status_code == 202
    assert _numbers(stack, course) == [1, 2, 3, 4]


def test_a_number_taken_mid_upload_stops_the_upload_at_its_next_chunk(stack):
    """If a lecture gets the number anyway (another lecture's number changed by PATCH, which is
    the gateway's and does not look at uploads), the upload's next chunk is refused with 409
    before its bytes are taken — the last one too, however big — and the upload with it, its
    bytes removed, rather than taking every byte and refusing the file at the end."""
    course = stack.create_course("Number taken mid-upload")
    n = 1000 + 64 * 1024**2  # a last chunk far bigger than the sockets' buffers
    uid = _start(stack, course, "seven.mp4", n, title="Seven", number=7).json()["upload_id"]
    assert _put(stack, uid, b"x" * 1000, 0, n).json()["offset"] == 1000
    other = _captions_lecture(stack, course, "Another").json()["lecture_id"]
    r = requests.patch(f"{stack.base}/api/lectures/{other}", json={"number": 7}, headers=stack.admin, timeout=10)
    assert r.status_code == 200, r.text

    class Body(io.RawIOBase):  # the last chunk, counting what the client got to send before the answer
        sent = 0

        def __len__(self):
            return n - 1000

        def read(self, size=-1):
            size = min(n - 1000 - self.sent, 1024**2 if size is None or size < 0 else size)
            self.sent += size
            return b"x" * size

    body = Body()
    r = requests.put(f"{stack.base}/api/uploads/{uid}", data=body, timeout=60,
                     headers={**stack.admin, "Content-Range": f"bytes 1000-{n - 1}/{n}"})
    assert "lecture 7" in _err(r, 409, "number_taken")  # the last chunk
    assert body.sent < n - 1000, body.sent
    st = _status(stack, uid)
    assert st["state"] == "refused" and "lecture 7" in st["error"] and st["offset"] == 0, st
    assert not (stack.settings.media_dir / "uploads" / f"{uid}.part").exists()
    _err(_put(stack, uid, b"x" * 1000, 1000, n), 410, "upload_closed")


def _expect_put(stack, uid, first: int, last: int, total: int):
    """Sends a chunk's request line and headers with ``Expect: 100-continue`` and no body yet; the
    socket and the server's first answer (status line and headers, as text)."""
    import socket
    from urllib.parse import urlsplit

    url = urlsplit(stack.base)
    sock = socket.create_connection((url.hostname, url.port), timeout=20)
    head = [f"PUT /api/uploads/{uid} HTTP/1.1", f"Host: {url.netloc}", f"Content-Length: {last - first + 1}",
            f"Content-Range: bytes {first}-{last}/{total}", "Expect: 100-continue",
            *(f"{k}: {v}" for k, v in stack.admin.items()), "", ""]
    sock.sendall("\r\n".join(head).encode())
    got = b""
    while b"\r\n\r\n" not in got:
        data = sock.recv(65536)
        assert data, got
        got += data
    return sock, got.decode("latin-1")


def test_expect_100_continue_is_answered_only_for_a_chunk_that_is_taken(stack):
    """A client that sends ``Expect: 100-continue`` waits for ``100 Continue`` before its body. It
    gets it only once the chunk has passed its checks; a refused chunk (here: not at the offset) is
    answered 409 ``wrong_offset`` with the offset in the error, ``Connection: close``, and the
    connection closes without a byte of the body sent. (gunicorn used to send ``100 Continue``
    before the app ran, so curl began sending the refused chunk.)"""
    course = stack.create_course("Expect 100-continue")
    uid = _start(stack, course, "expect.mp4", 2000).json()["upload_id"]
    sock, head = _expect_put(stack, uid, 0, 999, 2000)
    with sock:
        assert head.startswith("HTTP/1.1 100 Continue"), head
        sock.sendall(b"x" * 1000)
        answer = b""
        while b'"offset"' not in answer:
            data = sock.recv(65536)
            assert data, answer
            answer += data
        assert answer.startswith(b"HTTP/1.1 200"), answer
    sock, head = _expect_put(stack, uid, 0, 999, 2000)  # the same range again: the offset is 1000 now
    with sock:
        assert head.startswith("HTTP/1.1 409"), head
        assert "connection: close" in head.lower(), head
        rest = b""
        while data := sock.recv(65536):  # the server closes the connection: nothing more is waited for
            rest += data
    whole = head.encode("latin-1") + rest
    error = json.loads(whole[whole.index(b"{"):])["error"] if b"{" in whole else None
    assert error and error["code"] == "wrong_offset" and error["offset"] == 1000, whole
    assert _status(stack, uid)["offset"] == 1000


def test_a_finishing_upload_holds_its_number_and_a_chunk_answer_has_a_fresh_expiry(stack):
    """An upload whose finish is running (ffprobe and the checks take a moment) still holds its
    number: the same number is 409 and a lecture without one never gets it. The answer to a chunk
    gives the expiry counted from that chunk."""
    import fcntl
    from datetime import datetime, timedelta, timezone

    course = stack.create_course("Held while finishing")
    uid = _start(stack, course, "five.mp4", 5000, title="Five", number=5).json()["upload_id"]
    _age(stack, uid, 300)
    before = datetime.now(timezone.utc)
    got = _put(stack, uid, b"x" * 1000, 0, 5000).json()
    assert datetime.fromisoformat(got["expires_at"]) >= before + timedelta(seconds=stack.settings.upload_idle_s - 5)
    part = open(stack.settings.media_dir / "uploads" / f"{uid}.part", "r+b")
    fcntl.flock(part, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the finish holds the upload's lock: no sweep touches it
    with stack.db() as conn:  # as the finish leaves it while it checks the file
        conn.execute("UPDATE uploads SET state='finishing' WHERE id=%s", (uid,))
    try:
        assert "being uploaded" in _err(_captions_lecture(stack, course, "Also five", 5), 409, "number_taken")
        assert _captions_lecture(stack, course, "No number").status_code == 202
        assert _numbers(stack, course) == [1]  # the next number no upload holds
        assert _captions_lecture(stack, course, "Up to five", 4).status_code == 202
        assert _captions_lecture(stack, course, "Past five").status_code == 202
        assert _numbers(stack, course) == [1, 4, 6]
    finally:
        with stack.db() as conn:
            conn.execute("UPDATE uploads SET state='refused', error='test' WHERE id=%s", (uid,))
        part.close()


def test_numbers_given_automatically_stop_at_9999(stack):
    """A lecture without a number in a course whose highest is 9999 (the largest a number may be)
    is refused with what to do, not given 10000, which no request could set again; a resumable
    upload without a number is refused at its start, before its bytes. An upload holding 9999
    leaves the numbers below it to the lectures without one."""
    course = stack.create_course("Numbers at the top")
    assert _captions_lecture(stack, course, "Last", 9999).status_code == 202
    assert "9999" in _err(_captions_lecture(stack, course, "One more"), 409, "number_taken")
    assert "9999" in _err(_start(stack, course, "more.mp4", 5000, title="More"), 409, "number_taken")
    assert _captions_lecture(stack, course, "A free one", 3).status_code == 202
    assert _numbers(stack, course) == [3, 9999]
    other = stack.create_course("Numbers held at the top")
    assert _captions_lecture(stack, other, "First").status_code == 202
    assert _start(stack, other, "top.mp4", 5000, title="Top", number=9999).status_code == 201
    assert _start(stack, other, "two.mp4", 5000, title="Two", number=2).status_code == 201
    assert _captions_lecture(stack, other, "Next").status_code == 202  # 2 and 9999 are held: 3
    assert _numbers(stack, other) == [1, 3]


def test_a_course_deleted_while_its_lecture_registers_is_a_404(stack):
    """The course goes between the checks and the lecture's insert (its foreign key fails): the
    store says so and the upload gets 404, not a 500."""
    import uuid as _uuid

    from lecturecopilot import db
    from services.ingest.core import IngestError, Kept, UploadRequest, _register
    from services.ingest.store import IngestStore

    pool = db.make_pool(stack.settings, max_size=1)
    try:
        with pytest.raises(IngestError) as e:
            _register(IngestStore(pool), str(_uuid.uuid4()), UploadRequest(str(_uuid.uuid4()), "Gone"),
                      Kept(duration_s=1.0), hold_s=600)
        assert e.value.status == 404 and "deleted" in str(e.value)
    finally:
        pool.close()


def test_abandoned_uploads_expire_and_their_bytes_go(stack):
    """Item 16: an upload with no chunk for LC_UPLOAD_IDLE_S expires, its bytes are removed, and
    it no longer counts; a chunk restarts the clock."""
    idle = stack.settings.upload_idle_s
    course = stack.create_course("Abandoned uploads")
    parts = stack.settings.media_dir / "uploads"
    a, b, c = (_start(stack, course, f"{x}.mp4", 1000).json() for x in "abc")
    for up in (a, b, c):
        assert up["expires_at"] and _put(stack, up["upload_id"], b"x" * 300, 0, 1000).json()["offset"] == 300
    _age(stack, a["upload_id"], idle + 5)
    # the next look at it expires it and removes its bytes
    st = _status(stack, a["upload_id"])
    assert st["state"] == "expired" and "no chunk arrived" in st["error"] and st["expires_at"] is None
    assert not (parts / f"{a['upload_id']}.part").exists()
    assert "expired" in _err(_put(stack, a["upload_id"], b"x" * 10, 300, 1000), 410, "upload_expired")
    # one nobody looks at again goes when the next upload starts
    _age(stack, b["upload_id"], idle + 5)
    _age(stack, c["upload_id"], idle - 60)  # old, but not idle for long enough
    assert _start(stack, course, "d.mp4", 1000).status_code == 201
    with stack.db() as conn:
        state = dict(conn.execute("SELECT id::text, state FROM uploads WHERE course_id=%s", (course,)).fetchall())
    assert state[b["upload_id"]] == "expired" and state[c["upload_id"]] == "receiving"
    assert not (parts / f"{b['upload_id']}.part").exists() and (parts / f"{c['upload_id']}.part").exists()
    # a chunk restarts the clock
    assert _put(stack, c["upload_id"], b"x" * 100, 300, 1000).json()["offset"] == 400
    _age(stack, c["upload_id"], 120)
    st = _status(stack, c["upload_id"])
    assert st["state"] == "receiving" and st["offset"] == 400


def test_open_uploads_are_capped_per_person(stack):
    """Item 16: LC_UPLOADS_OPEN_MAX open uploads per person (429 with Retry-After beyond); an
    expired one frees its place; the operator (admin) is not capped."""
    from web_helpers import mint

    cap = stack.settings.uploads_open_max
    who = mint(stack, "instructor", "capped@example.edu")
    r = requests.post(f"{stack.base}/api/courses", json={"title": "Capped"}, headers=who, timeout=10)
    assert r.status_code == 201, r.text
    course = r.json()["id"]

    def start(headers, name):
        return requests.post(f"{stack.base}/api/courses/{course}/uploads", headers=headers, timeout=10,
                             json={"filename": name, "size": 1000})

    opened = [start(who, f"{k}.mp4") for k in range(cap)]
    assert all(r.status_code == 201 for r in opened), [r.text for r in opened]
    r = start(who, "one-more.mp4")
    assert "uploads open" in _err(r, 429, "too_many_uploads")
    assert 0 < int(r.headers["Retry-After"]) <= stack.settings.upload_idle_s + 1
    assert start(stack.admin, "operator.mp4").status_code == 201  # another person, and not capped
    _age(stack, opened[0].json()["upload_id"], stack.settings.upload_idle_s + 5)
    assert start(who, "after-expiry.mp4").status_code == 201


def test_a_declared_size_the_store_cannot_hold_is_refused(stack):
    """Item 16: declared sizes never add up to more than the store can hold (free space less what
    open uploads still expect, less LC_UPLOAD_DISK_RESERVE_BYTES): 507 beyond."""
    import shutil

    s = stack.settings
    size = s.max_upload_bytes
    course = stack.create_course("Room in the store")
    free = shutil.disk_usage(s.media_dir).free
    accepted, refused = 0, None
    try:
        for _ in range(free // size + 2):
            r = _start(stack, course, f"big{accepted}.mp4", size)
            if r.status_code != 201:
                refused = r
                break
            accepted += 1
        assert refused is not None, f"{accepted} uploads of {size} bytes accepted with {free} bytes free"
        assert "no room" in _err(refused, 507, "insufficient_storage")
        assert accepted * size <= free - s.upload_disk_reserve_bytes
        # what was declared, plus this one, would not have fitted (other processes may write meanwhile)
        assert (accepted + 1) * size + s.upload_disk_reserve_bytes > shutil.disk_usage(s.media_dir).free - size
        # the bytes of an upload are no longer expected once they are on disk: a small one still fits
        assert _start(stack, course, "small.mp4", 1000).status_code == 201
    finally:
        assert requests.delete(f"{stack.base}/api/courses/{course}", headers=stack.admin, timeout=60).status_code == 204


def _one_lecture(stack, course) -> dict:
    lectures = requests.get(f"{stack.base}/api/courses/{course}", timeout=10).json()["lectures"]
    assert len(lectures) == 1, lectures
    return lectures[0]


def test_an_upload_whose_finish_was_cut_short_is_finished_by_its_next_request(stack, synth_video):
    """Item 17: ingest died after the last byte reached disk (offset == size, state receiving):
    the next status GET, or the last chunk sent again, finishes it, once."""
    res, _ = synth_video
    data = res.path.read_bytes()
    n = len(data)
    course = stack.create_course("Cut short")
    parts = stack.settings.media_dir / "uploads"
    for k, resend in enumerate((False, True)):
        uid = _start(stack, course, "lecture.mp4", n, title=f"Cut {k}", number=k + 1).json()["upload_id"]
        assert _put(stack, uid, data[: n - 1000], 0, n).json()["offset"] == n - 1000
        with open(parts / f"{uid}.part", "ab") as f:  # the last bytes landed; then ingest died
            f.write(data[n - 1000:])
        if resend:  # the client sends its last chunk again: 202 with the lecture, not 409 wrong_offset
            r = _put(stack, uid, data[n - 1000:], n - 1000, n)
            assert r.status_code == 202, r.text
            st = r.json()
        else:
            st = _status(stack, uid)
        assert st["state"] == "queued" and st["lecture_id"] and st["offset"] == n, st
        assert _status(stack, uid)["lecture_id"] == st["lecture_id"]
        _err(_put(stack, uid, data[n - 1000:], n - 1000, n), 410, "upload_closed")
        assert stack.wait_ready(st["lecture_id"])["status"] == "ready"
        assert not (parts / f"{uid}.part").exists()
    lectures = requests.get(f"{stack.base}/api/courses/{course}", timeout=10).json()["lectures"]
    assert [(lec["number"], lec["title"]) for lec in lectures] == [(1, "Cut 0"), (2, "Cut 1")]


def test_ingest_killed_while_finishing_finishes_the_upload_after_restart(stack, synth_video):
    """Item 17: SIGKILL of ingest in the middle of a finish (held at the lecture's INSERT by a
    table lock this test takes), then a restart: the upload reaches queued with exactly one
    lecture, which reaches ready; a .part file of no upload is swept away at the restart."""
    import os
    import signal
    import threading
    import time

    from lecturecopilot_ops import stack as stack_mod

    res, _ = synth_video
    data = res.path.read_bytes()
    n = len(data)
    course = stack.create_course("Killed while finishing")
    parts = stack.settings.media_dir / "uploads"
    orphan = parts / "00000000-0000-4000-8000-000000000017.part"
    orphan.write_bytes(b"left behind")
    os.utime(orphan, (time.time() - 3600, time.time() - 3600))
    uid = _start(stack, course, "lecture.mp4", n, title="Survivor", number=7).json()["upload_id"]
    assert _put(stack, uid, data[: n // 2], 0, n).json()["offset"] == n // 2
    pidfile = stack.settings.data_dir / "run" / "ingest.pid"
    locker = stack.db()
    locker.autocommit = False
    locker.execute("LOCK TABLE lectures IN EXCLUSIVE MODE")  # the finish blocks at its INSERT
    last = threading.Thread(target=lambda: _put(stack, uid, data[n // 2:], n // 2, n), daemon=True)
    try:
        last.start()
        with stack.db() as conn:
            waiting = blocked_at_lecture_insert(conn)
            assert conn.execute("SELECT state FROM uploads WHERE id=%s", (uid,)).fetchone()[0] == "finishing"
            os.killpg(int(pidfile.read_text()), signal.SIGKILL)  # ingest dies mid-finish
            for (pid,) in waiting:  # its statement dies with it (Postgres would finish it once unblocked)
                conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
            assert conn.execute("SELECT count(*) FROM lectures WHERE course_id=%s", (course,)).fetchone()[0] == 0
    finally:
        locker.rollback()
        locker.close()
        last.join(30)
        stack_mod.up(stack.settings, quiet=True)  # the new ingest's first sweep finishes the upload
    deadline = time.time() + 60
    with stack.db() as conn:
        while time.time() < deadline:
            state, lecture_id = conn.execute("SELECT state, lecture_id FROM uploads WHERE id=%s", (uid,)).fetchone()
            if state != "finishing":
                break
            time.sleep(0.2)
    assert state == "queued" and lecture_id, state
    assert _one_lecture(stack, course)["id"] == str(lecture_id)
    assert stack.wait_ready(str(lecture_id))["status"] == "ready"
    assert _one_lecture(stack, course)["title"] == "Survivor"
    assert not (parts / f"{uid}.part").exists() and not orphan.exists()
    _err(_put(stack, uid, data[n // 2:], n // 2, n), 410, "upload_closed")


def test_an_upload_whose_bytes_go_during_its_finish_is_lost_not_a_500(stack, synth_video):
    """Review finding 13 (no object storage): the ``.part`` file goes while the finish runs (its
    course deleted meanwhile, which removes it without the upload's lock): the last chunk's answer
    is 410 ``upload_lost`` and the upload ``refused``, not a 500 that leaves it ``finishing``. The
    finish is held at its first look at the lectures table (right after it turns ``finishing``) by
    a lock this test takes once the chunk has passed its own checks (which read the lectures
    table too): the chunk's body is sent in two parts, the lock taken between them."""
    import http.client
    import threading
    import time
    from urllib.parse import urlsplit

    res, _ = synth_video
    data = res.path.read_bytes()
    n = len(data)
    course = stack.create_course("Lost mid-finish")
    uid = _start(stack, course, "lecture.mp4", n, title="Lost", number=1).json()["upload_id"]
    assert _put(stack, uid, data[: n // 2], 0, n).json()["offset"] == n // 2
    part = stack.settings.media_dir / "uploads" / f"{uid}.part"
    _age(stack, uid, 30)
    with stack.db() as conn:
        touched = conn.execute("SELECT active_at FROM uploads WHERE id=%s", (uid,)).fetchone()[0]
    rest = data[n // 2:]
    url = urlsplit(stack.base)
    http = http.client.HTTPConnection(url.hostname, url.port, timeout=120)
    http.putrequest("PUT", f"/api/uploads/{uid}")
    for k, v in {**stack.admin, "Content-Range": f"bytes {n // 2}-{n - 1}/{n}", "Content-Length": str(len(rest))}.items():
        http.putheader(k, v)
    http.endheaders()
    http.send(rest[:10])
    with stack.db() as conn:  # the chunk passed its checks when it marks the upload active, just before its bytes
        deadline = time.time() + 60
        while time.time() < deadline and conn.execute(
                "SELECT active_at FROM uploads WHERE id=%s", (uid,)).fetchone()[0] == touched:
            time.sleep(0.05)
    locker = stack.db()
    locker.autocommit = False
    locker.execute("LOCK TABLE lectures IN ACCESS EXCLUSIVE MODE")  # the finish blocks at its SELECT
    answer: list = []

    def send_rest():
        http.send(rest[10:])
        resp = http.getresponse()
        answer.append((resp.status, json.loads(resp.read())))

    last = threading.Thread(target=send_rest, daemon=True)
    try:
        last.start()
        with stack.db() as conn:  # 'finishing' is set just before the finish's SELECT, which waits for the lock
            deadline, state = time.time() + 60, None
            while time.time() < deadline and state != "finishing":
                state = conn.execute("SELECT state FROM uploads WHERE id=%s", (uid,)).fetchone()[0]
                time.sleep(0.05)
            assert state == "finishing", state
        assert part.stat().st_size == n
        part.unlink()  # what deleting the course does to it
    finally:
        locker.rollback()
        locker.close()
        last.join(60)
    assert answer, "the last chunk got no answer"
    status, body = answer[0]
    assert status == 410 and body["error"]["code"] == "upload_lost", answer
    st = _status(stack, uid)
    assert st["state"] == "refused" and "lost" in st["error"], st
    assert requests.delete(f"{stack.base}/api/courses/{course}", headers=stack.admin, timeout=30).status_code == 204


def test_an_upload_can_be_cancelled_and_frees_its_place_at_once(stack):
    """DELETE /api/uploads/{id} (the hostile probe: an instructor at LC_UPLOADS_OPEN_MAX had to wait for
    one to expire): its bytes go, a chunk after it is 410, its place among the open uploads is free, and
    only who may manage its course may cancel it."""
    from web_helpers import mint

    cap = stack.settings.uploads_open_max
    who = mint(stack, "instructor", "canceller@example.edu")
    course = requests.post(f"{stack.base}/api/courses", json={"title": "Cancelled"}, headers=who, timeout=10).json()["id"]
    parts = stack.settings.media_dir / "uploads"

    def start(name):
        return requests.post(f"{stack.base}/api/courses/{course}/uploads", headers=who, timeout=10,
                             json={"filename": name, "size": 1000})

    opened = [start(f"{k}.mp4").json() for k in range(cap)]
    first = opened[0]["upload_id"]
    r = requests.put(f"{stack.base}/api/uploads/{first}", data=b"x" * 300, timeout=10,
                     headers={**who, "Content-Range": "bytes 0-299/1000"})
    assert r.status_code == 200 and (parts / f"{first}.part").exists(), r.text
    assert _err(start("one-more.mp4"), 429, "too_many_uploads")
    other = mint(stack, "instructor", "not-the-owner@example.edu")
    assert requests.delete(f"{stack.base}/api/uploads/{first}", headers=other, timeout=10).status_code in (403, 404)
    r = requests.delete(f"{stack.base}/api/uploads/{first}", headers=who, timeout=10)
    assert r.status_code == 200 and r.json()["state"] == "cancelled" and r.json()["offset"] == 0, r.text
    assert not (parts / f"{first}.part").exists()
    assert "already cancelled" in _err(requests.put(f"{stack.base}/api/uploads/{first}", data=b"x" * 10, timeout=10,
                                                    headers={**who, "Content-Range": "bytes 300-309/1000"}),
                                       410, "upload_closed")
    assert _err(requests.delete(f"{stack.base}/api/uploads/{first}", headers=who, timeout=10), 410, "upload_closed")
    assert start("after-cancel.mp4").status_code == 201  # its place was free at once
    assert requests.delete(f"{stack.base}/api/uploads/00000000-0000-4000-8000-000000000000", headers=who,
                           timeout=10).status_code == 404


def test_ingest_refuses_a_course_that_does_not_exist_and_keeps_nothing(stack):
    """Ingest reads no course (the gateway, which owns them, checks the course before it calls ingest;
    the operator CLI through the gateway's store): a course id naming no course, sent to ingest itself,
    fails at the insert of its row (the foreign key) with 404 ``not_found``, and nothing is kept."""
    import uuid as _uuid

    from web_helpers import VTT

    base, nobody = stack.settings.ingest_url, str(_uuid.uuid4())
    parts = set((stack.settings.media_dir / "uploads").glob("*"))
    folders = set((stack.settings.media_dir / "lectures").glob("*"))
    start = requests.post(f"{base}/v1/courses/{nobody}/uploads", json={"filename": "a.mp4", "size": 5000}, timeout=10)
    assert _err(start, 404, "not_found") == "Unknown course."
    plain = requests.post(f"{base}/v1/courses/{nobody}/lectures", timeout=60,
                          files={"captions": ("h.vtt", VTT.encode(), "text/vtt")}, data={"title": "Heaps"})
    assert "Unknown course" in _err(plain, 404, "not_found")
    with stack.db() as conn:
        for table in ("uploads", "lectures"):
            assert conn.execute(f"SELECT count(*) FROM {table} WHERE course_id=%s", (nobody,)).fetchone()[0] == 0
    assert set((stack.settings.media_dir / "uploads").glob("*")) == parts, "the refused start left its bytes"
    assert not list((stack.settings.media_dir / "incoming").glob("form-*")), "the refused upload left its bytes"
    assert set((stack.settings.media_dir / "lectures").glob("*")) == folders, "the refused upload left a lecture folder"
