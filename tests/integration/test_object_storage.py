"""Media in object storage (``LC_MEDIA_URL=s3://...``) through the whole pipeline, against moto's
S3 server started on a free loopback port: upload → the objects are in the bucket → ready (the
workers read local copies of the objects) → the web copy is an object too → the player's /video
redirects to a presigned URL that answers Range → ask cites the lecture → an event naming another
lecture's object is refused → deleting the lecture and the course removes their objects; resumable
uploads whose chunks are objects; what races and crashes leave (a web copy landing after its lecture
was deleted, ingest killed mid-upload, then its sweep of the leftovers); a presigned URL that expires
after ``LC_VIDEO_URL_S`` and the player in Chromium asking for a fresh one.
Its own stack (real NATS, Postgres, ffmpeg, faster-whisper), with the AWS_* variables set; moto's
server is fronted by ``tests/fakes/s3_server.py``, which refuses expired presigned URLs as real stores
do and lets a test hold a request (to stop a client mid-upload)."""

from __future__ import annotations

import os
import time
import uuid

import pytest
import requests

from integration.test_event_validation import UPLOADED_CONSUMERS, _publish, _wait_dead_lettered
from lecturecopilot import bus
from lecturecopilot.events.v1 import events_pb2 as ev
from web_helpers import blocked_at_lecture_insert

pytestmark = pytest.mark.slow

PREFIX = "lc/media"
MIN_CHUNK = 5  # LC_UPLOAD_MIN_CHUNK_BYTES of this stack (the smallest chunk the tests below send)
VIDEO_URL_S = 4  # LC_VIDEO_URL_S of this stack
VTT = b"WEBVTT\n\n00:01.000 --> 00:06.000\nCounting sort counts how many times each key appears.\n"


@pytest.fixture(scope="module")
def s3stack(tmp_path_factory):
    """A stack of its own with media in moto's S3 server, and that server. Its own nats-server
    (``LC_TEST_NATS=embedded``, as tests/integration/test_stack_lifecycle.py does): on the machine's
    NATS it would drop the session stack's stream (ephemeral drops every ``lecture.*`` stream)."""
    from fakes.s3_server import S3Server
    from lecturecopilot_ops.stack import ephemeral

    s3 = S3Server()
    mode = os.environ.get("LC_TEST_NATS")
    os.environ["LC_TEST_NATS"] = "embedded"
    try:
        # the synthetic videos are small: a minimum of MIN_CHUNK bytes (not 5 MiB) keeps their chunks legal
        # presigned video URLs of VIDEO_URL_S seconds, so that one expires within a test
        env = {**s3.env, "LC_MEDIA_URL": f"s3://{s3.bucket}/{PREFIX}", "LC_UPLOAD_MIN_CHUNK_BYTES": str(MIN_CHUNK),
               "LC_VIDEO_URL_S": str(VIDEO_URL_S)}
        with ephemeral(tmp_path_factory.mktemp("lc-s3"), extra_env=env) as eph:
            yield eph, s3
    finally:
        if mode is None:
            os.environ.pop("LC_TEST_NATS", None)
        else:
            os.environ["LC_TEST_NATS"] = mode
        s3.close()


def _row(eph, lecture_id) -> dict:
    import psycopg
    from psycopg.rows import dict_row

    with psycopg.connect(eph.db_url, autocommit=True, row_factory=dict_row) as conn:
        return conn.execute("SELECT media_path, web_path, captions_path FROM lectures WHERE id=%s",
                            (lecture_id,)).fetchone()


def _upload(eph, course, files, title) -> str:
    r = requests.post(f"{eph.base}/api/courses/{course}/lectures", headers=eph.admin, files=files,
                      data={"title": title}, timeout=120)
    assert r.status_code == 202, r.text
    return r.json()["lecture_id"]


