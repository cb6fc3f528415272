"""``lecture.uploaded`` is a public contract: crafted events published straight to JetStream must
not read files outside their lecture's folder of the media store, nor change a lecture they do
not belong to (issue #12, items 2 and 3). Each one lands on ``lecture.dead_letter`` with its
reason, and the target lecture's row (status, error, web copy, transcript) is unchanged. Errors
users read are our sentences, never the driver's text. Real NATS JetStream, Postgres, ffmpeg."""

from __future__ import annotations

import asyncio
import shutil
import time
import uuid
from pathlib import Path

import pytest
import requests

from lecturecopilot import bus
from lecturecopilot.events.v1 import events_pb2 as ev

pytestmark = pytest.mark.slow

SECRET_VTT = (b"WEBVTT\n\n00:01.000 --> 00:06.000\nThe vault combination is seven three nine, "
              b"and this lecture is private.\n")
OWN_VTT = (b"WEBVTT\n\n00:01.000 --> 00:08.000\nCounting sort is a linear time sorting algorithm "
           b"for small integer keys.\n")
UPLOADED_CONSUMERS = {"transcribe", "webcopy"}  # both consume lecture.uploaded


def _upload(stack, course, title, files):
    r = requests.post(f"{stack.base}/api/courses/{course}/lectures", headers=stack.admin, files=files,
                      data={"title": title}, timeout=120)
    assert r.status_code == 202, r.text
    return r.json()["lecture_id"]


def _row(stack, lecture_id) -> dict:
    from psycopg.rows import dict_row

    with stack.db() as conn, conn.cursor(row_factory=dict_row) as cur:
        return cur.execute("SELECT * FROM lectures WHERE id=%s", (lecture_id,)).fetchone()


def _snapshot(stack, lecture_id):
    """Everything a crafted event could change about a lecture, including its transcript."""
    with stack.db() as conn:
        row = conn.execute("SELECT status, stage, progress, error, web_path, media_path, captions_path, generation, "
                           "transcribed_at, slides_read_at, indexed_at, updated_at FROM lectures WHERE id=%s",
                           (lecture_id,)).fetchone()
        words = conn.execute("SELECT word FROM transcript_words WHERE lecture_id=%s ORDER BY idx",
                             (lecture_id,)).fetchall()
    return row, [w[0] for w in words]


@pytest.fixture(scope="module")
def lectures(stack, synth_video):
    """A private course's captions-only lecture (its text is the secret) and one's own lecture with
    a video and captions, both ready, the web copy made."""
    res, _ = synth_video
    private = stack.create_course("Another instructor's private course")
    other = _upload(stack, private, "Private", {"captions": ("secret.vtt", SECRET_VTT, "text/vtt")})
    mine = stack.create_course("My course")
    with open(res.path, "rb") as f:
        own = _upload(stack, mine, "Mine", {"video": ("lecture.mp4", f, "video/mp4"),
                                            "captions": ("own.vtt", OWN_VTT, "text/vtt")})
    assert stack.wait_ready(other)["status"] == "ready" and stack.wait_ready(own)["status"] == "ready"
    requests.patch(f"{stack.base}/api/courses/{private}", json={"visibility": "private"}, headers=stack.admin,
                   timeout=10).raise_for_status()
    deadline = time.time() + 120
    while _row(stack, own)["web_path"] is None and time.time() < deadline:
        time.sleep(0.3)
    assert _row(stack, own)["web_path"], "no web copy"
    return {"private": private, "other": other, "mine": mine, "own": own}


def _publish(stack, subject: str, payload: bytes, msg_id: str) -> None:
    import nats

    async def go():
        nc = await nats.connect(stack.nats_url)
        try:
            ack = await nc.jetstream().publish(subject, payload, stream=stack.settings.stream,
                                               headers={"Nats-Msg-Id": msg_id})
            assert not ack.duplicate
        finally:
            await nc.close()

    asyncio.run(go())


