"""Media in object storage (``LC_MEDIA_URL=s3://...``) through the whole pipeline, against moto's
S3 server started on a free loopback port: upload → the objects are in the bucket → ready (the
workers read local copies of the objects) → the web copy is an object too → the player's /video
redirects to a presigned URL that answers Range → ask cites the lecture → an event naming another
lecture's object is refused → deleting the lecture and the course removes their objects.
Its own stack (real NATS, Postgres, ffmpeg, faster-whisper), with the AWS_* variables set."""

from __future__ import annotations

import os
import time
import uuid

import pytest
import requests

from integration.test_event_validation import UPLOADED_CONSUMERS, _publish, _wait_dead_lettered
from lecturecopilot import bus
from lecturecopilot.events.v1 import events_pb2 as ev

pytestmark = pytest.mark.slow

PREFIX = "lc/media"
VTT = b"WEBVTT\n\n00:01.000 --> 00:06.000\nCounting sort counts how many times each key appears.\n"


@pytest.fixture(scope="module")
def s3stack(tmp_path_factory):
    """A stack of its own with media in moto's S3 server, and that server. Its own nats-server
    (``LC_TEST_NATS=embedded``, as tests/integration/test_stack_lifecycle.py does): on the machine's
    NATS it would drop the session stack's stream (ephemeral drops every ``lecture.*`` stream)."""
    from fakes.s3_server import S3Server
    from lecturecopilot.stack import ephemeral

    s3 = S3Server()
    mode = os.environ.get("LC_TEST_NATS")
    os.environ["LC_TEST_NATS"] = "embedded"
    try:
        env = {**s3.env, "LC_MEDIA_URL": f"s3://{s3.bucket}/{PREFIX}"}
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