def test_a_lecture_goes_through_object_storage_and_its_deletion_removes_the_objects(s3stack, synth_video):
    eph, s3 = s3stack
    res, _ = synth_video
    course = eph.create_course("Algorithms (object storage)")
    with open(res.path, "rb") as f:
        lid = _upload(eph, course, {"video": ("lecture.mp4", f, "video/mp4")}, "Sorting")
    folder = f"{PREFIX}/lectures/{lid}/"
    assert s3.keys(folder) == [folder + "source.mp4"]  # in the bucket before the answer came back
    assert _row(eph, lid)["media_path"] == f"s3://{s3.bucket}/{folder}source.mp4"
    assert eph.wait_ready(lid)["status"] == "ready"
    deadline = time.time() + 120
    while not (_row(eph, lid)["web_path"] or "").startswith("s3://") and time.time() < deadline:
        time.sleep(0.3)
    assert _row(eph, lid)["web_path"] == f"s3://{s3.bucket}/{folder}web.mp4"
    assert sorted(s3.keys(folder)) == [folder + "source.mp4", folder + "web.mp4"]
    # the web copy left no local file behind (the player is redirected to the object), the source's copy stays
    local = eph.settings.media_dir / "lectures" / lid
    assert not (local / "web.mp4").exists() and (local / "source.mp4").is_file()

    r = requests.get(f"{eph.base}/api/lectures/{lid}/video", allow_redirects=False, timeout=10)
    assert r.status_code == 302 and r.headers["Location"].startswith(f"{s3.endpoint}/{s3.bucket}/{folder}web.mp4?")
    page = requests.get(f"{eph.base}/", timeout=10)
    assert f"media-src 'self' {s3.endpoint};" in page.headers["Content-Security-Policy"]
    r = requests.get(f"{eph.base}/api/lectures/{lid}/video", headers={"Range": "bytes=0-99"}, timeout=10)
    assert r.status_code == 206 and len(r.content) == 100 and r.content[4:8] == b"ftyp"
    assert r.headers["Content-Range"].startswith("bytes 0-99/") and r.headers["Content-Type"] == "video/mp4"

    r = requests.post(f"{eph.base}/api/courses/{course}/ask",
                      json={"question": "How does merge sort combine the two sorted halves?"}, timeout=60)
    assert r.status_code == 200 and not r.json()["declined"], r.text
    assert {c["lecture_id"] for s in r.json()["sentences"] for c in s["citations"]} == {lid}

    other = _upload(eph, course, {"captions": ("c.vtt", VTT, "text/vtt")}, "Captions only")
    assert eph.wait_ready(other)["status"] == "ready"
    assert s3.keys(f"{PREFIX}/lectures/{other}/") == [f"{PREFIX}/lectures/{other}/captions.vtt"]
    # a crafted event naming another lecture's object (or another bucket's) is dead-lettered
    for uri in (f"s3://{s3.bucket}/{folder}source.mp4", f"s3://other-bucket/{PREFIX}/lectures/{other}/x.mp4"):
        crafted = ev.LectureUploaded(lecture_id=other, course_id=course, title="Captions only", number=2,
                                     media_uri=uri).SerializeToString()
        _publish(eph, bus.UPLOADED, crafted, f"crafted-{uuid.uuid4()}")
        found = _wait_dead_lettered(eph, crafted, UPLOADED_CONSUMERS)
        assert all("media_uri" in h.get(bus.DEAD_LETTER_REASON, "") for h in found), found

    assert requests.delete(f"{eph.base}/api/lectures/{lid}", headers=eph.admin, timeout=30).status_code == 204
    assert s3.keys(folder) == []
    assert s3.keys(f"{PREFIX}/lectures/{other}/")  # another lecture's objects stay
    assert requests.delete(f"{eph.base}/api/courses/{course}", headers=eph.admin, timeout=60).status_code == 204
    assert s3.keys(PREFIX + "/") == []


# -- resumable uploads with object storage: the chunks are objects, no shared folder (issue #15) --

def _put(eph, uid, data: bytes, first: int, total: int):
    return requests.put(f"{eph.base}/api/uploads/{uid}", data=data, timeout=60,
                        headers={**eph.admin, "Content-Range": f"bytes {first}-{first + len(data) - 1}/{total}"})


