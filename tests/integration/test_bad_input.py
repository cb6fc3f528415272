"""Bad input gets a clear 4xx JSON error and leaves nothing half-written (real stack)."""

from __future__ import annotations

import asyncio
import subprocess
import uuid

import pytest
import requests

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def course(stack):
    return stack.create_course("Bad input course")


def _upload(stack, course, name, data: bytes, field="video", headers=None, form=None):
    return requests.post(f"{stack.base}/api/courses/{course}/lectures", headers=headers or stack.admin,
                         files={field: (name, data, "application/octet-stream")}, data={"title": "x", **(form or {})},
                         timeout=60)


def _assert_error(r, status, code):
    assert r.status_code == status, r.text
    assert r.headers["Content-Type"].startswith("application/json")
    err = r.json()["error"]
    assert err["code"] == code and err["message"]
    return err["message"]


def _assert_nothing_written(stack, course):
    with stack.db() as conn:
        n = conn.execute("SELECT count(*) FROM lectures WHERE course_id=%s", (course,)).fetchone()[0]
    assert n == 0
    lectures_dir = stack.settings.media_dir / "lectures"
    with stack.db() as conn:
        known = {str(r[0]) for r in conn.execute("SELECT id FROM lectures").fetchall()}
    leftovers = [p.name for p in lectures_dir.iterdir()] if lectures_dir.exists() else []
    assert set(leftovers) <= known, f"orphaned media folders: {set(leftovers) - known}"


def _lavfi(tmp_path, name, *args):
    out = tmp_path / name
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", *args, str(out)], check=True)
    return out.read_bytes()


def test_zero_byte_upload(stack, course):
    msg = _assert_error(_upload(stack, course, "empty.mp4", b""), 400, "empty_file")
    assert "empty" in msg
    _assert_nothing_written(stack, course)


def test_text_file_renamed_mp4(stack, course):
    msg = _assert_error(_upload(stack, course, "notes.mp4", b"these are my lecture notes\n" * 50), 422,
                        "unprocessable_media")
    assert "not a readable video" in msg
    _assert_nothing_written(stack, course)


def test_video_without_audio(stack, course, tmp_path):
    data = _lavfi(tmp_path, "silent.mp4", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=10", "-t", "2",
                  "-c:v", "libx264", "-pix_fmt", "yuv420p")
    msg = _assert_error(_upload(stack, course, "silent.mp4", data), 422, "unprocessable_media")
    assert "no audio" in msg
    _assert_nothing_written(stack, course)


def test_audio_only_file(stack, course, tmp_path):
    data = _lavfi(tmp_path, "voice.mp4", "-f", "lavfi", "-i", "sine=frequency=440", "-t", "2", "-c:a", "aac")
    msg = _assert_error(_upload(stack, course, "voice.mp4", data), 422, "unprocessable_media")
    assert "no video" in msg
    _assert_nothing_written(stack, course)


def test_three_hour_video_is_refused_before_any_work(stack, course, tmp_path):
    data = _lavfi(tmp_path, "long.mp4", "-f", "lavfi", "-i", "color=c=black:s=16x16:r=1", "-f", "lavfi", "-i",
                  "anullsrc=r=8000:cl=mono", "-t", "10800", "-c:v", "libx264", "-preset", "ultrafast",
                  "-c:a", "aac", "-b:a", "8k")
    msg = _assert_error(_upload(stack, course, "long.mp4", data), 422, "unprocessable_media")
    assert "3.0 h long" in msg and "limit is 2.0 h" in msg
    _assert_nothing_written(stack, course)


