"""What ffmpeg reads of user media is bounded by what the probe accepted, and kept on the media's own
clock (real ffmpeg, no stack):

- a header may declare a minute of a file that holds far more (a hostile pass processed 2.5 h behind a
  declared 60 s, writing 288 MB of audio from a 5.6 MB upload): nothing is read past the declared
  duration and its slack (:func:`lecturecopilot.media.read_limit_s`);
- a stream whose first frames are small may switch to huge ones after the probe: no frame over the
  limit is decoded (``-max_pixels``);
- audio whose timestamps pause (a trial's narration stopped 5 s at each slide change) is extracted
  with the pauses as silence, so the transcript's times are the video's.
"""

from __future__ import annotations

import dataclasses
import json
import struct
import subprocess
from pathlib import Path

import pytest

from lecturecopilot import media

pytestmark = pytest.mark.slow


def _ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", *args], check=True)


def _seconds(path: Path) -> float:
    out = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "json", str(path)],
                         capture_output=True, text=True, check=True).stdout
    return float(json.loads(out)["format"]["duration"])


def _declare(mp4: Path, seconds: float) -> None:
    """Rewrites the durations an MP4's headers declare (``mvhd``, each ``mdhd``; version 0 boxes) to
    ``seconds``, leaving its samples as they are: a file whose header lies about its length."""
    data = bytearray(mp4.read_bytes())
    for box in (b"mvhd", b"mdhd"):
        at = data.find(box)
        while at >= 0:
            assert data[at + 4] == 0, "a version 0 box"
            timescale = struct.unpack(">I", data[at + 16:at + 20])[0]
            data[at + 20:at + 24] = struct.pack(">I", int(seconds * timescale))
            at = data.find(box, at + 4)
    mp4.write_bytes(bytes(data))


def test_nothing_is_read_past_the_duration_the_header_declares(tmp_path):
    clip = tmp_path / "long.mp4"
    _ffmpeg("-f", "lavfi", "-i", "color=gray:s=64x48:r=1", "-f", "lavfi", "-i", "sine=f=440", "-t", "60",
            "-c:v", "libx264", "-c:a", "aac", str(clip))
    _declare(clip, 10.0)
    info = media.probe(clip)
    assert info.duration_s == pytest.approx(10.0, abs=0.5)  # the lie is what the probe sees
    wav = media.extract_audio(clip, tmp_path / "a.wav", info)
    assert _seconds(wav) <= media.read_limit_s(info) + 0.1 < 20  # not the 60 s the file holds
    web = media.make_web_copy(clip, tmp_path / "web.mp4", info)
    assert _seconds(web) < 20  # a stream copy stops at the packet past the limit: a keyframe interval over it at most
    honest = tmp_path / "honest.mp4"  # the same file, declared as it is, is read whole
    _ffmpeg("-f", "lavfi", "-i", "color=gray:s=64x48:r=1", "-f", "lavfi", "-i", "sine=f=440", "-t", "60",
            "-c:v", "libx264", "-c:a", "aac", str(honest))
    assert _seconds(media.extract_audio(honest, tmp_path / "b.wav", media.probe(honest))) == pytest.approx(60, abs=0.5)


def test_no_frame_larger_than_the_limit_is_decoded(tmp_path, monkeypatch):
    """A probe that saw small frames (here: told so) does not let ffmpeg decode larger ones later."""
    clip = tmp_path / "frames.mp4"
    _ffmpeg("-f", "lavfi", "-i", "testsrc2=s=640x480:r=2", "-t", "2", "-c:v", "libx264", str(clip))
    info = media.probe(clip)
    frame = tmp_path / "frame.png"
    decode = ["ffmpeg", "-nostdin", "-v", "error", "-y"]
    assert subprocess.run([*decode, *media.input_args(clip, info), "-frames:v", "1", str(frame)]).returncode == 0
    monkeypatch.setattr(media, "MAX_PIXELS", 64 * 48)
    small = dataclasses.replace(info, width=64, height=48)  # what a first SPS of 64×48 would show
    args = media.input_args(clip, small)
    assert args[args.index("-max_pixels") + 1] == str(64 * 48)
    frame.unlink()
    run = subprocess.run([*decode, *args, "-frames:v", "1", str(frame)], capture_output=True, text=True)
    assert run.returncode != 0 and "max pixel" in run.stderr and not frame.exists()


def test_a_pause_in_the_audio_timestamps_stays_a_pause(tmp_path):
    """Narration that stops for 5 s after its first 3 s (its timestamps jump; a browser plays it in sync):
    the extracted audio is 11 s long, with the second part where the video has it, not 6 s."""
    clip = tmp_path / "paused.mp4"
    _ffmpeg("-f", "lavfi", "-i", "color=gray:s=64x48:r=5", "-f", "lavfi", "-i", "sine=f=440",
            "-t", "11", "-af", "atrim=0:6,asetpts='if(gte(T,3),PTS+5/TB,PTS)'", "-c:v", "libx264", "-c:a", "aac",
            str(clip))
    info = media.probe(clip)
    wav = media.extract_audio(clip, tmp_path / "a.wav", info)
    assert _seconds(wav) == pytest.approx(11.0, abs=0.3)


def test_frames_a_second_past_the_largest_frame_at_sixty_are_refused(tmp_path):
    """Slide reading decodes every frame, so its cost is pixels a second: a hostile pass's 1.5 MB file
    of 60 s of 1080p at 600 fps held slide reading 30 s (a long one would hold it for hours). The probe
    reads the frame rate; more pixels a second than the largest frame at 60 a second is refused, and
    smaller frames may come faster."""
    fast, slow = tmp_path / "fast.mp4", tmp_path / "slow.mp4"
    for path, rate in ((fast, 240), (slow, 30)):
        _ffmpeg("-f", "lavfi", "-i", f"color=c=white:s=320x240:r={rate}:d=1", "-c:v", "libx264", "-preset", "ultrafast",
                str(path))
    fast_probe, slow_probe = media.probe(fast), media.probe(slow)
    assert fast_probe.frame_rate == 240 and slow_probe.frame_rate == 30
    limit = 640 * 480  # this frame at 240 a second is as many pixels as one four times larger at 60
    with pytest.raises(media.MediaError, match="240 frames a second of 320×240"):
        media.check_lecture_video(fast_probe, max_duration_s=60, needs_audio=False, max_pixels=320 * 240)
    media.check_lecture_video(fast_probe, max_duration_s=60, needs_audio=False, max_pixels=limit)
    media.check_lecture_video(slow_probe, max_duration_s=60, needs_audio=False, max_pixels=320 * 240)