def _status(eph, uid) -> dict:
    r = requests.get(f"{eph.base}/api/uploads/{uid}", headers=eph.admin, timeout=60)
    assert r.status_code == 200, r.text
    return r.json()


def _start_upload(eph, course, size, **extra) -> str:
    r = requests.post(f"{eph.base}/api/courses/{course}/uploads", headers=eph.admin, timeout=30,
                      json={"filename": "lecture.mp4", "size": size, **extra})
    assert r.status_code == 201, r.text
    return r.json()["upload_id"]


def _cut_off(eph, uid, data: bytes, first: int, total: int) -> None:
    """Sends a chunk's headers and half its body, then drops the connection (a client that lost it)."""
    import socket
    from urllib.parse import urlsplit

    u = urlsplit(eph.base)
    head = (f"PUT /api/uploads/{uid} HTTP/1.1\r\nHost: {u.netloc}\r\nAuthorization: {eph.admin['Authorization']}\r\n"
            f"Content-Range: bytes {first}-{first + len(data) - 1}/{total}\r\nContent-Length: {len(data)}\r\n\r\n")
    with socket.create_connection((u.hostname, u.port), timeout=10) as sock:
        sock.sendall(head.encode() + data[: len(data) // 2])
        time.sleep(0.5)


def _uploads_dir(eph):
    return eph.settings.media_dir / "uploads"


def _open_upload(s3stack, synth_video, course_title: str, **start):
    """``(eph, s3, data, n, course, uid)``: the synthetic video's bytes and a resumable upload of
    them opened in a new course (``start``: title, number)."""
    eph, s3 = s3stack
    data = synth_video[0].path.read_bytes()
    course = eph.create_course(course_title)
    return eph, s3, data, len(data), course, _start_upload(eph, course, len(data), **start)


def test_a_resumable_upload_keeps_its_chunks_in_the_bucket_and_resumes(s3stack, synth_video):
    eph, s3, data, n, course, uid = _open_upload(s3stack, synth_video, "Resumable (object storage)",
                                                 title="Chunked into objects", number=1)
    k = n // 3
    folder = f"{PREFIX}/uploads/{uid}/"
    assert s3.keys(folder) == [folder + "open"]
    assert _put(eph, uid, data[:k], 0, n).json()["offset"] == k
    assert sorted(s3.keys(folder)) == [folder + f"{0:020d}", folder + "open"]
    assert not list(_uploads_dir(eph).glob(f"{uid}*"))  # no byte of it on a local (or shared) folder
    # a chunk cut off mid-body leaves no object and the offset where it was
    _cut_off(eph, uid, data[k:2 * k], k, n)
    deadline = time.time() + 30
    while time.time() < deadline and _status(eph, uid)["offset"] != k:
        time.sleep(0.2)
    assert _status(eph, uid)["offset"] == k and len(s3.keys(folder)) == 2
    r = _put(eph, uid, data[k + 5:k + 10], k + 5, n)
    while r.status_code == 409 and r.json()["error"]["code"] == "busy" and time.time() < deadline:
        time.sleep(0.2)  # the dropped chunk's request may still hold the upload's lock a moment
        r = _put(eph, uid, data[k + 5:k + 10], k + 5, n)
    assert r.status_code == 409 and f"start at byte {k}" in r.json()["error"]["message"], r.text
    # resumed from the offset the server gave, in two more chunks
    assert _put(eph, uid, data[k:2 * k], k, n).json()["offset"] == 2 * k
    last = _put(eph, uid, data[2 * k:], 2 * k, n)
    assert last.status_code == 202, last.text
    lid = last.json()["lecture_id"]
    assert s3.keys(folder) == []  # the chunk objects went once the lecture was registered
    assert s3.client().get_object(Bucket=s3.bucket, Key=f"{PREFIX}/lectures/{lid}/source.mp4")["Body"].read() == data
    assert not list(_uploads_dir(eph).glob(f"{uid}*"))
    assert eph.wait_ready(lid)["status"] == "ready"
    assert _put(eph, uid, data[-1:], n - 1, n).status_code == 410


def test_a_chunk_under_the_minimum_is_refused_but_a_short_last_one_is_taken(s3stack, synth_video):
    """Review finding 2: a chunk under LC_UPLOAD_MIN_CHUNK_BYTES that is not the last is 400
    chunk_too_small (naming the minimum) and leaves no object; the last chunk may be shorter."""
    eph, s3, data, n, course, uid = _open_upload(s3stack, synth_video, "Small chunks (object storage)", title="Small chunks", number=1)
    folder = f"{PREFIX}/uploads/{uid}/"
    r = _put(eph, uid, data[:MIN_CHUNK - 1], 0, n)
    assert r.status_code == 400 and r.json()["error"]["code"] == "chunk_too_small", r.text
    assert f"at least {MIN_CHUNK} bytes" in r.json()["error"]["message"]
    assert s3.keys(folder) == [folder + "open"] and _status(eph, uid)["offset"] == 0
    assert _put(eph, uid, data[: n - (MIN_CHUNK - 1)], 0, n).json()["offset"] == n - (MIN_CHUNK - 1)
    last = _put(eph, uid, data[n - (MIN_CHUNK - 1):], n - (MIN_CHUNK - 1), n)  # shorter than the minimum
    assert last.status_code == 202 and last.json()["state"] == "queued", last.text
    assert s3.keys(folder) == []
    lid = last.json()["lecture_id"]
    assert s3.client().get_object(Bucket=s3.bucket, Key=f"{PREFIX}/lectures/{lid}/source.mp4")["Body"].read() == data
    assert eph.wait_ready(lid)["status"] == "ready"


def test_an_interrupted_finish_and_an_idle_upload_with_object_storage(s3stack, synth_video):
    """The last chunk's object landed, then ingest died before it answered: the next status GET
    finishes the upload. The upload's lock holds across processes. An idle upload expires and its
    chunk objects go; an open one goes with its course."""
    import psycopg

    eph, s3, data, n, course, uid = _open_upload(s3stack, synth_video, "Finished later (object storage)", title="Finished later", number=1)
    assert _put(eph, uid, data[: n - 1000], 0, n).json()["offset"] == n - 1000
    s3.client().put_object(Bucket=s3.bucket, Key=f"{PREFIX}/uploads/{uid}/{n - 1000:020d}", Body=data[n - 1000:])
    st = _status(eph, uid)
    assert st["state"] == "queued" and st["lecture_id"] and st["offset"] == n, st
    assert s3.keys(f"{PREFIX}/uploads/{uid}/") == []
    assert s3.keys(f"{PREFIX}/lectures/{st['lecture_id']}/") == [f"{PREFIX}/lectures/{st['lecture_id']}/source.mp4"]

    idle = _start_upload(eph, course, 1000)
    assert _put(eph, idle, b"x" * 300, 0, 1000).json()["offset"] == 300
    # one writer per upload across processes: while another session holds its lock, a chunk is refused
    with psycopg.connect(eph.db_url, autocommit=True) as holder:
        assert holder.execute("SELECT pg_try_advisory_lock(72003, hashtext(%s))", (idle,)).fetchone()[0]
        r = _put(eph, idle, b"y" * 200, 300, 1000)
        assert r.status_code == 409 and r.json()["error"]["code"] == "busy", r.text
    assert _put(eph, idle, b"y" * 200, 300, 1000).json()["offset"] == 500
    assert len(s3.keys(f"{PREFIX}/uploads/{idle}/")) == 3
    with psycopg.connect(eph.db_url, autocommit=True) as conn:
        conn.execute("UPDATE uploads SET active_at = active_at - make_interval(secs => %s) WHERE id=%s",
                     (eph.settings.upload_idle_s + 5, idle))
    st = _status(eph, idle)
    assert st["state"] == "expired" and "no chunk arrived" in st["error"]
    assert s3.keys(f"{PREFIX}/uploads/{idle}/") == []
    # an upload still receiving goes with its course, objects included
    gone = _start_upload(eph, course, 1000)
    assert _put(eph, gone, b"x" * 100, 0, 1000).json()["offset"] == 100
    assert requests.delete(f"{eph.base}/api/courses/{course}", headers=eph.admin, timeout=60).status_code == 204
    assert s3.keys(f"{PREFIX}/uploads/") == []


def test_ingest_killed_while_finishing_an_s3_upload_finishes_it_after_restart(s3stack, synth_video):
    """SIGKILL of ingest in the middle of a finish (held at the lecture's INSERT by a table lock this
    test takes): Postgres drops the upload's lock with the dead process's connection, and the
    restarted ingest's sweep finishes the upload from its chunk objects, once."""
    import signal
    import threading

    import psycopg

    from lecturecopilot_ops import stack as stack_mod

    eph, s3, data, n, course, uid = _open_upload(s3stack, synth_video, "Killed while finishing (object storage)", title="Survivor", number=7)
    assert _put(eph, uid, data[: n // 2], 0, n).json()["offset"] == n // 2
    locker = psycopg.connect(eph.db_url)
    locker.execute("LOCK TABLE lectures IN EXCLUSIVE MODE")  # the finish blocks at its INSERT
    last = threading.Thread(target=lambda: _put(eph, uid, data[n // 2:], n // 2, n), daemon=True)
    try:
        last.start()
        with psycopg.connect(eph.db_url, autocommit=True) as conn:
            waiting = blocked_at_lecture_insert(conn)
            os.killpg(int((eph.settings.data_dir / "run" / "ingest.pid").read_text()), signal.SIGKILL)
            for (pid,) in waiting:
                conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
    finally:
        locker.rollback()
        locker.close()
        last.join(30)
        stack_mod.up(eph.settings, quiet=True)  # the new ingest's first sweep finishes the upload
    deadline = time.time() + 60
    while time.time() < deadline and (st := _status(eph, uid))["state"] == "finishing":
        time.sleep(0.2)
    assert st["state"] == "queued" and st["lecture_id"], st
    assert s3.keys(f"{PREFIX}/uploads/{uid}/") == []
    assert eph.wait_ready(st["lecture_id"])["status"] == "ready"
    lectures = requests.get(f"{eph.base}/api/courses/{course}", timeout=10).json()["lectures"]
    assert [(lec["id"], lec["title"]) for lec in lectures] == [(st["lecture_id"], "Survivor")]


# -- leftovers: what races and crashes left in the bucket and the spool folders (issue 31, item 3) --

def _ingest_pid(eph) -> int:
    return int((eph.settings.data_dir / "run" / "ingest.pid").read_text())


def _kill_ingest(eph) -> None:
    """SIGKILL of ingest's process group, waited for."""
    import signal

    from lecturecopilot_ops import stack as stack_mod

    from lecturecopilot.netports import port_free

    pid = _ingest_pid(eph)
    os.killpg(pid, signal.SIGKILL)
    deadline = time.time() + 10
    # the group's other processes may hold the listening socket a moment after its leader is gone: a start
    # before they let go finds the port taken (seen once in a full run)
    while (stack_mod.pid_alive(pid) or not port_free(eph.settings.ingest_host, eph.settings.ingest_port)) \
            and time.time() < deadline:
        time.sleep(0.05)


def _start_ingest(eph, **env: str) -> None:
    """Starts ingest again (the other services run on), with ``env`` added to its environment."""
    from lecturecopilot_ops import stack as stack_mod

    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        stack_mod.up(eph.settings, quiet=True)
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _eventually(check, timeout_s: float = 60) -> bool:
    deadline = time.time() + timeout_s
    while not check():
        if time.time() > deadline:
            return False
        time.sleep(0.3)
    return True


def test_a_lecture_deleted_while_its_web_copy_goes_up_keeps_no_object(s3stack, synth_video):
    """Deleting a lecture while the web-copy stage sends ``web.mp4`` up (its PUT held by the store
    until the deletion is done, so the object lands after the lecture's objects were deleted): the
    stage finds no row to name it and deletes what it wrote; nothing stays under the lecture's prefix."""
    eph, s3 = s3stack
    course = eph.create_course("Deleted during its web copy (object storage)")
    with s3.hold("PUT", "/web.mp4") as web:
        with open(synth_video[0].path, "rb") as f:
            lid = _upload(eph, course, {"video": ("lecture.mp4", f, "video/mp4")}, "Deleted while copied")
        folder = f"{PREFIX}/lectures/{lid}/"
        assert web.arrived.wait(180), "the web copy never went up"
        assert web.paths[0].endswith(f"/{folder}web.mp4")
        assert requests.delete(f"{eph.base}/api/lectures/{lid}", headers=eph.admin, timeout=30).status_code == 204
        assert s3.keys(folder) == []
        web.release()
        assert web.answered.wait(30)  # web.mp4 is in the bucket now, after the lecture's deletion
    assert _eventually(lambda: s3.keys(folder) == [], 30), s3.keys(folder)
    assert s3.unfinished(folder) == []


def test_ingest_killed_mid_upload_leaves_nothing_once_its_sweeper_ran(s3stack, synth_video):
    """SIGKILL of ingest while it sends a plain upload's source up (its PUT held by the store) and a
    16 MiB resumable chunk up in parts (a part held) leaves the source in its local lecture folder,
    the chunk spooled in ``uploads/``, an unfinished multipart upload, and maybe the source's object
    with no lecture row; an object of a lecture with no row (a web copy a crash kept from being
    removed again) and an unfinished upload of a live lecture's web copy (a worker killed) are there
    too. Started again, with ``LC_UPLOAD_IDLE_S`` of 2 s (the age past which these count as left
    over), ingest's sweeper aborts the multipart uploads and removes the files and the objects, at
    start and periodically; a live lecture's objects stay."""
    import threading

    eph, s3 = s3stack
    course = eph.create_course("Killed mid-upload (object storage)")
    live = _upload(eph, course, {"captions": ("c.vtt", VTT, "text/vtt")}, "Stays")
    assert eph.wait_ready(live)["status"] == "ready"
    orphan = str(uuid.uuid4())
    s3.client().put_object(Bucket=s3.bucket, Key=f"{PREFIX}/lectures/{orphan}/web.mp4", Body=b"a web copy")
    # what a worker killed while its web copy went up in parts leaves beside a live lecture's objects
    s3.client().create_multipart_upload(Bucket=s3.bucket, Key=f"{PREFIX}/lectures/{live}/web.mp4")
    size = 32 << 20
    uid = _start_upload(eph, course, size, title="Cut off", number=9)
    media = eph.settings.media_dir
    requests_made = []
    try:
        with s3.hold("PUT", "/source.mp4") as source, s3.hold("PUT", f"/uploads/{uid}/", "partNumber=") as part:
            def plain():
                with open(synth_video[0].path, "rb") as f:
                    requests_made.append(requests.post(f"{eph.base}/api/courses/{course}/lectures", headers=eph.admin,
                                                       files={"video": ("lecture.mp4", f, "video/mp4")},
                                                       data={"title": "Killed"}, timeout=120))

            def chunk():
                requests_made.append(_put(eph, uid, os.urandom(16 << 20), 0, size))

            threads = [threading.Thread(target=t, daemon=True) for t in (plain, chunk)]
            for t in threads:
                t.start()
            assert source.arrived.wait(60) and part.arrived.wait(60)
            _kill_ingest(eph)
        for t in threads:
            t.join(60)
        lid = source.paths[0].split("/lectures/", 1)[1].split("/", 1)[0]
        # what the crash left: the spooled source and chunk, a multipart upload no one will finish
        assert (media / "lectures" / lid / "source.mp4").is_file()
        assert list((media / "uploads").glob(f"{uid}.*.chunk"))
        assert s3.unfinished(f"{PREFIX}/uploads/{uid}/") and s3.unfinished(f"{PREFIX}/lectures/{live}/")
        live_keys = s3.keys(f"{PREFIX}/lectures/{live}/")
        assert live_keys
        _start_ingest(eph, LC_UPLOAD_IDLE_S="2")

        def swept() -> bool:
            return (s3.unfinished(PREFIX + "/") == [] and not list((media / "uploads").glob("*.chunk"))
                    and not (media / "lectures" / lid).exists() and s3.keys(f"{PREFIX}/lectures/{lid}/") == []
                    and s3.keys(f"{PREFIX}/lectures/{orphan}/") == [])

        assert _eventually(swept, 60), (s3.unfinished(PREFIX + "/"), list((media / "uploads").glob("*")),
                                        (media / "lectures" / lid).exists(), s3.keys(f"{PREFIX}/lectures/{lid}/"),
                                        s3.keys(f"{PREFIX}/lectures/{orphan}/"))
        assert s3.keys(f"{PREFIX}/lectures/{live}/") == live_keys
        r = requests.get(f"{eph.base}/api/lectures/{live}", timeout=10)
        assert r.status_code == 200 and r.json()["status"] == "ready"
    finally:
        _kill_ingest(eph)
        _start_ingest(eph)  # as it was: LC_UPLOAD_IDLE_S of the stack


# -- the player's presigned URL lives LC_VIDEO_URL_S (issue 31, item 4) --

def test_a_video_url_expires_after_its_lifetime_and_the_player_asks_for_a_fresh_one(s3stack, synth_video):
    """/video's redirect (never cached) is to a URL valid ``LC_VIDEO_URL_S``: past it the store
    refuses it, and /video gives a fresh one. In a browser, the player that meets a refused URL
    while playing the lecture asks /video again and plays on from where it was."""
    import shutil
    from urllib.parse import parse_qs, urlsplit

    from playwright.sync_api import sync_playwright

    eph, s3 = s3stack
    course = eph.create_course("Expiring video URLs (object storage)")
    with open(synth_video[0].path, "rb") as f:
        lid = _upload(eph, course, {"video": ("lecture.mp4", f, "video/mp4")}, "Expiring")
    assert eph.wait_ready(lid)["status"] == "ready"
    assert _eventually(lambda: (_row(eph, lid)["web_path"] or "").startswith("s3://"), 120)
    r = requests.get(f"{eph.base}/api/lectures/{lid}/video", allow_redirects=False, timeout=10)
    assert r.status_code == 302 and r.headers["Cache-Control"] == "no-store"
    url = r.headers["Location"]
    assert parse_qs(urlsplit(url).query)["X-Amz-Expires"] == [str(VIDEO_URL_S)]
    assert requests.get(url, headers={"Range": "bytes=0-99"}, timeout=10).status_code == 206
    time.sleep(VIDEO_URL_S + 1.5)
    r = requests.get(url, headers={"Range": "bytes=0-99"}, timeout=10)
    assert r.status_code == 403 and b"Request has expired" in r.content
    r = requests.get(f"{eph.base}/api/lectures/{lid}/video", headers={"Range": "bytes=0-99"}, timeout=10)
    assert r.status_code == 206 and r.url != url  # a fresh URL

    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=[
            "--headless=new", "--no-sandbox", "--disable-gpu", "--mute-audio",
            "--autoplay-policy=no-user-gesture-required"])
        try:
            page = browser.new_page()
            page.goto(f"{eph.base}/courses/{course}?lecture={lid}")
            page.wait_for_function("() => document.querySelector('#player').readyState >= 1", timeout=30000)
            page.evaluate("() => { document.querySelector('#player').currentTime = 3; }")
            page.wait_for_function("() => { const p = document.querySelector('#player'); "
                                   "return !p.seeking && Math.abs(p.currentTime - 3) < 0.1; }", timeout=30000)
            asked = []
            page.on("request", lambda req: asked.append(req.url) if f"/api/lectures/{lid}/video" in req.url else None)
            # what the player meets when its URL's time is up: the store refuses the next request
            page.evaluate("url => { document.querySelector('#player').src = url; }", url)
            page.wait_for_function(f"""() => {{ const p = document.querySelector('#player');
                return p.readyState >= 1 && p.src.endsWith('/api/lectures/{lid}/video'); }}""", timeout=30000)
            assert asked, "the player did not ask /video again"
            assert "no video" not in page.inner_text("#now-playing")
            assert abs(page.evaluate("() => document.querySelector('#player').currentTime") - 3) < 0.5
        finally:
            browser.close()