def test_declared_size_must_match_the_bytes(stack, course, tmp_path):
    data = _lavfi(tmp_path, "short.mp4", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=10", "-f", "lavfi", "-i",
                  "sine=frequency=300", "-t", "2", "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac")
    msg = _assert_error(_upload(stack, course, "short.mp4", data, form={"video_size": str(len(data) + 1000)}),
                        400, "size_mismatch")
    assert f"{len(data)} bytes arrived" in msg and "incomplete" in msg
    msg = _assert_error(_upload(stack, course, "short.mp4", data, form={"video_size": "5"}), 400, "size_mismatch")
    assert msg == f"The upload is larger than declared: {len(data)} bytes arrived, 5 were declared."
    _assert_error(_upload(stack, course, "short.mp4", data, form={"video_size": "lots"}), 400, "invalid_size")
    _assert_error(_upload(stack, course, "short.mp4", data, form={"video_size": str(3 * 1024**3)}), 413, "too_large")
    _assert_nothing_written(stack, course)


def test_a_video_size_without_a_video_is_refused(stack, course):
    vtt = b"WEBVTT\n\n00:00.000 --> 00:02.000\nhello\n"
    msg = _assert_error(_upload(stack, course, "a.vtt", vtt, field="captions", form={"video_size": "5"}),
                        400, "invalid_size")
    assert "no video" in msg
    _assert_nothing_written(stack, course)
    spooled = list((stack.settings.media_dir / "incoming").glob("form-*"))
    assert spooled == [], spooled  # the captions spooled while the form was read went with the request


def test_a_compressed_body_is_refused_not_read_as_it_is(stack, course):
    r = requests.post(f"{stack.base}/api/courses/{course}/ask", data=b'{"question": "what is a heap?"}',
                      headers={**stack.admin, "Content-Type": "application/json", "Content-Encoding": "gzip"},
                      timeout=30)
    msg = _assert_error(r, 415, "unsupported_encoding")
    assert "'gzip'" in msg
    r = requests.post(f"{stack.base}/api/courses/{course}/lectures", headers={**stack.admin, "Content-Encoding": "br"},
                      files={"captions": ("a.vtt", b"WEBVTT\n\n00:00.000 --> 00:02.000\nhello\n", "text/vtt")},
                      data={"title": "x"}, timeout=30)
    _assert_error(r, 415, "unsupported_encoding")
    _assert_nothing_written(stack, course)
    r = requests.post(f"{stack.base}/api/courses/{course}/search", data=b'{"query": "heap"}',
                      headers={**stack.admin, "Content-Type": "application/json", "Content-Encoding": "identity"},
                      timeout=30)
    assert r.status_code == 200, r.text


def test_unsupported_extension(stack, course):
    _assert_error(_upload(stack, course, "slides.pdf", b"%PDF-1.4"), 415, "unsupported_type")
    _assert_nothing_written(stack, course)


def test_no_file(stack, course):
    r = requests.post(f"{stack.base}/api/courses/{course}/lectures", headers=stack.admin, data={"title": "x"},
                      timeout=10)
    _assert_error(r, 400, "missing_file")


def test_a_json_body_for_an_upload_is_told_to_send_a_form(stack, course):
    r = requests.post(f"{stack.base}/api/courses/{course}/lectures", headers=stack.admin, json={"title": "x"},
                      timeout=10)
    assert "multipart/form-data" in _assert_error(r, 415, "not_multipart")
    _assert_nothing_written(stack, course)


def test_a_json_body_that_is_not_utf8_says_so(stack, course):
    r = requests.post(f"{stack.base}/api/courses/{course}/search", data=b'{"query": "caf\xe9"}', timeout=10,
                      headers={**stack.admin, "Content-Type": "application/json"})
    assert "not UTF-8" in _assert_error(r, 400, "invalid_json")
    r = requests.post(f"{stack.base}/api/courses/{course}/search", data=b'\xef\xbb\xbf{"query": "hash"}', timeout=10,
                      headers={**stack.admin, "Content-Type": "application/json"})
    assert r.status_code == 200, r.text  # a UTF-8 byte-order mark is still fine


GOOD_FORM = (b'--xx\r\nContent-Disposition: form-data; name="title"\r\n\r\nHi\r\n--xx\r\nContent-Disposition: '
             b'form-data; name="captions"; filename="a.vtt"\r\n\r\nWEBVTT\r\n\r\n00:00.000 --> 00:02.000\r\nhello\r\n--xx--\r\n')


