"""The text of a slide image: RapidOCR's boxes (:func:`ocr_text_lines`) in reading order.

Sorting boxes by their top edge reads a slide with two columns across both: the bullets on the left
and the table beside them come out interleaved ("Real rate equals nominal rate", "Year", "Rate",
"Inflation", "minus inflation", "2019", …), and a table's cells come out in whatever order their
tops happen to fall. :func:`reading_order` is a recursive XY-cut (G. Nagy and S. Seth, "Hierarchical
representation of optically scanned documents", ICPR 1984): a set of boxes is cut where a band of
the page crosses no box, and each side is read in turn, top before bottom, left before right:
first at the topmost wide horizontal gap (:data:`PARAGRAPH_GAP`: below a title, so that a title
over both columns does not hide their gutter, nor a title narrower than the slide make one).

A vertical band with no box is not always a column gutter: the gaps between a table's cells and
between a bullet and its text are such bands too. Rows tell them apart: beside a gutter, the lines
on one side do not line up with the lines on the other (two columns are typeset on their own),
while the cells of a table row and a bullet and its item share a line. So a vertical cut
(the widest first) is taken only where the runs of boxes on its two sides do not share rows: fewer
than :data:`ALIGNED_SHARE` of the rows of the run with fewer meet a row of the other within a
quarter of a line's height (:data:`ROW_TOLERANCE`). Otherwise the topmost line is cut off at the
first (narrow) horizontal gap, and boxes no band separates are read as rows, left to right.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from statistics import median

from PIL import Image

#: A row of one side "meets" a row of the other when their centres are this many line heights apart
#: or less. Cells of one table row differ by a tenth of a line (ascenders, descenders); lines of two
#: independently typeset columns fall anywhere in between their line pitch (1.2–1.6 heights).
ROW_TOLERANCE = 0.25

#: A horizontal gap of this many line heights or more (below a title, between paragraphs) is cut
#: before columns are looked for; the space between the lines of a paragraph is a third of a line.
PARAGRAPH_GAP = 0.8

#: The share of the smaller side's rows meeting a row of the other side from which a vertical gap is
#: taken for the space inside rows (a table, bullets) rather than a gutter between columns.
ALIGNED_SHARE = 0.75


_ocr_engine = None
_ocr_lock = threading.Lock()  # one engine per process, shared by the slide readers running at once


@dataclass(frozen=True)
class Box:
    """A text box OCR read, in pixels: left ``x0``, top ``y0``, right ``x1``, bottom ``y1``."""

    x0: float
    y0: float
    x1: float
    y1: float
    text: str

    @property
    def cy(self) -> float:
        """The vertical centre (pixels)."""
        return (self.y0 + self.y1) / 2


def reading_order(boxes: list[Box]) -> list[list[Box]]:
    """``boxes`` as rows in reading order, each row's boxes left to right (see the module docstring).
    An empty list gives []."""
    if not boxes:
        return []
    height = median(b.y1 - b.y0 for b in boxes) or 1.0
    return _order(boxes, height)


def _order(boxes: list[Box], height: float) -> list[list[Box]]:
    if len(boxes) < 2:
        return _rows(boxes)
    bands = _segments(boxes, vertical=False)
    wide = [i for i in range(1, len(bands)) if bands[i][0] - bands[i - 1][1] >= PARAGRAPH_GAP * height]
    if wide:  # a title, a paragraph: cut off above the topmost wide gap
        return _split(bands, wide[0], height)
    segments = _segments(boxes, vertical=True)
    for i in sorted(range(1, len(segments)), key=lambda i: segments[i - 1][1] - segments[i][0]):  # widest first
        if not _aligned(_rows(segments[i - 1][2]), _rows(segments[i][2]), height):
            return _split(segments, i, height)
    return _split(bands, 1, height) if len(bands) > 1 else _rows(boxes)


def _split(runs: list[tuple[float, float, list[Box]]], i: int, height: float) -> list[list[Box]]:
    """The runs before ``i`` read, then those from ``i``."""
    return (_order([b for _, _, run in runs[:i] for b in run], height)
            + _order([b for _, _, run in runs[i:] for b in run], height))


def _segments(boxes: list[Box], *, vertical: bool) -> list[tuple[float, float, list[Box]]]:
    """``boxes`` split at every band no box crosses (vertical bands: left to right; horizontal: top
    to bottom), as ``(start, end, boxes)`` of each run between two bands, in pixels."""
    lo, hi = (lambda b: b.x0, lambda b: b.x1) if vertical else (lambda b: b.y0, lambda b: b.y1)
    out: list[tuple[float, float, list[Box]]] = []
    for b in sorted(boxes, key=lo):
        if out and lo(b) <= out[-1][1]:
            start, end, run = out[-1]
            out[-1] = (start, max(end, hi(b)), run + [b])
        else:
            out.append((lo(b), hi(b), [b]))
    return out


def _rows(boxes: list[Box]) -> list[list[Box]]:
    """``boxes`` grouped into lines (a box joins the line whose vertical extent holds its centre),
    top to bottom, each left to right."""
    rows: list[list[Box]] = []
    for b in sorted(boxes, key=lambda b: b.cy):
        if rows and min(x.y0 for x in rows[-1]) <= b.cy <= max(x.y1 for x in rows[-1]):
            rows[-1].append(b)
        else:
            rows.append([b])
    return [sorted(r, key=lambda b: b.x0) for r in rows]


def _aligned(a: list[list[Box]], b: list[list[Box]], height: float) -> bool:
    """Whether rows ``a`` and ``b`` (of two sides of a vertical gap) share lines: at least
    :data:`ALIGNED_SHARE` of the fewer rows have a centre within :data:`ROW_TOLERANCE` line heights
    of a row of the other side."""
    few, many = sorted((a, b), key=len)
    centres = [median(x.cy for x in r) for r in many]
    met = sum(any(abs(median(x.cy for x in r) - c) <= ROW_TOLERANCE * height for c in centres) for r in few)
    return met >= ALIGNED_SHARE * len(few)


def _ocr():
    global _ocr_engine
    if _ocr_engine is None:
        from rapidocr import RapidOCR

        _ocr_engine = RapidOCR()
    return _ocr_engine


@dataclass(frozen=True)
class TextLine:
    """A box of text OCR read: its text, its centre as a share of the image's width and height (0–1),
    the number of the reading line it is on (boxes of one ``row`` are one line, left to right) and its
    character pitch, the box's width per character as a share of the image's width (0: not known): the
    type's size, which a box's height tells less well (a line with descenders has a box up to 30 %
    taller than one without, in one font)."""

    text: str
    x: float
    y: float
    row: int = 0
    pitch: float = 0.0


#: A box holding one bullet glyph is kept from this recognition score: a glyph is read with less
#: confidence than a word (0.59, 0.63 and 0.90 on one trial slide's three "●"), and without it a
#: bullet's item ran on into the item above ("…two levels down Yellowstone: wolves…"). Hand-set.
BULLET_SCORE = 0.3
_BULLET_GLYPHS = frozenset("\u2022\u2023\u2043\u2219\u25aa\u25ab\u25cf\u25cb\u25a0\u25a1\u25e6\u00b7\u27a2\u2794\u25b8\u25ba")


def ocr_text_lines(image: Path, *, min_score: float = 0.6) -> list[TextLine]:
    """Text boxes RapidOCR reads in ``image`` with a recognition score of at least ``min_score``
    (a lone bullet glyph: :data:`BULLET_SCORE`),
    in reading order (:func:`reading_order`: columns one after the other, a table row by
    row). Returns [] when nothing is read."""
    with _ocr_lock:  # RapidOCR is not documented as safe for concurrent calls: one at a time (each well under 1 s)
        result = _ocr()(str(image))
    txts = getattr(result, "txts", None) or ()
    scores = getattr(result, "scores", None) or ()
    boxes = getattr(result, "boxes", None)
    with Image.open(image) as im:
        width, height = im.size
    found = []
    for i, (t, s) in enumerate(zip(txts, scores)):
        if t.strip() and (s >= min_score or (s >= BULLET_SCORE and t.strip() in _BULLET_GLYPHS)):
            xs = [float(p[0]) for p in boxes[i]] if boxes is not None else [0.0, 1.0]
            ys = [float(p[1]) for p in boxes[i]] if boxes is not None else [10.0 * i, 10.0 * i + 1]
            found.append(Box(min(xs), min(ys), max(xs), max(ys), t.strip()))
    return [TextLine(b.text, (b.x0 + b.x1) / 2 / width, b.cy / height, n, (b.x1 - b.x0) / width / max(1, len(b.text)))
            for n, row in enumerate(reading_order(found)) for b in row]


#: A slide's first lines are one title wrapped over them when they are set in one size (character pitch
#: within :data:`SAME_SIZE` of the first's) at least this much larger than the median body line's
#: (hand-set, not fitted: over the eight designs of ``evals/slide_designs`` and two trial decks a title's
#: pitch is 1.4–1.9× its body's, body lines within 0.15 of each other). An ecology trial's "Why Predator
#: and Prey" / "Populations Cycle" was read as the title "Why Predator and Prey" and a first item.
TITLE_SCALE = 1.3
SAME_SIZE = 0.15
MAX_TITLE_ROWS = 3
#: Rows centred below this share of the slide's height are its footer (course name, page number), not body.
FOOTER_Y = 0.85


def _row_pitch(row: list[TextLine]) -> float:
    """The character pitch of the row's longest box (a bullet glyph beside its item says little)."""
    return max(row, key=lambda ln: len(ln.text)).pitch


