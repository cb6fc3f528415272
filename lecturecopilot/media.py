"""ffprobe / ffmpeg helpers. ffmpeg and ffprobe come from Debian's ``ffmpeg`` package.

**What user media may be** (one policy, here): a file whose ffprobe ``format_name`` is on
:data:`CONTAINERS` — the MP4/MOV family (``.mp4``, ``.m4v``, ``.mov``) and Matroska/WebM
(``.mkv``, ``.webm``). ``services/ingest`` takes its extensions from :data:`VIDEO_EXTENSIONS`, the
upload form's ``accept=`` list is checked against it (``tests/unit/test_web_units.py``), and the
README says the same.

**How user media is opened**: every ffprobe/ffmpeg call on it goes through :func:`input_args`
(or, for the first probe, :data:`_GUARD`): ``-protocol_whitelist file`` (no network, no
``concat:``/``subfile:`` tricks), ``-format_whitelist mov,matroska`` (the playlist and sequence
demuxers — ``hls``, ``concat``, ``image2`` and its ``*_pipe`` cousins, ``gif`` — open other
files or are not lectures: they are refused before they read anything past the first 2 KiB),
and, after the probe, ``-f <demuxer>`` forced, so a file cannot pick another demuxer later. MOV
external data references (``dref`` atoms) stay off (``-enable_drefs 0``, also ffmpeg's default).
Matroska has no external references ffmpeg follows (attachments are read from the file itself).
"""

from __future__ import annotations

import json
import logging
import re
import subprocess
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from .settings import Settings

log = logging.getLogger(__name__)

# ffprobe format_name (libavformat's demuxer name) -> the demuxer later calls force with -f
CONTAINERS = {"mov,mp4,m4a,3gp,3g2,mj2": "mov", "matroska,webm": "matroska"}
VIDEO_EXTENSIONS = (".mp4", ".m4v", ".mov", ".webm", ".mkv")
CONTAINERS_LABEL = "MP4, MOV, WebM or MKV"
_GUARD = ["-protocol_whitelist", "file", "-format_whitelist", ",".join(sorted(set(CONTAINERS.values())))]
# what a refused demuxer is, for the uploader (libavformat demuxer names)
_REFUSED_KINDS = {
    "hls": "an HLS playlist (a list of other files)",
    "concat": "an ffconcat playlist (a list of other files)",
    "image2": "an image sequence", "gif": "an animated GIF image", "apng": "an animated PNG image",
    "webp_pipe": "a WebP image", "tty": "a text file",
}
_NOT_ON_WHITELIST = re.compile(r"^\[(?P<name>[^@\]]+?) @ 0x[0-9a-f]+\] Format not on whitelist", re.M)


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
    frame_rate: float | None = None  # the video's average frames a second; None when ffprobe cannot tell

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


def refusal(format_name: str) -> str:
    """The uploader's message for a file whose ffprobe format (demuxer name) is not on
    :data:`CONTAINERS`."""
    kind = _REFUSED_KINDS.get(format_name)
    if kind is None and (format_name.endswith("_pipe") or format_name.startswith("image2")):
        kind = "an image or an image sequence"
    kind = kind or f"in the {format_name!r} format"
    return f"The file is {kind}; lectures are accepted as {CONTAINERS_LABEL} video files only."


