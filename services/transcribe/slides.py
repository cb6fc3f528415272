"""Slides of a lecture video: every slide change found from where text appears, each distinct slide
OCR'd once.

Pipeline (all times in seconds from the start of the video):

1. ffmpeg decodes the video once into small grey frames (``sample_fps`` frames per second,
   ``proxy_width`` pixels wide) read from a pipe; nothing is written to disk;
2. each frame becomes an *ink map*: the pixels whose brightness differs from their neighbourhood's
   mean (a box of ``2·3+1`` pixels) by more than ``ink_contrast`` grey levels. That marks the
   strokes of text and line art on any background (black on white, white on dark, coloured
   templates) and ignores flat colour and gradients. Two ink maps are compared with hysteresis: a
   pixel has changed when it is clear ink in one frame and not even faint ink (half the contrast)
   in the other, so noise and re-encoding around glyphs do not count;
3. the frame is cut into a grid of cells (16 across). A cell is *stable* when its ink has not
   changed for ``stable_s`` seconds. A new slide starts when the stable cells hold at least
   ``min_change`` (a share of the frame's pixels) of ink that the current slide's key frame does
   not have, or lacks ink it had. So a slide whose text changes on the same template, a bullet
   added to a build, 18 px text at 1080p and a dark theme are all changes, while what never stays
   still (a speaker's picture-in-picture, a video, a moving pointer) never takes part, and what
   is still (the template, the logo) cancels out. A screen recording yields a slide each time the
   screen rests. This is the frame-differencing-on-stable-frames idea of lecture indexers such as
   TalkMiner (Adcock et al., "TalkMiner: a lecture webcast search engine", ACM MM 2010), on ink
   maps instead of raw pixels;
4. the key frame of each change is read at full resolution (up to 1920 px wide) by RapidOCR
   (``rapidocr`` carries its ONNX models), once per distinct slide: a key frame whose ink matches
   an earlier key frame's (same comparison) reuses its text, so a slide shown twice is OCR'd once;
5. key frames with fewer than ``min_words`` confident words are not slides (a camera on the
   speaker, a board) and end the slide before them; a key frame that differs from the one before
   only inside a box of ``POINTER_CELLS`` × ``POINTER_CELLS`` cells (a laser dot or mouse arrow that came
   to rest) keeps its text without OCR; consecutive key frames with the same lines (each line of one
   nearly a line of the other) merge (a pointer over a word, a speaker who stepped in front and left); a build step (the
   previous slide's lines plus new ones, same title) keeps the title and the new lines only, so
   each line is cited where it appeared.

The cost is one decode of the video plus a few array operations per sampled frame and one OCR
call per distinct slide (at most ``max_ocr``).
"""

from __future__ import annotations

import logging
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import numpy as np
from PIL import Image, ImageFilter
from rapidfuzz import fuzz

from lecturecopilot import media
from lecturecopilot.slidetext import recurring_lines, slide_sentence, without_recurring

from .ocr import joined_rows, ocr_text_lines

log = logging.getLogger(__name__)

GRID_COLUMNS = 16  # cells across the frame; rows follow the aspect ratio


@dataclass(frozen=True)
class Slide:
    """A slide on screen from ``start_s`` to ``end_s`` (seconds); ``lines`` are its OCR'd text lines
    in reading order (:func:`.ocr.reading_order`)."""

    start_s: float
    end_s: float
    lines: tuple[str, ...]

    @property
    def text(self) -> str:
        """The slide as one sentence (see :func:`lecturecopilot.slidetext.slide_sentence`)."""
        return slide_sentence(self.lines)


@dataclass
class InkFrame:
    """A sampled frame's ink: ``ink`` (H×W bool, strokes of clear contrast) and ``faint`` (H×W bool,
    strokes of any contrast: a superset of ``ink``)."""

    ink: np.ndarray
    faint: np.ndarray


