"""Slides of a lecture video: scene detection finds slide changes, OCR reads each distinct slide once.

Pipeline (all times in seconds from the start of the video):

1. ffmpeg makes a small proxy of the video (``sample_fps`` frames per second, 320 px wide, no
   audio), so scene detection costs seconds even for a 2-hour 1080p lecture;
2. PySceneDetect's ``AdaptiveDetector`` cuts the proxy into shots: a frame's content change (HSV +
   edges, the ``ContentDetector`` score) must be ``adaptive_threshold`` (3, the library default)
   times the average of its neighbours and at least ``min_content`` (1.0). A slide change scores
   about 2.5 on a white slide with new text against about 0.05 between frames of the same slide,
   far below ContentDetector's default threshold of 27, which is tuned for film cuts;
3. one full-resolution frame per shot (half a second in, or the middle of a short shot) is read
   by RapidOCR (``rapidocr`` carries its ONNX models); a frame whose difference hash
   (dHash, Krawetz 2013, "Kind of like that") is near one already read reuses that text, so a
   slide shown twice is OCR'd once;
4. shots with less than ``min_words`` confident words are not slides (a camera on a speaker or a
   blackboard; two are enough: a title slide "Binary heaps" is a slide), and consecutive shots with the same text merge (slide builds, a cursor moving).

A lecture without slides therefore yields no slides after one proxy pass and a handful of OCR
calls.
"""

from __future__ import annotations

import logging
import re
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from PIL import Image

from lecturecopilot import media
from lecturecopilot.slidetext import slide_sentence

log = logging.getLogger(__name__)

_ocr_engine = None
_ocr_lock = threading.Lock()  # one engine per process, shared by the slide readers running at once


@dataclass(frozen=True)
class Slide:
    """A slide on screen from ``start_s`` to ``end_s`` (seconds); ``lines`` are its OCR'd text lines
    top to bottom."""

    start_s: float
    end_s: float
    lines: tuple[str, ...]

    @property
    def text(self) -> str:
        """The slide as one sentence (see :func:`lecturecopilot.slidetext.slide_sentence`)."""
        return slide_sentence(self.lines)


def _ocr():
    global _ocr_engine
    if _ocr_engine is None:
        from rapidocr import RapidOCR

        _ocr_engine = RapidOCR()
    return _ocr_engine


def ocr_lines(image: Path, *, min_score: float = 0.6) -> list[str]:
    """Text lines RapidOCR reads in ``image`` with a recognition score of at least ``min_score``,
    top to bottom. Returns [] when nothing is read."""
    with _ocr_lock:  # RapidOCR is not documented as safe for concurrent calls: one at a time (each well under 1 s)
        result = _ocr()(str(image))
    txts = getattr(result, "txts", None) or ()
    scores = getattr(result, "scores", None) or ()
    boxes = getattr(result, "boxes", None)
    rows = []
    for i, (t, s) in enumerate(zip(txts, scores)):
        if s >= min_score and t.strip():
            top = float(min(p[1] for p in boxes[i])) if boxes is not None else float(i)
            left = float(min(p[0] for p in boxes[i])) if boxes is not None else 0.0
            rows.append((top, left, t.strip()))
    rows.sort()
    return [t for _, _, t in rows]


def dhash(image: Path, size: int = 32) -> int:
    """Difference hash of ``image``: ``size``×``size`` bits, 1 where a pixel is brighter than its
    right neighbour on a grey ``(size+1)``×``size`` thumbnail (Krawetz 2013)."""
    with Image.open(image) as im:
        g = im.convert("L").resize((size + 1, size), Image.Resampling.LANCZOS)
        px = list(g.get_flattened_data()) if hasattr(g, "get_flattened_data") else list(g.getdata())
    bits = 0
    for y in range(size):
        row = px[y * (size + 1):(y + 1) * (size + 1)]
        for x in range(size):
            bits = (bits << 1) | (row[x] > row[x + 1])
    return bits