def probe(path: Path) -> ProbeResult:
    """Runs ffprobe on ``path`` (user media: local file protocol only, and only the demuxers of
    :data:`CONTAINERS`, see the module docstring).

    Raises :class:`MediaError` when the file is empty, unreadable, not a media file, or in a
    format that is not on :data:`CONTAINERS` (a playlist, an image sequence...).
    """
    if not path.exists() or path.stat().st_size == 0:
        raise MediaError("The file is empty.")
    proc = subprocess.run(
        ["ffprobe", "-hide_banner", "-v", "error", *_GUARD, "-print_format", "json", "-show_format",
         "-show_streams", str(path)],
        capture_output=True, text=True, timeout=60,
    )
    if proc.returncode != 0:
        if refused := _NOT_ON_WHITELIST.search(proc.stderr):
            raise MediaError(refusal(refused["name"].strip()))
        detail = (proc.stderr.strip().splitlines() or ["unknown error"])[-1]
        raise MediaError(f"The file is not a readable video ({detail[:200]}).")
    info = json.loads(proc.stdout or "{}")
    fmt = info.get("format") or {}
    if fmt.get("format_name", "") not in CONTAINERS:  # the whitelist already refuses them; the allow-list decides
        raise MediaError(refusal(fmt.get("format_name", "")))
    streams = info.get("streams") or []
    video = next((s for s in streams if s.get("codec_type") == "video"
                  and not (s.get("disposition") or {}).get("attached_pic")), None)
    audio = next((s for s in streams if s.get("codec_type") == "audio"), None)
    try:
        duration = float(fmt.get("duration") or (video or audio or {}).get("duration") or 0.0)
    except ValueError:
        duration = 0.0
    return ProbeResult(
        format_name=fmt["format_name"],
        duration_s=duration,
        video_codec=video.get("codec_name") if video else None,
        audio_codec=audio.get("codec_name") if audio else None,
        width=video.get("width") if video else None,
        height=video.get("height") if video else None,
        audio_start_s=float(audio.get("start_time") or 0.0) if audio else 0.0,
        video_start_s=float(video.get("start_time") or 0.0) if video else 0.0,
        frame_rate=_rate(video.get("avg_frame_rate")) if video else None,
    )


def _rate(text: str | None) -> float | None:
    """ffprobe's ``"30000/1001"`` as frames a second; None for ``"0/0"``, nothing or nonsense."""
    try:
        rate = float(Fraction(text)) if text else 0.0
    except (ValueError, ZeroDivisionError):
        return None
    return rate if rate > 0 else None


MAX_PIXELS = Settings.model_fields["max_video_pixels"].default  # the largest frame (width × height) checked: 4K UHD
# Frames a second of the largest frame accepted: reading slides decodes every frame, so its cost is pixels a
# second; a file of 60 s of 1080p at 600 fps (1.5 MB) took 30 s of decoding. Smaller frames may come faster.
MAX_FPS = 60
# What a file may run past the duration its header declares (seconds, and a share of it): streams end a
# little after the container's duration; more is a header that lies (see input_args).
DURATION_SLACK_S, DURATION_SLACK_SHARE = 5.0, 0.01


def read_limit_s(result: ProbeResult) -> float:
    """The most seconds of a file probed as ``result`` that ffmpeg reads: its declared duration plus
    :data:`DURATION_SLACK_S` or :data:`DURATION_SLACK_SHARE` of it, whichever is more."""
    return result.duration_s + max(DURATION_SLACK_S, DURATION_SLACK_SHARE * result.duration_s)


def input_args(path: Path, result: ProbeResult) -> list[str]:
    """ffmpeg input options ending in ``-i path`` for user media that :func:`probe` accepted as
    ``result``: the protocol and format whitelists plus ``-f <demuxer>`` forced from
    :data:`CONTAINERS` (and MOV data references off); no frame over :data:`MAX_PIXELS` decoded
    (``-max_pixels``: a stream whose first frames are small may switch to huge ones after the
    probe; a larger probed frame, accepted by a raised ``LC_MAX_VIDEO_PIXELS``, is the limit then);
    nothing read past :func:`read_limit_s` (``-t``: a header may declare one minute of a file that
    holds hundreds of hours, past the length limit and the disk budget). Options such as
    ``-ss`` go before them. Raises :class:`MediaError` for a format not on :data:`CONTAINERS`."""
    demuxer = CONTAINERS.get(result.format_name)
    if demuxer is None:
        raise MediaError(refusal(result.format_name))
    drefs = ["-enable_drefs", "0"] if demuxer == "mov" else []
    pixels = max(MAX_PIXELS, (result.width or 0) * (result.height or 0))
    return [*_GUARD, "-max_pixels", str(pixels), "-t", f"{read_limit_s(result):.3f}", "-f", demuxer, *drefs,
            "-i", str(path)]