@pytest.mark.parametrize("body,ctype", [(b"garbage", "multipart/form-data; boundary=xx"),
                                        (GOOD_FORM[:-30], "multipart/form-data; boundary=xx"),
                                        (GOOD_FORM, "multipart/form-data")])
def test_a_form_that_cannot_be_parsed_is_called_malformed_not_missing_a_file(stack, course, body, ctype):
    """Not multipart, cut off before its end, no boundary: werkzeug read each as an empty form and
    the answer was "missing_file"; it says what is wrong instead, and nothing is kept."""
    r = requests.post(f"{stack.base}/api/courses/{course}/lectures", data=body, timeout=10,
                      headers={**stack.admin, "Content-Type": ctype})
    _assert_error(r, 400, "malformed_form")
    assert "multipart" in r.json()["error"]["message"]
    _assert_nothing_written(stack, course)


def test_the_well_formed_form_those_cases_spoil_is_accepted(stack):
    own = stack.create_course("Well-formed form")
    r = requests.post(f"{stack.base}/api/courses/{own}/lectures", data=GOOD_FORM, timeout=10,
                      headers={**stack.admin, "Content-Type": "multipart/form-data; boundary=xx"})
    assert r.status_code == 202, r.text


@pytest.mark.parametrize("course_id", [str(uuid.uuid4()), "not-a-uuid"])
def test_unknown_course(stack, course_id):
    _assert_error(_upload(stack, course_id, "a.mp4", b"x"), 404, "not_found")
    _assert_error(requests.get(f"{stack.base}/api/courses/{course_id}", timeout=10), 404, "not_found")
    r = requests.post(f"{stack.base}/api/courses/{course_id}/ask", json={"question": "what is hashing"}, timeout=10)
    _assert_error(r, 404, "not_found")


@pytest.mark.parametrize("body", [{"question": ""}, {"question": "   \n "}, {"question": None}, {}, {"question": 42},
                                  {"question": "x" * 2001}])
def test_bad_question(stack, course, body):
    r = requests.post(f"{stack.base}/api/courses/{course}/ask", json=body, timeout=10)
    _assert_error(r, 400, "invalid_question")


def test_a_lecture_number_is_used_once_per_course(stack, tmp_path):
    course = stack.create_course("Numbered")
    vtt = b"WEBVTT\n\n00:01.000 --> 00:04.000\nA heap is a binary tree with the heap property.\n"
    first = requests.post(f"{stack.base}/api/courses/{course}/lectures", headers=stack.admin, timeout=30,
                          files={"captions": ("a.vtt", vtt, "text/vtt")}, data={"title": "A", "number": "3"})
    assert first.status_code == 202, first.text
    again = requests.post(f"{stack.base}/api/courses/{course}/lectures", headers=stack.admin, timeout=30,
                          files={"captions": ("b.vtt", vtt, "text/vtt")}, data={"title": "B", "number": "3"})
    _assert_error(again, 409, "number_taken")
    other = requests.post(f"{stack.base}/api/courses/{course}/lectures", headers=stack.admin, timeout=30,
                          files={"captions": ("c.vtt", vtt, "text/vtt")}, data={"title": "C"})
    assert other.status_code == 202
    r = requests.patch(f"{stack.base}/api/lectures/{other.json()['lecture_id']}", json={"number": 3},
                       headers=stack.admin, timeout=10)
    _assert_error(r, 409, "number_taken")
    lectures = requests.get(f"{stack.base}/api/courses/{course}", timeout=10).json()["lectures"]
    assert sorted(lec["number"] for lec in lectures) == [3, 4]


def test_control_characters_in_a_title_are_refused(stack, course):
    vtt = b"WEBVTT\n\n00:01.000 --> 00:04.000\nA heap is a binary tree.\n"
    r = requests.post(f"{stack.base}/api/courses/{course}/lectures", headers=stack.admin, timeout=30,
                      files={"captions": ("a.vtt", vtt, "text/vtt")}, data={"title": "Heaps\x01\x07"})
    _assert_error(r, 400, "invalid_title")
    _assert_nothing_written(stack, course)