def ink_frame(gray: np.ndarray, *, contrast: int = 32) -> InkFrame:
    """The ink of a grey frame (H×W uint8): pixels differing from the mean of the 7×7 box around them
    by more than ``contrast`` grey levels (``ink``), or by more than half that (``faint``)."""
    blur = np.asarray(Image.fromarray(gray).filter(ImageFilter.BoxBlur(3)), dtype=np.int16)
    diff = np.abs(gray.astype(np.int16) - blur)
    return InkFrame(diff > contrast, diff > contrast // 2)


def changed_cells(a: InkFrame, b: InkFrame, cell: int) -> np.ndarray:
    """Per grid cell (rows × columns, ``cell`` pixels square), the pixels of clear ink in one frame
    that are not even faint ink in the other (both ways: text added and text removed). The gap between
    the two contrasts is the tolerance: noise and re-encoding move a pixel's contrast a little, text
    that changes moves it a lot."""
    diff = (b.ink & ~a.faint) | (a.ink & ~b.faint)
    h, w = diff.shape
    return diff.reshape(h // cell, cell, w // cell, cell).sum(axis=(1, 3))


def _proxy_size(info: media.ProbeResult, width: int) -> tuple[int, int, int]:
    """(width, height, cell) of the grey proxy: ``width`` wide (never upscaled below 320), the
    video's aspect, both multiples of the cell size."""
    w0, h0 = info.width or 16, info.height or 9
    w = max(320, min(width, w0 if w0 >= 320 else 320))
    cell = w // GRID_COLUMNS
    w = cell * GRID_COLUMNS
    rows = max(1, round(w * h0 / w0 / cell))
    return w, rows * cell, cell


def _frames(source: list[str], size: tuple[int, int], sample_fps: float) -> Iterator[tuple[float, np.ndarray]]:
    """(time s, H×W uint8 grey frame) at ``sample_fps``, decoded by one ffmpeg process."""
    w, h = size
    proc = subprocess.Popen(
        ["ffmpeg", "-nostdin", "-v", "error", *source, "-map", "0:v:0", "-an", "-vf",
         f"fps={sample_fps},scale={w}:{h}:flags=area,format=gray", "-f", "rawvideo", "pipe:1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    n = 0
    try:
        while True:
            buf = proc.stdout.read(w * h)
            if len(buf) < w * h:
                break
            yield n / sample_fps, np.frombuffer(buf, dtype=np.uint8).reshape(h, w)
            n += 1
    finally:
        proc.stdout.close()
        err = proc.stderr.read().decode(errors="replace")
        proc.stderr.close()
        code = proc.wait()
    if code != 0 and n == 0:
        raise RuntimeError(f"decoding the video for slide detection failed: {err.strip()[-300:]}")


@dataclass(frozen=True)
class SlideOptions:
    """The tuning of slide detection (each explained in the module docstring; the defaults are the
    tuned ones, see ``evals/slides_bench.py``): ``sample_fps`` frames per second decoded,
    ``proxy_width`` pixels wide; a cell is stable after ``stable_s`` seconds without change; a new
    slide needs ``min_change`` × the frame's pixels of changed stable ink; ink is ``ink_contrast``
    grey levels off its neighbourhood; a cell with more than ``cell_noise`` changed pixels changed;
    a cell is busy when it moved in more than ``busy_share`` of the frames of the last
    ``busy_window_s`` seconds; a key frame with fewer than ``min_words`` words is not a slide; at
    most ``max_ocr`` key frames are OCR'd."""

    sample_fps: float = 2.0
    proxy_width: int = 640
    stable_s: float = 1.0
    min_change: float = 0.0008
    ink_contrast: int = 32
    cell_noise: int = 3
    busy_window_s: float = 20.0
    busy_share: float = 0.2
    min_words: int = 2
    max_ocr: int = 400


DEFAULT_OPTIONS = SlideOptions()


@dataclass
class KeyFrame:
    """A key frame: when its slide began and when the frame was taken (s), its ink, and its
    ``busy`` cells (rows × columns bool: cells that keep moving, such as a speaker's picture)."""

    start_s: float
    taken_s: float
    frame: InkFrame
    busy: np.ndarray


def key_frames(frames: Iterator[tuple[float, np.ndarray]], *, cell: int, options: SlideOptions = DEFAULT_OPTIONS,
               progress: Callable[[float], None] = lambda t: None) -> list[KeyFrame]:
    """The key frames of a stream of (time s, H×W uint8 grey frame) in cells of ``cell`` pixels
    (``stable_s``, ``min_change``, ``ink_contrast``, ``cell_noise``, ``busy_window_s`` and
    ``busy_share`` of ``options``): the first frame, then each frame
    whose stable cells (no ink change for ``stable_s`` s) differ from the last key frame by at least
    ``min_change`` × the frame's pixels, or a quarter of a sparse slide's ink (see the module docstring). A cell is *busy* when it moved in
    more than ``busy_share`` of the frames of the last ``busy_window_s`` seconds (an exponential
    moving average): busy cells never count, even in a moment of rest. ``progress`` gets each
    frame's time (s). A key frame's ``start_s`` is when most of its changed ink last changed: when the
    new text appeared."""
    o = options
    stable_s, min_change, cell_noise, busy_window_s, busy_share = (o.stable_s, o.min_change, o.cell_noise,
                                                                   o.busy_window_s, o.busy_share)
    keys: list[KeyFrame] = []
    prev: InkFrame | None = None
    last_change = activity = np.zeros(0)
    t_prev = 0.0
    for t, gray in frames:
        cur = ink_frame(gray, contrast=o.ink_contrast)
        progress(t)
        if prev is None:
            last_change = np.full(changed_cells(cur, cur, cell).shape, t)
            activity = np.zeros(last_change.shape)
            keys.append(KeyFrame(t, t, cur, activity > busy_share))
            prev, t_prev = cur, t
            continue
        moving = changed_cells(prev, cur, cell) > cell_noise
        alpha = min(1.0, (t - t_prev) / busy_window_s)
        activity = (1 - alpha) * activity + alpha * moving
        last_change[moving] = t
        prev, t_prev = cur, t
        busy = activity > busy_share
        stable = ((t - last_change) >= stable_s - 1e-6) & ~busy
        against = changed_cells(keys[-1].frame, cur, cell)
        counted = stable & (against > cell_noise)
        if against[counted].sum() >= _needed(keys[-1].frame, cur, busy, cell, min_change):
            keys.append(KeyFrame(_weighted_median(last_change[counted], against[counted]), t, cur, busy))
    return keys


def _needed(key: InkFrame, cur: InkFrame, busy: np.ndarray, cell: int, min_change: float) -> float:
    """Changed pixels that make a new slide: ``min_change`` × the frame's pixels, or on a sparse slide
    (18 px text at 1080p holds a few hundred pixels of ink at the proxy's size) a quarter of its ink,
    but never under a quarter of ``min_change`` (a mouse pointer's outline)."""
    rows, cols = busy.shape
    quiet = np.repeat(np.repeat(~busy, cell, axis=0), cell, axis=1)[:rows * cell, :cols * cell]
    ink = max(int((key.ink & quiet).sum()), int((cur.ink & quiet).sum()))
    size = cur.ink.size
    return min(min_change * size, max(min_change / 4 * size, ink / 4))


def _weighted_median(values: np.ndarray, weights: np.ndarray) -> float:
    order = np.argsort(values)
    cum = np.cumsum(weights[order])
    return float(values[order][np.searchsorted(cum, cum[-1] / 2)])


def _grab(source: list[str], t_s: float, out: Path) -> Path:
    proc = subprocess.run(
        ["ffmpeg", "-nostdin", "-v", "error", "-y", "-ss", f"{t_s:.3f}", *source, "-frames:v", "1",
         "-vf", "scale='min(1920,iw)':-2", str(out)], capture_output=True, text=True)
    if proc.returncode != 0 or not out.exists():
        raise RuntimeError(f"reading a frame at {t_s:.1f} s failed: {proc.stderr.strip()[-300:]}")
    return out


def _same_line(a: str, b: str) -> bool:
    return fuzz.ratio(a.lower(), b.lower()) >= 90


def _same_lines(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """True when every line of each is (nearly) a line of the other: one slide read twice, a pointer
    over a word the second time."""
    return all(any(_same_line(x, y) for y in b) for x in a) and all(any(_same_line(y, x) for x in a) for y in b)


def _hidden_part(before: tuple[str, ...], after: tuple[str, ...]) -> bool:
    """True when ``after`` reads fewer lines than ``before`` and each of them (bar scraps without two
    letters or digits in a row, such as a pointer read as "4") is one of ``before``'s: the same slide
    with something in front of part of it."""
    kept = [a for a in after if re.search(r"[A-Za-z0-9]{2,}", a)]
    return len(kept) < len(before) and all(any(_same_line(a, b) for b in before) for a in kept)


POINTER_CELLS = 2  # a change within this many cells each way (1/8 of the frame's width) is a pointer


def _small_change(before: KeyFrame, after: KeyFrame, cell: int) -> bool:
    """True when what changed between two key frames fits in a box of ``POINTER_CELLS`` × ``POINTER_CELLS``
    cells: a laser dot or mouse arrow that came to rest, not a slide (its text is not read again)."""
    moved = np.argwhere(changed_cells(before.frame, after.frame, cell) > 3)
    if len(moved) == 0:
        return True
    (r0, c0), (r1, c1) = moved.min(axis=0), moved.max(axis=0)
    return r1 - r0 < POINTER_CELLS and c1 - c0 < POINTER_CELLS


def _build_step(before: tuple[str, ...], after: tuple[str, ...]) -> tuple[str, ...] | None:
    """When ``after`` is ``before`` with lines added (same first line, every earlier line still
    there): the first line and the added lines. Else None."""
    if len(after) <= len(before) or not before or not _same_line(before[0], after[0]):
        return None
    if not all(any(_same_line(b, a) for a in after) for b in before):
        return None
    added = tuple(a for a in after[1:] if not any(_same_line(a, b) for b in before))
    return (after[0], *added) if added else None


def detect_slides(video: Path, *, duration_s: float, info: media.ProbeResult | None = None,
                  progress: Callable[[float], None] = lambda p: None,
                  options: SlideOptions = DEFAULT_OPTIONS) -> list[Slide]:
    """Slides shown in ``video`` (user media, opened through :func:`lecturecopilot.media.input_args`
    as probed in ``info``; probed here when None), in time order.

    ``duration_s`` is the video's duration (seconds). Slide starts are accurate to about
    ``1/options.sample_fps`` seconds. At most ``options.max_ocr`` key frames are OCR'd (evenly spread) so a video
    that never rests stays bounded; ``progress`` gets 0–1. Raises ``RuntimeError`` when ffmpeg cannot
    decode the video and :class:`lecturecopilot.media.MediaError` when it is not an accepted
    container. See the module docstring for the method and :class:`SlideOptions` for its parameters.
    """
    sample_fps, proxy_width, min_change, min_words, max_ocr = (options.sample_fps, options.proxy_width,
                                                               options.min_change, options.min_words, options.max_ocr)
    info = info or media.probe(video)
    source = media.input_args(video, info)
    w, h, cell = _proxy_size(info, proxy_width)
    span = max(duration_s, 1e-6)
    keys = key_frames(_frames(source, (w, h), sample_fps), cell=cell, options=options,
                      progress=lambda t: progress(0.7 * min(1.0, t / span)))
    if len(keys) > max_ocr:
        step = len(keys) / max_ocr
        keys = [keys[int(i * step)] for i in range(max_ocr)]
    read: list[tuple[InkFrame, tuple[str, ...]]] = []
    found: list[Slide] = []
    shown: list[tuple[str, ...]] = []  # each found slide's lines as read (a build step's whole slide)
    ocr_calls = 0
    found_lines: tuple[str, ...] | None = None  # the previous key frame's lines
    with tempfile.TemporaryDirectory(prefix="lc-slides-") as tmp_s:
        for i, key in enumerate(keys):
            end = keys[i + 1].start_s if i + 1 < len(keys) else max(duration_s, key.taken_s)
            lines = found_lines if i and found_lines is not None and _small_change(keys[i - 1], key, cell) else None
            lines = lines or next((ls for f, ls in read
                                   if changed_cells(f, key.frame, cell).sum() < min_change * f.ink.size), None)
            if lines is None:
                frame = _grab(source, min(key.taken_s, max(0.0, duration_s - 0.05)), Path(tmp_s) / f"key{i}.png")
                rows, cols = key.busy.shape
                lines = tuple(joined_rows([ln for ln in ocr_text_lines(frame) if not key.busy[
                    min(rows - 1, int(ln.y * rows)), min(cols - 1, int(ln.x * cols))]]))
                frame.unlink(missing_ok=True)
                ocr_calls += 1
                read.append((key.frame, lines))
            found_lines = lines
            progress(0.7 + 0.3 * (i + 1) / len(keys))
            if len(re.findall(r"[A-Za-z0-9]{2,}", " ".join(lines))) < min_words:
                continue
            last = found[-1] if found and abs(found[-1].end_s - key.start_s) < 1.0 else None
            if last is not None and (_same_lines(shown[-1], lines) or _hidden_part(shown[-1], lines)):
                found[-1] = Slide(last.start_s, end, last.lines)
                continue
            step = _build_step(shown[-1], lines) if last is not None else None
            found.append(Slide(key.start_s, end, step or lines))
            shown.append(lines)
    log.info("slides: %d key frames, %d OCR calls, %d slides", len(keys), ocr_calls, len(found))
    return found


def without_footers(found: list[Slide]) -> list[Slide]:
    """``found`` (a lecture's slides, :func:`detect_slides`) without the lines its slides repeat below
    their first (a footer or running header: :func:`lecturecopilot.slidetext.recurring_lines`), which
    are layout, not what a slide says; a slide left with no line is dropped."""
    recurring = recurring_lines([s.lines for s in found])
    return [Slide(s.start_s, s.end_s, kept) for s in found if (kept := without_recurring(s.lines, recurring))]