def _dead_letters(stack, payload: bytes) -> list[dict]:
    """Headers of every message on ``lecture.dead_letter`` whose body is ``payload``."""
    import nats

    async def go():
        nc = await nats.connect(stack.nats_url)
        found = []
        try:
            sub = await nc.jetstream().subscribe(bus.DEAD_LETTER, stream=stack.settings.stream, ordered_consumer=True)
            while True:
                try:
                    msg = await sub.next_msg(timeout=1.0)
                except Exception:
                    break
                if msg.data == payload:
                    found.append(dict(msg.headers or {}))
        finally:
            await nc.close()
        return found

    return asyncio.run(go())


def _wait_dead_lettered(stack, payload: bytes, consumers: set[str], timeout_s: float = 45) -> list[dict]:
    deadline = time.time() + timeout_s
    found: list[dict] = []
    while time.time() < deadline:
        found = _dead_letters(stack, payload)
        if {h.get(bus.DEAD_LETTER_CONSUMER) for h in found} >= consumers:
            return found
        time.sleep(0.5)
    raise AssertionError(f"not dead-lettered by {consumers}: {found}")


def _refused(stack, target: str, event, *reason_words: str, subject: str = bus.UPLOADED,
             consumers: set[str] = UPLOADED_CONSUMERS) -> list[dict]:
    """Publishes ``event`` with a fresh id, waits until each consumer dead-lettered it, checks the
    reasons and that lecture ``target`` did not change."""
    before = _snapshot(stack, target)
    payload = event.SerializeToString()
    _publish(stack, subject, payload, f"crafted-{uuid.uuid4()}")
    found = _wait_dead_lettered(stack, payload, consumers)
    for headers in found:
        assert headers.get(bus.DEAD_LETTER_SUBJECT) == subject
        reason = headers.get(bus.DEAD_LETTER_REASON, "")
        assert all(w in reason for w in reason_words), headers
    time.sleep(1.0)
    assert _snapshot(stack, target) == before
    return found


def _uploaded(lectures, stack, **fields) -> ev.LectureUploaded:
    own = _row(stack, lectures["own"])
    base = {"lecture_id": lectures["own"], "course_id": lectures["mine"], "title": "Mine", "number": 1,
            "media_uri": Path(own["media_path"]).as_uri()}
    return ev.LectureUploaded(**{**base, **fields})


def test_captions_of_another_courses_lecture_are_refused(stack, lectures):
    other_captions = Path(_row(stack, lectures["other"])["captions_path"])
    assert other_captions.is_file()
    _refused(stack, lectures["own"], _uploaded(lectures, stack, captions_uri=other_captions.as_uri()),
             "captions_uri", "not inside")
    r = requests.get(f"{stack.base}/api/lectures/{lectures['own']}/transcript", timeout=10)
    assert r.status_code == 200 and "vault" not in r.text


def test_a_path_through_dotdot_or_a_symlink_into_another_lecture_is_refused(stack, lectures):
    other_captions = Path(_row(stack, lectures["other"])["captions_path"])
    own_dir = Path(_row(stack, lectures["own"])["media_path"]).parent
    dotdot = f"file://{own_dir}/../{lectures['other']}/{other_captions.name}"
    _refused(stack, lectures["own"], _uploaded(lectures, stack, captions_uri=dotdot), "captions_uri", "not inside")
    link = own_dir / "notes.vtt"
    link.symlink_to(other_captions)
    try:
        _refused(stack, lectures["own"], _uploaded(lectures, stack, captions_uri=link.as_uri()), "not inside")
    finally:
        link.unlink()


def test_media_outside_the_store_is_refused_and_no_web_copy_is_written_beside_it(stack, lectures, synth_video,
                                                                                 tmp_path):
    res, _ = synth_video
    clip = tmp_path / "x" / "clip.mp4"
    clip.parent.mkdir()
    shutil.copy(res.path, clip)
    _refused(stack, lectures["own"], _uploaded(lectures, stack, media_uri=clip.as_uri()), "media_uri", "not inside")
    assert sorted(p.name for p in clip.parent.iterdir()) == ["clip.mp4"]
    _refused(stack, lectures["own"], _uploaded(lectures, stack, media_uri="s3://bucket/lecture.mp4"),
             "media_uri", "file://")