@pytest.mark.parametrize("number", ["1_000", " 3 ", "\u0663", "3.0", "0x10"])
def test_a_lecture_number_is_ascii_digits_only(stack, course, number):
    vtt = b"WEBVTT\n\n00:01.000 --> 00:04.000\nA heap is a binary tree.\n"
    r = requests.post(f"{stack.base}/api/courses/{course}/lectures", headers=stack.admin, timeout=30,
                      files={"captions": ("a.vtt", vtt, "text/vtt")}, data={"title": "Heaps", "number": number})
    _assert_error(r, 400, "invalid_number")
    _assert_nothing_written(stack, course)


def test_a_form_part_sent_twice_is_refused_not_picked(stack, course):
    # the probe's "number=30" and "number=31" silently took 30; two videos took the first
    vtt = b"WEBVTT\n\n00:01.000 --> 00:04.000\nA heap is a binary tree.\n"
    for files, data, twice in (
            ([("captions", ("a.vtt", vtt, "text/vtt"))], [("title", "Heaps"), ("number", "30"), ("number", "31")], "number"),
            ([("captions", ("a.vtt", vtt, "text/vtt")), ("captions", ("b.vtt", vtt, "text/vtt"))], [("title", "Heaps")],
             "captions")):
        r = requests.post(f"{stack.base}/api/courses/{course}/lectures", headers=stack.admin, timeout=30,
                          files=files, data=data)
        assert f"'{twice}'" in _assert_error(r, 400, "duplicate_field")
    _assert_nothing_written(stack, course)


def test_deeply_nested_json_is_a_400_not_a_500(stack, course):
    body = '{"question": "a", "x": ' + "[" * 20000 + "]" * 20000 + "}"
    r = requests.post(f"{stack.base}/api/courses/{course}/ask", data=body, timeout=10,
                      headers={"Content-Type": "application/json"})
    _assert_error(r, 400, "invalid_json")


def test_non_json_body(stack, course):
    r = requests.post(f"{stack.base}/api/courses/{course}/ask", data="question=hi", timeout=10,
                      headers={"Content-Type": "application/x-www-form-urlencoded"})
    _assert_error(r, 400, "invalid_json")


def test_unknown_lecture_and_answer(stack):
    _assert_error(requests.get(f"{stack.base}/api/lectures/{uuid.uuid4()}", timeout=10), 404, "not_found")
    _assert_error(requests.get(f"{stack.base}/api/lectures/nope/video", timeout=10), 404, "not_found")
    r = requests.post(f"{stack.base}/api/answers/{uuid.uuid4()}/feedback", json={"rating": "up"}, timeout=10)
    _assert_error(r, 404, "not_found")


def test_auth_roles(stack, course):
    from lecturecopilot import db
    from services.gateway.auth import mint_token

    pool = db.make_pool(stack.settings, max_size=1)
    try:
        student = mint_token(pool, "student", "s@example.edu")
        instructor = mint_token(pool, "instructor", "i@example.edu")
    finally:
        pool.close()
    url = f"{stack.base}/api/courses"
    _assert_error(requests.post(url, json={"title": "x"}, timeout=10), 401, "unauthorized")
    _assert_error(requests.post(url, json={"title": "x"}, headers={"Authorization": "Bearer wrong"}, timeout=10),
                  401, "unauthorized")
    _assert_error(requests.post(url, json={"title": "x"}, headers={"Authorization": f"Bearer {student}"},
                                timeout=10), 403, "forbidden")
    _assert_error(_upload(stack, course, "a.mp4", b"x", headers={"Authorization": f"Bearer {student}"}), 403,
                  "forbidden")
    r = requests.post(url, json={"title": "By instructor"}, headers={"Authorization": f"Bearer {instructor}"},
                      timeout=10)
    assert r.status_code == 201
    _assert_error(requests.post(url, json={"title": "  "}, headers=stack.admin, timeout=10), 400, "invalid_title")
    for trojan in ("Algorithms \u202egnp.exe", "A\u2066B\u2069"):  # text-direction controls
        msg = _assert_error(requests.post(url, json={"title": trojan}, headers=stack.admin, timeout=10), 400,
                            "invalid_title")
        assert "text-direction controls" in msg
    r = requests.post(url, json={"title": "الخوارزميات Algorithms"}, headers=stack.admin, timeout=10)
    assert r.status_code == 201, r.text  # right-to-left text itself is welcome