def _title_rows(rows: list[list[TextLine]]) -> int:
    """How many of the first ``rows`` are one title wrapped over them: up to :data:`MAX_TITLE_ROWS` leading
    rows of one size (:data:`SAME_SIZE`), set at least :data:`TITLE_SCALE` times the median pitch of the
    body rows after them (a footer, :data:`FOOTER_Y`, is not body); 1 when fewer than two rows qualify, when
    no body row follows or the pitches are not known."""
    pitch = [_row_pitch(row) for row in rows]
    if not pitch or pitch[0] <= 0:
        return 1
    n = 1
    while n < min(len(rows), MAX_TITLE_ROWS) and abs(pitch[n] - pitch[0]) <= SAME_SIZE * pitch[0]:
        n += 1
    body = [p for row, p in zip(rows[n:], pitch[n:]) if min(ln.y for ln in row) < FOOTER_Y]
    return n if n >= 2 and body and pitch[0] >= TITLE_SCALE * median(body) else 1


def joined_rows(lines: list[TextLine]) -> list[str]:
    """The texts of ``lines`` (in reading order), those of one row joined by a space: a table row
    or a bullet and its item as one line, and a title wrapped over the first rows (:func:`_title_rows`)
    as one line."""
    rows: list[list[TextLine]] = []
    for i, ln in enumerate(lines):
        if i and ln.row == lines[i - 1].row:
            rows[-1].append(ln)
        else:
            rows.append([ln])
    out = [" ".join(ln.text for ln in row) for row in rows]
    title = _title_rows(rows) if rows else 0
    return [" ".join(out[:title])] + out[title:] if title > 1 else out


def ocr_lines(image: Path, *, min_score: float = 0.6) -> list[str]:
    """The lines of :func:`ocr_text_lines`, in reading order (:func:`joined_rows`)."""
    return joined_rows(ocr_text_lines(image, min_score=min_score))
