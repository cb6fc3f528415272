"""ffprobe / ffmpeg helpers. ffmpeg and ffprobe come from Debian's ``ffmpeg`` package."""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path


class MediaError(ValueError):
    """The file cannot be processed; ``str(err)`` is a message fit for the uploader."""


@dataclass(frozen=True)
class ProbeResult:
    """What ffprobe says of a media file. ``duration_s`` in seconds; codecs are ffprobe names."""

    format_name: str
    duration_s: float
    video_codec: str | None
    audio_codec: str | None
    width: int | None
    height: int | None
    audio_start_s: float
    video_start_s: float = 0.0

    @property
    def audio_offset_s(self) -> float:
        """Seconds of the container timeline before the audio starts (an audio stream that starts
        after the video). Times measured on the extracted audio add this to land on the video."""
        if self.audio_codec is None:
            return 0.0
        if self.video_codec is None:
            return 0.0
        return max(0.0, self.audio_start_s - min(self.video_start_s, self.audio_start_s))

    @property
    def has_audio(self) -> bool:
        return self.audio_codec is not None

    @property
    def web_playable(self) -> bool:
        """H.264 video + AAC audio in an MP4/MOV container: browsers play it as is."""
        return (self.video_codec == "h264" and self.audio_codec in ("aac", None)
                and "mp4" in self.format_name)


def probe(path: Path) -> ProbeResult:
    """Runs ffprobe on ``path``.

    Raises :class:`MediaError` when the file is empty, unreadable or not a media file.
    """
    if not path.exists() or path.stat().st_size == 0:
        raise MediaError("The file is empty.")
    proc = subprocess.run(
        ["ffprobe", "-v", "error", "-print_format", "json", "-show_format", "-show_streams", str(path)],
        capture_output=True, text=True, timeout=60,
    )
    if proc.returncode != 0:
        detail = (proc.stderr.strip().splitlines() or ["unknown error"])[-1]
        raise MediaError(f"The file is not a readable video ({detail[:200]}).")
    info = json.loads(proc.stdout or "{}")
    fmt = info.get("format") or {}
    streams = info.get("streams") or []
    video = next((s for s in streams if s.get("codec_type") == "video"
                  and not (s.get("disposition") or {}).get("attached_pic")), None)
    audio = next((s for s in streams if s.get("codec_type") == "audio"), None)
    try:
        duration = float(fmt.get("duration") or (video or audio or {}).get("duration") or 0.0)
    except ValueError:
        duration = 0.0
    return ProbeResult(
        format_name=fmt.get("format_name", ""),
        duration_s=duration,
        video_codec=video.get("codec_name") if video else None,
        audio_codec=audio.get("codec_name") if audio else None,
        width=video.get("width") if video else None,
        height=video.get("height") if video else None,
        audio_start_s=float(audio.get("start_time") or 0.0) if audio else 0.0,
        video_start_s=float(video.get("start_time") or 0.0) if video else 0.0,
    )


def check_lecture_video(result: ProbeResult, *, max_duration_s: float, needs_audio: bool = True) -> None:
    """Refuses what the pipeline cannot process. Raises :class:`MediaError` with the reason.
    ``needs_audio=False`` when captions come with the video (nothing to transcribe then)."""
    if result.video_codec is None:
        raise MediaError("The file has no video stream; upload a lecture video (MP4, MOV or WebM).")
    if needs_audio and not result.has_audio:
        raise MediaError("The video has no audio track, so there is nothing to transcribe.")
    if result.duration_s <= 0:
        raise MediaError("The video's duration could not be read; the file may be truncated.")
    if result.duration_s > max_duration_s:
        raise MediaError(
            f"The video is {result.duration_s / 3600:.1f} h long; the limit is {max_duration_s / 3600:.1f} h.")


def check_complete(path: Path, result: ProbeResult, *, tail_s: float = 2.0) -> None:
    """Refuses a file cut short: its header declares ``result.duration_s`` seconds but nothing
    can be decoded in its last ``tail_s`` seconds (an interrupted copy of an MP4 whose index sits
    at the front). ffmpeg seeks there and decodes video and audio to nowhere (``-f null``); its
    ``-progress`` report gives the time decoded. Raises :class:`MediaError`."""
    start = max(0.0, result.duration_s - tail_s - 1.0)
    proc = subprocess.run(
        ["ffmpeg", "-nostdin", "-v", "error", "-ss", f"{start:.3f}", "-i", str(path), "-t", f"{tail_s:.3f}",
         "-map", "0:v:0?", "-map", "0:a:0?", "-f", "null", "-", "-progress", "pipe:1"],
        capture_output=True, text=True, timeout=120,
    )
    got = [int(v) for v in re.findall(r"^out_time_us=(\d+)$", proc.stdout, re.M)]
    if not got or max(got) == 0:
        raise MediaError(
            f"The file is cut short: nothing can be read near its end ({start:.0f} s) although it declares "
            f"{result.duration_s:.0f} s. The upload or copy may have been interrupted; upload the complete file.")


def extract_audio(src: Path, dst: Path) -> Path:
    """Writes 16 kHz mono 16-bit PCM WAV of ``src``'s first audio stream to ``dst``.

    Raises :class:`MediaError` when ffmpeg fails.
    """
    proc = subprocess.run(
        ["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", str(src), "-map", "0:a:0", "-vn",
         "-ac", "1", "-ar", "16000", "-c:a", "pcm_s16le", str(dst)],
        capture_output=True, text=True,
    )
    if proc.returncode != 0:
        raise MediaError(f"Audio extraction failed: {proc.stderr.strip()[-300:]}")
    return dst


def make_web_copy(src: Path, dst: Path, result: ProbeResult) -> Path:
    """A browser-playable MP4 of ``src`` at ``dst``: a stream copy (with the index moved to the
    front for fast seeking) when it is already H.264/AAC, else an H.264/AAC transcode.

    Raises :class:`MediaError` when ffmpeg fails.
    """
    if result.web_playable:
        codec = ["-c", "copy"]
    else:
        codec = ["-c:v", "libx264", "-preset", "veryfast", "-crf", "26", "-vf", "scale=-2:'min(720,ih)'",
                 "-c:a", "aac", "-b:a", "96k"]
    proc = subprocess.run(
        ["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", str(src), *codec, "-movflags", "+faststart", str(dst)],
        capture_output=True, text=True,
    )
    if proc.returncode != 0:
        raise MediaError(f"Making the web copy failed: {proc.stderr.strip()[-300:]}")
    return dst