def _ffmpeg(args: list[str], *, what: str, timeout: float | None = None) -> subprocess.CompletedProcess:
    """Runs ``ffmpeg -nostdin -hide_banner -v error <args>``; on failure logs ffmpeg's own text and
    raises :class:`MediaError` with our sentence ``what``."""
    proc = subprocess.run(["ffmpeg", "-nostdin", "-hide_banner", "-v", "error", *args],
                          capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        log.warning("ffmpeg failed (%s): %s", what, proc.stderr.strip()[-500:])
        raise MediaError(what)
    return proc


def check_lecture_video(result: ProbeResult, *, max_duration_s: float, needs_audio: bool = True,
                        max_pixels: int = MAX_PIXELS) -> None:
    """Refuses what the pipeline cannot process. Raises :class:`MediaError` with the reason.
    ``needs_audio=False`` when captions come with the video (nothing to transcribe then);
    ``max_pixels``: the largest frame (width × height) accepted (a 300 KB file of 16000×16000 frames
    took 2 GB to read slides from); no more pixels a second than that frame at :data:`MAX_FPS` frames a
    second (slide reading decodes every frame)."""
    if result.video_codec is None:
        raise MediaError(f"The file has no video stream; upload a lecture video ({CONTAINERS_LABEL}).")
    if (result.width or 0) * (result.height or 0) > max_pixels:
        raise MediaError(f"The video's frames are {result.width}×{result.height}; the largest accepted is "
                         f"{max_pixels / 1e6:.1f} megapixels (3840×2160). Re-encode it smaller, e.g. "
                         f"ffmpeg -i in.mp4 -vf scale=-2:1080 out.mp4.")
    if result.frame_rate and (result.width or 0) * (result.height or 0) * result.frame_rate > max_pixels * MAX_FPS:
        raise MediaError(f"The video has {result.frame_rate:.0f} frames a second of {result.width}×{result.height}; "
                         f"the most accepted is the largest frame at {MAX_FPS} frames a second (or smaller frames "
                         f"faster). Re-encode it, e.g. ffmpeg -i in.mp4 -r 30 out.mp4.")
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
        ["ffmpeg", "-nostdin", "-v", "error", "-ss", f"{start:.3f}", *input_args(path, result), "-t", f"{tail_s:.3f}",
         "-map", "0:v:0?", "-map", "0:a:0?", "-f", "null", "-", "-progress", "pipe:1"],
        capture_output=True, text=True, timeout=120,
    )
    got = [int(v) for v in re.findall(r"^out_time_us=(\d+)$", proc.stdout, re.M)]
    if not got or max(got) == 0:
        raise MediaError(
            f"The file is cut short: nothing can be read near its end ({start:.0f} s) although it declares "
            f"{result.duration_s:.0f} s. The upload or copy may have been interrupted; upload the complete file.")


def extract_audio(src: Path, dst: Path, result: ProbeResult) -> Path:
    """Writes 16 kHz mono 16-bit PCM WAV of ``src``'s first audio stream (probed as ``result``)
    to ``dst``, on the stream's own clock: a gap in its timestamps becomes silence (``aresample``'s
    ``async``), so a time in the WAV plus ``result.audio_offset_s`` is the time in the video (a
    trial's audio paused 5 s at every slide change and every citation after the first slide fell up to
    35 s early). Raises :class:`MediaError` when ffmpeg fails (its text goes to the log)."""
    _ffmpeg(["-y", *input_args(src, result), "-map", "0:a:0", "-vn", "-af", "aresample=async=1", "-ac", "1",
             "-ar", "16000", "-c:a", "pcm_s16le", str(dst)],
            what="The lecture's audio could not be decoded; the file may be damaged. Upload it again.")
    return dst


def make_web_copy(src: Path, dst: Path, result: ProbeResult) -> Path:
    """A browser-playable MP4 of ``src`` at ``dst``: a stream copy (with the index moved to the
    front for fast seeking) when it is already H.264/AAC, else an H.264/AAC transcode.

    Raises :class:`MediaError` when ffmpeg fails (its text goes to the log).
    """
    if result.web_playable:
        codec = ["-c", "copy"]
    else:
        codec = ["-c:v", "libx264", "-preset", "veryfast", "-crf", "26", "-vf", "scale=-2:'min(720,ih)'",
                 "-c:a", "aac", "-b:a", "96k"]
    _ffmpeg(["-y", *input_args(src, result), *codec, "-movflags", "+faststart", str(dst)],
            what="The browser copy of the video could not be made.")
    return dst