def test_a_token_stops_working_when_it_expires_or_is_revoked(stack):
    """The probe: tokens never expired and could only be removed in SQL. A token now lives 90 days
    (``--days``), and ``revoke-tokens --email`` ends every token of an address at once."""
    import subprocess
    import sys

    from lecturecopilot import db
    from services.gateway.auth import mint_token

    url = f"{stack.base}/api/courses"

    def creates(token: str) -> int:
        return requests.post(url, json={"title": "Token check"}, headers={"Authorization": f"Bearer {token}"},
                             timeout=10).status_code

    pool = db.make_pool(stack.settings, max_size=1)
    try:
        soon, other, kept = (mint_token(pool, "instructor", a, days=1)
                             for a in ("t1@example.edu", "t2@example.edu", "t3@example.edu"))
        idn = mint_token(pool, "instructor", "Zed@Bücher.Example", days=1)
        assert creates(soon) == 201 and creates(other) == 201 and creates(kept) == 201
        with pool.connection() as conn:
            conn.execute("UPDATE api_tokens SET expires_at = now() - interval '1 second' WHERE email='t1@example.edu'")
        assert creates(soon) == 401  # expired: anonymous
        with pytest.raises(ValueError, match="days"):
            mint_token(pool, "instructor", "t1@example.edu", days=0)
    finally:
        pool.close()
    from lecturecopilot_ops.stack import service_env

    out = subprocess.run([sys.executable, "-m", "lecturecopilot_ops.cli", "revoke-tokens", "--email", "T2@example.edu"],
                         capture_output=True, text=True, env=service_env(stack.settings), timeout=60)
    assert out.returncode == 0 and "revoked 1 token(s) and 0 browser session(s)" in out.stdout, (out.stdout, out.stderr)
    assert creates(other) == 401 and creates(kept) == 201  # only that address's tokens
    out = subprocess.run([sys.executable, "-m", "lecturecopilot_ops.cli", "revoke-tokens", "--email", "zed@bücher.example"],
                         capture_output=True, text=True, env=service_env(stack.settings), timeout=60)
    assert "revoked 1 token" in out.stdout and creates(idn) == 401, (out.stdout, out.stderr)  # as minted: IDNA


def test_malformed_event_goes_to_dead_letter_and_pipeline_keeps_going(stack):
    import nats

    from lecturecopilot import bus

    async def go():
        nc = await nats.connect(stack.nats_url)
        js = nc.jetstream()
        sub = await js.subscribe(bus.DEAD_LETTER, stream=stack.settings.stream)
        await js.publish(bus.UPLOADED, b"\xff\x00 definitely not protobuf", stream=stack.settings.stream,
                         headers={"Nats-Msg-Id": f"garbage-{uuid.uuid4()}"})
        msg = await sub.next_msg(timeout=30)
        await nc.close()
        return msg.data

    data = asyncio.run(go())
    assert data == b"\xff\x00 definitely not protobuf"
    # the transcribe consumer is still alive and takes captions-only lectures
    course = stack.create_course("After a poison message")
    vtt = "WEBVTT\n\n00:01.000 --> 00:04.000\nA heap is a binary tree with the heap property.\n"
    r = _upload(stack, course, "l.vtt", vtt.encode(), field="captions")
    assert r.status_code == 202, r.text
    assert stack.wait_ready(r.json()["lecture_id"], timeout_s=60)["status"] == "ready"