def _shots(source: list[str], workdir: Path, sample_fps: float, min_content: float, min_shot_s: float,
           duration_s: float) -> list[tuple[float, float]]:
    from scenedetect import AdaptiveDetector, detect

    proxy = workdir / "slides-proxy.mp4"
    proc = subprocess.run(
        ["ffmpeg", "-nostdin", "-v", "error", "-y", *source, "-map", "0:v:0", "-an",
         "-vf", f"fps={sample_fps},scale=320:-2", "-c:v", "libx264", "-preset", "ultrafast", "-crf", "28",
         "-g", "1", str(proxy)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"making the slide-detection proxy failed: {proc.stderr.strip()[-300:]}")
    try:
        scenes = detect(str(proxy), AdaptiveDetector(adaptive_threshold=3.0, min_content_val=min_content,
                                                     min_scene_len=max(1, int(min_shot_s * sample_fps))))
        shots = [(float(s.seconds), float(e.seconds)) for s, e in scenes]
    finally:
        proxy.unlink(missing_ok=True)
    if not shots:  # no cut at all: one shot, the whole video
        shots = [(0.0, duration_s)]
    if shots:
        shots[-1] = (shots[-1][0], max(shots[-1][1], duration_s))
    return shots


def _grab(source: list[str], t_s: float, out: Path) -> Path:
    proc = subprocess.run(
        ["ffmpeg", "-nostdin", "-v", "error", "-y", "-ss", f"{t_s:.3f}", *source, "-frames:v", "1",
         "-vf", "scale='min(1280,iw)':-2", str(out)], capture_output=True, text=True)
    if proc.returncode != 0 or not out.exists():
        raise RuntimeError(f"reading a frame at {t_s:.1f} s failed: {proc.stderr.strip()[-300:]}")
    return out


def detect_slides(video: Path, *, duration_s: float, info: media.ProbeResult | None = None,
                  progress: Callable[[float], None] = lambda p: None,
                  sample_fps: float = 4.0, min_content: float = 1.0, min_shot_s: float = 1.5,
                  min_words: int = 2, same_slide_bits: int = 6, max_ocr: int = 400) -> list[Slide]:
    """Slides shown in ``video`` (user media, opened through :func:`lecturecopilot.media.input_args`
    as probed in ``info``; probed here when None), in time order.

    ``duration_s`` is the video's duration (seconds). Shot boundaries are accurate to
    ``1/sample_fps`` seconds. At most ``max_ocr`` shots are OCR'd (evenly spread) so a video with
    constant cuts stays bounded. Raises ``RuntimeError`` when ffmpeg cannot decode the video and
    :class:`lecturecopilot.media.MediaError` when it is not an accepted container.
    """
    source = media.input_args(video, info or media.probe(video))
    with tempfile.TemporaryDirectory(prefix="lc-slides-") as tmp_s:
        tmp = Path(tmp_s)
        shots = _shots(source, tmp, sample_fps, min_content, min_shot_s, duration_s)
        if len(shots) > max_ocr:
            step = len(shots) / max_ocr
            shots = [shots[int(i * step)] for i in range(max_ocr)]
        progress(0.1)
        seen: list[tuple[int, tuple[str, ...]]] = []  # (dhash, lines) of frames read so far
        found: list[Slide] = []
        ocr_calls = 0
        for i, (start, end) in enumerate(shots):
            t = start + min(0.5, max(0.0, (end - start) / 2))
            frame = _grab(source, min(t, max(0.0, duration_s - 0.05)), tmp / f"shot{i}.png")
            h = dhash(frame)
            lines = next((ls for hh, ls in seen if bin(hh ^ h).count("1") <= same_slide_bits), None)
            if lines is None:
                lines = tuple(ocr_lines(frame))
                ocr_calls += 1
                seen.append((h, lines))
            frame.unlink(missing_ok=True)
            progress(0.1 + 0.9 * (i + 1) / len(shots))
            if len(re.findall(r"[A-Za-z0-9]{2,}", " ".join(lines))) < min_words:
                continue
            if found and found[-1].lines == lines and abs(found[-1].end_s - start) < 1.0:
                found[-1] = Slide(found[-1].start_s, end, lines)
            else:
                found.append(Slide(start, end, lines))
        log.info("slides: %d shots, %d OCR calls, %d slides", len(shots), ocr_calls, len(found))
        return found
