"""Captions out through the real stack: a narrated slide video processed to ``ready`` (speech
recognition, slide reading, indexing), then its captions fetched as WebVTT and SRT. Both read
back with webvtt-py to the transcript's text and slides; a private course's captions are a 404
to non-members like its transcript; a lecture that is not ready is a 409."""

from __future__ import annotations

import html
import json
import subprocess
from pathlib import Path

import pytest
import requests
import webvtt

from services.gateway.caption_export import Line, build_cues, to_srt, to_vtt
from web_helpers import mint

pytestmark = pytest.mark.slow


def ffmpeg_cues(path: Path) -> list[tuple[int, int, str]]:
    """The cues as ffmpeg reads them (its demuxers and decoders are what mpv and ffplay show):
    (start ms, end ms, text with its line breaks), from ffprobe's packets and ffmpeg's ASS output."""
    probe = json.loads(subprocess.run(["ffprobe", "-v", "error", "-show_entries", "stream=time_base:packet=pts,duration",
                                       "-of", "json", str(path)], capture_output=True, text=True, check=True).stdout)
    assert probe["streams"][0]["time_base"] == "1/1000"
    ass = subprocess.run(["ffmpeg", "-v", "error", "-i", str(path), "-f", "ass", "-"], capture_output=True, text=True,
                         check=True).stdout
    texts = [ln.split(",", 9)[9].replace("\\N", "\n") for ln in ass.splitlines() if ln.startswith("Dialogue:")]
    assert len(texts) == len(probe["packets"])
    return [(p["pts"], p["pts"] + p["duration"], t) for p, t in zip(probe["packets"], texts)]


def test_ffmpeg_reads_both_files_with_the_same_times_and_text(tmp_path):
    t0 = 3600 + 59 * 60 + 58.5  # past one hour, across two
    cues = build_cues([Line(t0, t0 + 3.25, "Hashing & chaining: a --> b when i < n, said  twice."),
                       Line(t0 + 0.5, t0 + 1.5, "Chaining: one list per bucket.", "slide"),
                       Line(t0 + 4.0, t0 + 6.001, "Tags stay text in WebVTT: <b>x</b> & y.")])
    (tmp_path / "c.vtt").write_text(to_vtt(cues))
    (tmp_path / "c.srt").write_text(to_srt(cues))
    want = [(round(c.start_s * 1000), round(c.end_s * 1000), "\n".join(c.lines)) for c in cues]
    assert ffmpeg_cues(tmp_path / "c.vtt") == want
    srt = ffmpeg_cues(tmp_path / "c.srt")
    assert [x[:2] for x in srt] == [x[:2] for x in want]
    assert srt[:2] == want[:2]  # plain SRT text ("&", "-->", "<") shows as it is
    assert srt[2][2] == want[2][2].replace("<", "&lt;")  # a tag-like "<" is escaped (ffmpeg shows the reference)


def test_ffmpeg_reads_no_timing_line_out_of_srt_cue_text(tmp_path):
    # transcript text that looks like an SRT timing line (a caption upload can hold "--&gt;", which
    # reads back as "-->"): ffmpeg would take it for the cue's timing and drop or move the cue
    texts = ["00:00:09,000 --> 00:00:10,000 injected", "1:2:3.4 -->5:6:7.8", " +1:-2:3,4 --> 5:6:7,8"]
    cues = [c for k, t in enumerate(texts) for c in build_cues([Line(1.0 + 4 * k, 3.0 + 4 * k, t)])]
    cues += build_cues([Line(20.0, 23.0, "7 " + "y" * 41 + " 00:00:59,000 --> 00:01:00,000")])
    assert len(cues) >= 4
    (tmp_path / "c.srt").write_text(to_srt(cues))
    got = ffmpeg_cues(tmp_path / "c.srt")
    assert [x[:2] for x in got] == [(round(c.start_s * 1000), round(c.end_s * 1000)) for c in cues]
    assert [x[2] for x in got] == ["\n".join(c.lines).replace("-->", "--&gt;") for c in cues]
    read = webvtt.from_srt(str(tmp_path / "c.srt")).captions
    assert [c.start_time.in_milliseconds() for c in read] == [x[0] for x in got]


def test_ffmpeg_shows_braces_and_backslashes_of_the_text_as_they_are(tmp_path):
    # code and LaTeX on a slide or in speech: ffmpeg's SRT reader (hence mpv) applies "{\an8}" (moves the
    # cue to the top) and drops "{\em x}" and "{c: 3}" (MicroDVD styles); its ASS output of both formats
    # turns a literal "\N" / "\n" / "\h" into a line break or a hard space. A word joiner (U+2060,
    # invisible) after the "{" or the backslash keeps the text as it is.
    texts = ["{\\an8}moved {\\b1}bold", "a dict {c: 3} and {y: 2} and {x: 1}", "{\\em emphasis} and \\frac{a}{b}",
             'printf("hi\\n") and C:\\New\\home']
    cues = [c for k, t in enumerate(texts) for c in build_cues([Line(1.0 + 4 * k, 3.0 + 4 * k, t)])]
    for ext, write in (("srt", to_srt), ("vtt", to_vtt)):
        (tmp_path / f"c.{ext}").write_text(write(cues))
        got = ffmpeg_cues(tmp_path / f"c.{ext}")
        assert [x[:2] for x in got] == [(round(c.start_s * 1000), round(c.end_s * 1000)) for c in cues]
        shown = [t.replace("\u2060", "").replace("\\{", "{").replace("\\}", "}") for _, _, t in got]
        assert shown == ["\n".join(c.lines) for c in cues], ext
        assert all(not t.startswith("{\\an") for _, _, t in got)