def test_a_lecture_failed_payload_on_lecture_uploaded_is_refused(stack, lectures):
    """Protobuf decodes it as a LectureUploaded (stage → media_uri, reason → captions_uri)."""
    for stage, reason in (("transcribing", "x"), ("", "")):
        wrong = ev.LectureFailed(lecture_id=lectures["own"], course_id=lectures["mine"], stage=stage, reason=reason)
        _refused(stack, lectures["own"], wrong, "uri")
    assert _row(stack, lectures["own"])["status"] == "ready"


def test_a_course_id_that_is_not_a_uuid_is_refused(stack, lectures):
    _refused(stack, lectures["own"], _uploaded(lectures, stack, course_id="not-a-uuid"), "course_id", "not a UUID")
    assert _row(stack, lectures["own"])["error"] is None


def test_a_lecture_of_another_course_is_refused(stack, lectures):
    other = _row(stack, lectures["other"])
    event = ev.LectureUploaded(lecture_id=lectures["other"], course_id=lectures["mine"], title="Private", number=1,
                               captions_uri=Path(other["captions_path"]).as_uri())
    _refused(stack, lectures["other"], event, "not a lecture of course")
    # and a downstream event of one course's lecture published with another course's id
    wrong = ev.LectureTranscribed(lecture_id=lectures["other"], course_id=lectures["mine"], word_count=3)
    _refused(stack, lectures["other"], wrong, "not a lecture of course", subject=bus.TRANSCRIBED,
             consumers={"slides"})


def test_an_internal_error_reaches_users_as_our_sentence(stack):
    """The slide step hits a Postgres error (a trigger raising the very text the issue saw leak)
    on every attempt: the lecture fails with our sentence; the driver's text is for the logs and
    the dead-letter reason only."""
    title = f"Trigger {uuid.uuid4().hex[:8]}"
    with stack.db() as conn:
        conn.execute(f"""
            CREATE FUNCTION lc_test_fail_slides() RETURNS trigger AS $$
            BEGIN
              IF NEW.slides_read_at IS DISTINCT FROM OLD.slides_read_at AND NEW.title = '{title}' THEN
                RAISE EXCEPTION 'invalid input syntax for type uuid: "x"';
              END IF;
              RETURN NEW;
            END $$ LANGUAGE plpgsql""")
        conn.execute("CREATE TRIGGER lc_test_fail_slides BEFORE UPDATE ON lectures FOR EACH ROW "
                     "EXECUTE FUNCTION lc_test_fail_slides()")
    try:
        course = stack.create_course("Internal error")
        lecture = _upload(stack, course, title, {"captions": ("own.vtt", OWN_VTT, "text/vtt")})
        st = stack.wait_ready(lecture, timeout_s=120)
    finally:
        with stack.db() as conn:
            conn.execute("DROP TRIGGER lc_test_fail_slides ON lectures")
            conn.execute("DROP FUNCTION lc_test_fail_slides()")
    assert st["status"] == "failed", st
    assert st["error"] == "Slide reading failed after 3 attempts because of an internal error; retry the lecture."
    assert _row(stack, lecture)["error"] == st["error"]


def test_a_forged_lecture_failed_mails_nothing_of_its_own(stack, lectures):
    """``lecture.failed`` is a subject anyone on the bus may publish to: a forged one for a ready lecture
    sends no mail, and the words of an event never reach an instructor's inbox (the notice quotes the
    reason the lecture records, our sentence)."""
    own = lectures["own"]
    before = len(stack.mail.messages)
    forged = ev.LectureFailed(lecture_id=own, course_id=lectures["mine"], stage="transcribing",
                              reason="Your account is suspended: sign in at http://evil.example to keep it")
    _publish(stack, bus.FAILED, forged.SerializeToString(), f"forged-failed:{uuid.uuid4()}")
    time.sleep(6)  # the notice consumer has had its chance
    mails = stack.mail.messages[before:]
    assert not any("evil.example" in (m.get_payload(decode=True) or b"").decode(errors="replace") for m in mails)
    assert not any("could not be processed: Mine" in (m["Subject"] or "") for m in mails)
    assert _row(stack, own)["status"] == "ready"