def test_a_file_cut_short_with_its_index_in_front_is_refused(stack, course, tmp_path):
    # an MP4 whose index (moov) is at the front declares its whole length even when cut in half
    data = _lavfi(tmp_path, "faststart.mp4", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=10", "-f", "lavfi",
                  "-i", "sine=frequency=300", "-t", "30", "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac",
                  "-movflags", "+faststart")
    msg = _assert_error(_upload(stack, course, "cut.mp4", data[: len(data) // 2]), 422, "unprocessable_media")
    assert "cut short" in msg and "declares 30 s" in msg
    _assert_nothing_written(stack, course)
    # the whole file is taken (in a course of its own: this module's course stays empty)
    r = _upload(stack, stack.create_course("Whole file"), "whole.mp4", data)
    assert r.status_code == 202, r.text


def _vtt(*cues):
    return ("WEBVTT\n\n" + "\n\n".join(f"{a} --> {b}\n{t}" for a, b, t in cues) + "\n").encode()


@pytest.mark.parametrize("cues, says", [
    ([("00:00:01.000", "00:00:04.000", "Welcome to sorting."), ("99:00:00.000", "99:00:05.000", "Goodbye.")],
     "captions run to 99:00:05; the limit for a lecture is 2.0 h"),
    ([("00:00:00.000", "99:00:00.000", "hello")], "captions run to 99:00:00; the limit"),  # one very long cue
    ([("00:00:05.000", "00:00:02.000", "This cue ends before it starts.")], "A cue ends before it starts (0:05 → 0:02)"),
    # cues of no time, 50 words each, lines alternating so roll-up de-duplication keeps them all: each is
    # stretched to 2.5 s of speech, and parsing stops at the first past the limit
    ([("00:00:01.000", "00:00:01.000", " ".join("ab"[i % 2] * 50)) for i in range(3000)],
     "; the limit for a lecture is 2.0 h"),
    ([("00:00:01.000", "00:00:01.000", "ab"[i % 2]) for i in range(36_100)],
     "more than 36050 cues, more than 5 a second"),  # refused before a cue is parsed
    ([("00:00:01.000", "00:00:04.000", "Welcome."), ("00:00:99.000", "xx", "Dropped, were it not refused.")],
     "A cue's timing is not valid (line 6: '00:00:99.000 --> xx')"),
])
def test_captions_with_impossible_times_are_refused(stack, course, cues, says):
    r = _upload(stack, course, "bad.vtt", _vtt(*cues), field="captions")
    assert says in _assert_error(r, 422, "unprocessable_captions")
    _assert_nothing_written(stack, course)


def test_captions_that_run_past_the_video_are_refused(stack, course, tmp_path):
    video = _lavfi(tmp_path, "short.mp4", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=10", "-t", "20",
                   "-c:v", "libx264", "-pix_fmt", "yuv420p")
    cues = _vtt(("00:00:01.000", "00:00:04.000", "Radix sort sorts digit by digit."),
                ("00:47:55.000", "00:48:00.000", "And that is radix sort."))
    r = requests.post(f"{stack.base}/api/courses/{course}/lectures", headers=stack.admin, data={"title": "x"},
                      files={"video": ("short.mp4", video, "video/mp4"), "captions": ("l5.vtt", cues, "text/vtt")},
                      timeout=60)
    msg = _assert_error(r, 422, "unprocessable_captions")
    assert "captions run to 48:00 but the video is 0:20 long" in msg, msg
    # one cue that starts inside the video but runs on for hours
    cues = _vtt(("00:00:10.000", "99:00:00.000", "bye"))
    r = requests.post(f"{stack.base}/api/courses/{course}/lectures", headers=stack.admin, data={"title": "x"},
                      files={"video": ("short.mp4", video, "video/mp4"), "captions": ("long.vtt", cues, "text/vtt")},
                      timeout=60)
    assert "captions run to 99:00:00" in _assert_error(r, 422, "unprocessable_captions")
    _assert_nothing_written(stack, course)


def test_a_malformed_conversation_id_is_a_400(stack, course):
    url = f"{stack.base}/api/courses/{course}/ask"
    for bad in ("not-a-uuid", "123", "'; DROP TABLE answers; --"):
        r = requests.post(url, json={"question": "why?", "conversation_id": bad}, timeout=30)
        assert "a UUID" in _assert_error(r, 400, "invalid_conversation"), bad
    for bad in (7, 0, False, [], {}):
        _assert_error(requests.post(url, json={"question": "why?", "conversation_id": bad}, timeout=30), 400,
                      "invalid_conversation")


@pytest.mark.parametrize("email", ["a@b.c\u0000", "a\u0000b@example.edu", "a@exa\u0007mple.edu", "not an email"])
def test_an_email_with_control_characters_is_a_400_not_a_crash(stack, course, email):
    base = f"{stack.base}/api/courses/{course}/members"
    _assert_error(requests.post(base, json={"email": email}, headers=stack.admin, timeout=10), 400, "invalid_email")
    _assert_error(requests.delete(f"{base}/{requests.utils.quote(email)}", headers=stack.admin, timeout=10), 400,
                  "invalid_email")
    r = requests.post(f"{stack.base}/api/auth/magic-link", json={"email": email}, timeout=10)
    assert r.status_code == 400, r.text
    assert requests.get(base, headers=stack.admin, timeout=10).json() == {"members": []}


@pytest.mark.parametrize("raw", ['{"filename": "x.mp4", "size": 1e400, "title": "t"}',
                                 '{"filename": "x.mp4", "size": NaN, "title": "t"}',
                                 '{"filename": "x.mp4", "size": -Infinity, "title": "t"}'])
def test_numbers_json_does_not_allow_are_a_400(stack, course, raw):
    r = requests.post(f"{stack.base}/api/courses/{course}/uploads", data=raw, timeout=10,
                      headers={**stack.admin, "Content-Type": "application/json"})
    assert "finite numbers" in _assert_error(r, 400, "invalid_json")


TROJAN = "Week 1 \u202e4pm.exe"  # shows as "Week 1 exe.mp4"


def test_text_direction_controls_are_refused_wherever_a_title_enters(stack):
    """Issue #12 item 8: one check for multipart titles, resumable titles, file names that become
    titles and PATCH; nothing is stored."""
    course = stack.create_course("Trojan titles")
    vtt = b"WEBVTT\n\n00:01.000 --> 00:04.000\nA heap is a binary tree with the heap property.\n"
    url = f"{stack.base}/api/courses/{course}"
    refused = [
        # a multipart upload's title
        requests.post(f"{url}/lectures", headers=stack.admin, timeout=30,
                      files={"captions": ("a.vtt", vtt, "text/vtt")}, data={"title": TROJAN}),
        # a multipart upload without a title: the file's name would become the title
        requests.post(f"{url}/lectures", headers=stack.admin, timeout=30,
                      files={"captions": (TROJAN + ".vtt", vtt, "text/vtt")}),
        # a resumable upload's title, and its file name
        requests.post(f"{url}/uploads", headers=stack.admin, timeout=10,
                      json={"filename": "week1.mp4", "size": 1000, "title": TROJAN}),
        requests.post(f"{url}/uploads", headers=stack.admin, timeout=10,
                      json={"filename": TROJAN + ".mp4", "size": 1000}),
    ]
    codes = ["invalid_title", "invalid_filename", "invalid_title", "invalid_filename"]
    for r, code in zip(refused, codes):
        assert "text-direction controls" in _assert_error(r, 400, code)
    _assert_nothing_written(stack, course)
    with stack.db() as conn:
        assert conn.execute("SELECT count(*) FROM uploads WHERE course_id=%s", (course,)).fetchone()[0] == 0
    # PATCH refuses it too, on a lecture that exists
    ok = requests.post(f"{url}/lectures", headers=stack.admin, timeout=30,
                       files={"captions": ("a.vtt", vtt, "text/vtt")}, data={"title": "Heaps"})
    assert ok.status_code == 202, ok.text
    r = requests.patch(f"{stack.base}/api/lectures/{ok.json()['lecture_id']}", json={"title": TROJAN},
                       headers=stack.admin, timeout=10)
    assert "text-direction controls" in _assert_error(r, 400, "invalid_title")
    titles = [lec["title"] for lec in requests.get(url, timeout=10).json()["lectures"]]
    assert titles == ["Heaps"]


def test_requests_gunicorn_cannot_parse_are_answered_in_json(stack):
    """A request refused before the app runs (a Content-Length that is not a number, a 10 000
    character path, 120 headers, an unknown transfer coding) gets the API's JSON error, not gunicorn's
    HTML page."""
    import json
    import socket
    from http import HTTPStatus

    def raw(request: bytes) -> tuple[str, dict]:
        with socket.create_connection(("127.0.0.1", stack.settings.gateway_port), timeout=10) as s:
            s.sendall(request)
            got = b""
            while data := s.recv(65536):
                got += data
        head, _, body = got.partition(b"\r\n\r\n")
        return head.decode("latin-1"), json.loads(body)

    many = b"".join(b"X-H%d: y\r\n" % i for i in range(120))
    for request, status in ((b"POST /api/courses HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n", "400"),
                            (b"GET /" + b"a" * 10_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", "414"),
                            (b"GET /api/courses HTTP/1.1\r\nHost: x\r\n" + many + b"\r\n", "431"),
                            (b"POST /api/courses HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\n\r\n", "501")):
        head, body = raw(request)
        assert head.split()[1] == status and "content-type: application/json" in head.lower(), head
        assert body["error"]["code"] and body["error"]["message"], body
        phrase = HTTPStatus(int(status)).phrase  # the status's own phrase (gunicorn's "501 Bad Request" before)
        assert head.split("\r\n")[0] == f"HTTP/1.1 {status} {phrase}", head


def test_an_upload_to_a_path_with_no_course_id_is_no_such_route_not_too_large(stack):
    # COURSE=$(…) left empty by a failed earlier command: the README's upload then posts to /api/courses//lectures
    r = requests.post(f"{stack.base}/api/courses//lectures", headers=stack.admin, timeout=30,
                      files={"video": ("lecture.mp4", b"\0" * 200_000, "video/mp4")}, data={"title": "Week 1"})
    assert r.status_code in (404, 405), r.text
    assert r.json()["error"]["code"] in ("not_found", "method_not_allowed")


def test_a_malformed_chunked_body_is_a_400_on_every_route_that_reads_one(stack, course):
    """A chunk size that is not hexadecimal, a chunk without its CRLF or an extension with a NUL: 400
    ``bad_request`` (gunicorn's parse error escaped as a 500 before), and nothing written."""
    import json
    import socket

    def raw(path: str, method: str, ctype: str, body: bytes) -> tuple[str, dict]:
        with socket.create_connection(("127.0.0.1", stack.settings.gateway_port), timeout=20) as s:
            s.sendall(f"{method} {path} HTTP/1.1\r\nHost: x\r\nAuthorization: {stack.admin['Authorization']}\r\n"
                      f"Content-Type: {ctype}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n".encode() + body)
            got = b""
            while data := s.recv(65536):
                got += data
        head, _, rest = got.partition(b"\r\n\r\n")
        return head.decode("latin-1"), json.loads(rest)

    form = "multipart/form-data; boundary=xx"
    start = b"--xx\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nWeek 1\r\n"
    for path, method, ctype, body in (
            (f"/api/courses/{course}/search", "POST", "application/json", b"zz\r\nabc\r\n0\r\n\r\n"),
            (f"/api/courses/{course}/ask", "POST", "application/json", b"2\r\n{}XX0\r\n\r\n"),
            ("/api/answers/00000000-0000-4000-8000-000000000000/feedback", "POST", "application/json",
             b"2;a=\x00\r\n{}\r\n0\r\n\r\n"),
            (f"/api/courses/{course}/lectures", "POST", form, b"%x\r\n" % len(start) + start + b"\r\n-1\r\nab\r\n")):
        head, err = raw(path, method, ctype, body)
        assert head.split()[1] == "400", (path, head, err)
        assert err["error"]["code"] == "bad_request" and "chunked" in err["error"]["message"], err
    _assert_nothing_written(stack, course)
    assert requests.get(f"{stack.base}/healthz", timeout=5).status_code == 200