@pytest.fixture(scope="module")
def lecture(stack, synth_video):
    res, _ = synth_video
    course_id, lecture_id = stack.course_with_video("Captions out", res.path, 1)
    return {"course": course_id, "id": lecture_id, "duration_s": res.duration_s}


def _get(stack, lecture_id: str, ext: str, headers=None) -> requests.Response:
    return requests.get(f"{stack.base}/api/lectures/{lecture_id}/captions.{ext}", headers=headers or {}, timeout=30)


def test_vtt_and_srt_hold_the_transcript(stack, lecture, tmp_path):
    segments = requests.get(f"{stack.base}/api/lectures/{lecture['id']}/transcript", timeout=10).json()["segments"]
    speech = [s for s in segments if s["kind"] == "speech"]
    slides = [s for s in segments if s["kind"] == "slide"]
    assert speech
    read = {}
    for ext, ctype, reader in (("vtt", "text/vtt; charset=utf-8", webvtt.read),
                               ("srt", "application/x-subrip; charset=utf-8", webvtt.from_srt)):
        r = _get(stack, lecture["id"], ext)
        assert r.status_code == 200, r.text
        assert r.headers["Content-Type"] == ctype
        assert r.headers["Content-Disposition"] == f'attachment; filename="L1-Sorting.{ext}"'
        (tmp_path / f"c.{ext}").write_bytes(r.content)
        read[ext] = reader(str(tmp_path / f"c.{ext}"))
    vtt, srt = read["vtt"].captions, read["srt"].captions
    for ext in ("vtt", "srt"):  # ffmpeg reads the same cue times as webvtt-py
        assert [x[:2] for x in ffmpeg_cues(tmp_path / f"c.{ext}")] == [
            (c.start_time.in_milliseconds(), c.end_time.in_milliseconds()) for c in read[ext].captions]
    assert len(vtt) == len(srt) >= len(speech)
    for a, b in zip(vtt, srt):  # the same cues in both formats, to the millisecond
        assert (a.start_time.in_milliseconds(), a.end_time.in_milliseconds()) == (
            b.start_time.in_milliseconds(), b.end_time.in_milliseconds())
        assert 0 <= a.start_time.in_milliseconds() < a.end_time.in_milliseconds() <= (lecture["duration_s"] + 5) * 1000
    # the spoken cues say the transcript's sentences, word for word and in order; slides are marked
    spoken = [html.unescape(c.text).replace("\n", " ") for c in vtt if str(c.settings) != "line:0"]
    assert " ".join(spoken).split() == " ".join(s["text"] for s in speech).split()
    marked = [c for c in vtt if str(c.settings) == "line:0"]
    assert len(marked) == len(slides) and all(c.text.startswith("[Slide] ") for c in marked)
    assert [c.text for c in srt if c.text.startswith("[Slide] ")] == [c.text for c in marked]
    assert vtt[0].start_time.in_milliseconds() == round(min(s["start_s"] for s in segments) * 1000)
    # speech only (the web player's subtitles): the same spoken cues, no slide's
    for ext in ("vtt", "srt"):
        r = requests.get(f"{stack.base}/api/lectures/{lecture['id']}/captions.{ext}?slides=0", timeout=30)
        assert r.status_code == 200 and "[Slide]" not in r.text and spoken[0].split()[0] in r.text, r.text[:300]
        r = requests.get(f"{stack.base}/api/lectures/{lecture['id']}/captions.{ext}?slides=yes", timeout=30)
        assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_slides", r.text


def test_captions_follow_the_transcripts_access_rules(stack, lecture):
    owner = mint(stack, "instructor", "captions-owner@example.edu")
    course = requests.post(f"{stack.base}/api/courses", json={"title": "Captions private", "visibility": "private"},
                           headers=owner, timeout=10).json()["id"]
    with stack.db() as c:  # the processed lecture moves into the private course
        c.execute("UPDATE lectures SET course_id=%s WHERE id=%s", (course, lecture["id"]))
    try:
        student = mint(stack, "student", "captions-student@example.edu")
        for headers in ({}, student):
            for path in ("transcript", "captions.vtt", "captions.srt"):
                r = requests.get(f"{stack.base}/api/lectures/{lecture['id']}/{path}", headers=headers, timeout=10)
                assert r.status_code == 404 and r.json()["error"]["code"] == "not_found", (path, r.text)
        assert requests.post(f"{stack.base}/api/courses/{course}/members", json={"email": "captions-student@example.edu"},
                             headers=owner, timeout=10).status_code == 204
        for headers in (owner, student, stack.admin):
            for ext in ("vtt", "srt"):
                assert _get(stack, lecture["id"], ext, headers).status_code == 200
        # not ready (processing again, or failed): 409, as JSON
        for status in ("processing", "failed"):
            with stack.db() as c:
                c.execute("UPDATE lectures SET status=%s WHERE id=%s", (status, lecture["id"]))
            r = _get(stack, lecture["id"], "vtt", owner)
            assert r.status_code == 409 and r.json()["error"]["code"] == "not_ready", r.text
        assert _get(stack, "not-a-uuid", "srt").status_code == 404
        assert requests.get(f"{stack.base}/api/lectures/{lecture['id']}/captions.txt", headers=owner,
                            timeout=10).status_code == 404
    finally:
        with stack.db() as c:
            c.execute("UPDATE lectures SET course_id=%s, status='ready' WHERE id=%s", (lecture["course"], lecture["id"]))
