"""Uploads that are not lecture videos but make ffmpeg open other files — an HLS playlist, an
ffconcat file, an image sequence, each named ``.mp4`` — are refused with 422 and a clear message
before anything is stored; and every later ffmpeg call on user media forces the demuxer the probe
found, so a file that changes afterwards cannot pick a playlist demuxer (issue #12, item 1).
Real stack, real ffmpeg."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import requests

from lecturecopilot import media

pytestmark = pytest.mark.slow

VTT = b"WEBVTT\n\n00:01.000 --> 00:04.000\nA heap is a binary tree with the heap property.\n"


def _ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", *args], check=True)


@pytest.fixture(scope="module")
def secret_ts(tmp_path_factory) -> Path:
    """A 6 s MPEG-TS with picture and a tone, outside the media store: what a playlist points at."""
    out = tmp_path_factory.mktemp("outside") / "secret.ts"
    _ffmpeg("-f", "lavfi", "-i", "testsrc2=s=320x240:r=10", "-f", "lavfi", "-i", "sine=f=440", "-t", "6",
            "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", "-f", "mpegts", str(out))
    return out


def _hls(*segments: Path) -> bytes:
    lines = ["#EXTM3U", "#EXT-X-VERSION:3", "#EXT-X-TARGETDURATION:10"]
    for seg in segments:
        lines += ["#EXTINF:6.0,", str(seg)]
    return ("\n".join(lines + ["#EXT-X-ENDLIST"]) + "\n").encode()


def _upload(stack, course, name: str, data: bytes, captions: bytes | None = None):
    files = {"video": (name, data, "video/mp4")}
    if captions is not None:
        files["captions"] = ("captions.vtt", captions, "text/vtt")
    return requests.post(f"{stack.base}/api/courses/{course}/lectures", headers=stack.admin, files=files,
                         data={"title": "hostile"}, timeout=60)


def _refused(r, *words: str) -> str:
    assert r.status_code == 422, r.text
    assert r.headers["Content-Type"].startswith("application/json")
    err = r.json()["error"]
    assert err["code"] == "unprocessable_media"
    for w in words:
        assert w in err["message"], err["message"]
    assert "MP4, MOV, WebM or MKV" in err["message"], err["message"]
    return err["message"]


def _nothing_written(stack, course) -> None:
    with stack.db() as conn:
        assert conn.execute("SELECT count(*) FROM lectures WHERE course_id=%s", (course,)).fetchone()[0] == 0
        known = {str(r[0]) for r in conn.execute("SELECT id FROM lectures").fetchall()}
    lectures_dir = stack.settings.media_dir / "lectures"
    leftovers = {p.name for p in lectures_dir.iterdir()} if lectures_dir.exists() else set()
    assert leftovers <= known, f"orphaned media folders: {leftovers - known}"


def test_hls_playlist_named_mp4_is_refused(stack, secret_ts):
    course = stack.create_course("Hostile HLS")
    msg = _refused(_upload(stack, course, "week2.mp4", _hls(secret_ts)), "HLS playlist")
    assert str(secret_ts) not in msg
    _nothing_written(stack, course)


def test_hls_playlist_naming_another_lectures_private_video_is_refused(stack, synth_video, tmp_path):
    """The issue's case: another instructor's private lecture stored as ``source.mkv``, its path
    known; a playlist naming it would make that lecture's speech this one's transcript."""
    res, _ = synth_video
    mkv = tmp_path / "lecture.mkv"
    _ffmpeg("-i", str(res.path), "-c", "copy", str(mkv))
    private = stack.create_course("Someone else's private course")
    requests.patch(f"{stack.base}/api/courses/{private}", json={"visibility": "private"}, headers=stack.admin,
                   timeout=10).raise_for_status()
    with open(mkv, "rb") as f:
        r = requests.post(f"{stack.base}/api/courses/{private}/lectures", headers=stack.admin, timeout=120,
                          files={"video": ("lecture.mkv", f, "video/x-matroska")}, data={"title": "Private"})
    assert r.status_code == 202, r.text
    with stack.db() as conn:
        source = Path(conn.execute("SELECT media_path FROM lectures WHERE id=%s",
                                   (r.json()["lecture_id"],)).fetchone()[0])
    assert source.is_file()
    course = stack.create_course("Hostile HLS 2")
    _refused(_upload(stack, course, "week3.mp4", _hls(source)), "HLS playlist")
    _nothing_written(stack, course)


def test_ffconcat_file_named_mp4_is_refused(stack, secret_ts):
    course = stack.create_course("Hostile concat")
    for body in (f"ffconcat version 1.0\nfile {secret_ts}\n", "ffconcat version 1.0\nfile source.mp4\n"):
        _refused(_upload(stack, course, "week4.mp4", body.encode()), "ffconcat playlist")
    _nothing_written(stack, course)


def test_image_sequences_named_mp4_are_refused(stack, tmp_path):
    """With captions a video needs no audio, so a picture-only file would pass every other check."""
    course = stack.create_course("Hostile images")
    gif, jpegs = tmp_path / "anim.gif", tmp_path / "frames.mjpeg"
    _ffmpeg("-f", "lavfi", "-i", "testsrc2=s=320x240:r=5", "-t", "10", str(gif))
    _ffmpeg("-f", "lavfi", "-i", "testsrc2=s=320x240:r=5", "-t", "10", "-c:v", "mjpeg", "-f", "image2pipe", str(jpegs))
    _refused(_upload(stack, course, "slides.mp4", gif.read_bytes(), captions=VTT), "GIF image")
    _refused(_upload(stack, course, "slides.mp4", jpegs.read_bytes(), captions=VTT), "image sequence")
    _nothing_written(stack, course)


def test_later_ffmpeg_calls_force_the_probed_demuxer(tmp_path, secret_ts):
    """A file probed as Matroska that is a playlist by the time the audio is extracted (replaced, or
    lying): ffmpeg reads it as Matroska and fails, instead of following the playlist out of the store."""
    clip = tmp_path / "source.mkv"
    _ffmpeg("-f", "lavfi", "-i", "testsrc2=s=320x240:r=10", "-f", "lavfi", "-i", "sine=f=300", "-t", "3",
            "-c:v", "libvpx", "-c:a", "libopus", str(clip))
    info = media.probe(clip)
    assert info.format_name == "matroska,webm"
    wav = media.extract_audio(clip, tmp_path / "a.wav", info)  # the real file decodes
    assert wav.stat().st_size > 16000
    args = media.input_args(clip, info)
    assert args[-2:] == ["-i", str(clip)] and "-f" in args and args[args.index("-f") + 1] == "matroska"
    assert args[args.index("-protocol_whitelist") + 1] == "file"
    clip.write_bytes(_hls(secret_ts))  # now a playlist naming a file outside the store
    with pytest.raises(media.MediaError) as err:
        media.extract_audio(clip, tmp_path / "b.wav", info)
    assert "could not be decoded" in str(err.value) and str(secret_ts) not in str(err.value)
    assert not (tmp_path / "b.wav").exists() or (tmp_path / "b.wav").stat().st_size == 0
    with pytest.raises(media.MediaError, match="HLS playlist"):
        media.probe(clip)


def test_a_small_file_of_huge_frames_is_refused(stack, tmp_path):
    """A 2 s video of 8000×8000 frames is a few hundred KB, but reading its slides took gigabytes:
    refused at upload by its frame size (``LC_MAX_VIDEO_PIXELS``), before anything is stored."""
    bomb = tmp_path / "bomb.mkv"
    _ffmpeg("-f", "lavfi", "-i", "color=black:s=8000x8000:d=2:r=2", "-f", "lavfi", "-i", "anullsrc=r=16000:cl=mono",
            "-t", "2", "-c:v", "ffv1", "-c:a", "pcm_s16le", str(bomb))
    assert bomb.stat().st_size < 5_000_000
    course = stack.create_course("Frame bombs")
    r = _upload(stack, course, "bomb.mkv", bomb.read_bytes(), captions=b"WEBVTT\n\n00:00.000 --> 00:01.000\nhi\n")
    assert r.status_code == 422 and r.json()["error"]["code"] == "unprocessable_media", r.text
    assert "8000\u00d78000" in r.json()["error"]["message"] and "megapixels" in r.json()["error"]["message"]
    _nothing_written(stack, course)
