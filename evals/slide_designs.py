"""Slide designs for the slide-detection benchmark (``evals.slides_bench``), drawn with Pillow.

Each design renders a title and a few lines the way a lecture deck would show them, at any frame
size: plain black-on-white text, small text on a 1080p frame, a dark theme, a corporate template
(coloured header band, footer and logo on every slide), serif text on cream, text beside a drawn
diagram or chart, and code. Decoration (bullets, logos, diagrams) is drawn as shapes, never as
text, so the text a reader should find on a slide is exactly the title, the lines (wrapped to the
slide's width) and, for ``template``, the footer: :func:`render_slide_with_text` returns it in
reading order next to the image.

Body text is top-aligned and never moves when a later line is added, so a slide build (bullets
appearing one at a time) is the same call with more ``lines``.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from functools import lru_cache

from PIL import Image, ImageDraw, ImageFont

FONT_DIR = "/usr/share/fonts/truetype/dejavu"
SANS = f"{FONT_DIR}/DejaVuSans.ttf"
SANS_BOLD = f"{FONT_DIR}/DejaVuSans-Bold.ttf"
SERIF = f"{FONT_DIR}/DejaVuSerif.ttf"
SERIF_BOLD = f"{FONT_DIR}/DejaVuSerif-Bold.ttf"
MONO = f"{FONT_DIR}/DejaVuSansMono.ttf"

DESIGNS: tuple[str, ...] = ("plain", "plain-small", "dark", "template", "serif-cream", "two-column", "figure",
                            "mono-code")

#: Designs whose text is light on a dark background (the others are dark on light).
DARK_DESIGNS: frozenset[str] = frozenset({"dark"})


@dataclass(frozen=True)
class Style:
    """How one design looks: colours, fonts, sizes as fractions of the frame height."""

    bg: tuple[int, int, int]
    fg: tuple[int, int, int]
    title_fg: tuple[int, int, int]
    body_font: str
    title_font: str
    body_px: float  # body text height as a fraction of the frame height
    title_px: float
    bullet: str  # "", "dot" or "square"
    text_width: float  # fraction of the frame width the body text may use
    top: float  # where the title starts, fraction of the height


_STYLES: dict[str, Style] = {
    # 34 px body on 960x540, the title just bigger text
    "plain": Style((255, 255, 255), (0, 0, 0), (0, 0, 0), SANS, SANS, 34 / 540, 46 / 540, "", 0.88, 0.07),
    # 18 px body on 1920x1080
    "plain-small": Style((255, 255, 255), (0, 0, 0), (0, 0, 0), SANS, SANS_BOLD, 18 / 1080, 30 / 1080, "", 0.88,
                         0.06),
    "dark": Style((30, 32, 46), (226, 228, 236), (138, 180, 248), SANS, SANS_BOLD, 30 / 540, 42 / 540, "dot", 0.86,
                  0.08),
    "template": Style((255, 255, 255), (40, 40, 48), (255, 255, 255), SANS, SANS_BOLD, 28 / 540, 36 / 540, "square",
                      0.84, 0.035),
    "serif-cream": Style((246, 240, 222), (59, 47, 47), (120, 40, 30), SERIF, SERIF_BOLD, 30 / 540, 42 / 540, "dot",
                         0.86, 0.08),
    "two-column": Style((255, 255, 255), (25, 25, 25), (20, 60, 120), SANS, SANS_BOLD, 26 / 540, 38 / 540, "dot",
                        0.48, 0.07),
    "figure": Style((250, 250, 252), (30, 30, 30), (30, 30, 30), SANS, SANS_BOLD, 26 / 540, 38 / 540, "dot", 0.44,
                    0.07),
    "mono-code": Style((255, 255, 255), (30, 30, 30), (30, 30, 30), MONO, SANS_BOLD, 24 / 540, 38 / 540, "", 0.86,
                       0.07),
}

_TEMPLATE_BAND = (0, 70, 127)
_TEMPLATE_ACCENT = (240, 160, 0)


@lru_cache(maxsize=64)
def _font(path: str, px: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(path, max(8, px))


def _wrap(text: str, font: ImageFont.FreeTypeFont, width: float) -> list[str]:
    """``text`` broken at spaces into lines no wider than ``width`` pixels (a single long word stays whole)."""
    out: list[str] = []
    cur = ""
    for word in text.split():
        cand = f"{cur} {word}" if cur else word
        if cur and font.getlength(cand) > width:
            out.append(cur)
            cur = word
        else:
            cur = cand
    if cur:
        out.append(cur)
    return out or [""]


def _diagram(draw: ImageDraw.ImageDraw, box: tuple[int, int, int, int], seed: int) -> None:
    """A text-free flow diagram in ``box``: three or four boxes joined by arrows."""
    x0, y0, x1, y1 = box
    rnd = random.Random(seed)
    n = rnd.choice([3, 4])
    colours = [(66, 133, 244), (52, 168, 83), (251, 188, 5), (234, 67, 53)]
    bw = (x1 - x0) * 0.55
    bh = (y1 - y0) / (n * 1.6)
    cx = (x0 + x1) / 2
    prev = None
    for i in range(n):
        top = y0 + i * (y1 - y0) / n + bh * 0.2
        off = rnd.uniform(-0.12, 0.12) * (x1 - x0)
        rect = (cx - bw / 2 + off, top, cx + bw / 2 + off, top + bh)
        draw.rounded_rectangle(rect, radius=int(bh / 4), fill=colours[i % 4], outline=(60, 60, 60), width=2)
        if prev is not None:
            ax, ay = (prev[0] + prev[2]) / 2, prev[3]
            bx, by = (rect[0] + rect[2]) / 2, rect[1]
            draw.line((ax, ay, bx, by), fill=(60, 60, 60), width=3)
            draw.polygon([(bx, by), (bx - 7, by - 12), (bx + 7, by - 12)], fill=(60, 60, 60))
        prev = rect


def _chart(draw: ImageDraw.ImageDraw, box: tuple[int, int, int, int], seed: int) -> None:
    """A text-free chart in ``box``: axes with bars or a curve."""
    x0, y0, x1, y1 = box
    rnd = random.Random(seed)
    draw.line((x0, y1, x1, y1), fill=(40, 40, 40), width=3)
    draw.line((x0, y0, x0, y1), fill=(40, 40, 40), width=3)
    if rnd.random() < 0.5:
        n = rnd.randint(4, 7)
        w = (x1 - x0) / (n * 1.5)
        for i in range(n):
            h = rnd.uniform(0.15, 0.95) * (y1 - y0)
            bx = x0 + w * 0.5 + i * w * 1.5
            draw.rectangle((bx, y1 - h, bx + w, y1 - 2), fill=(70 + 20 * i % 120, 120, 200 - 15 * i))
    else:
        a, b = rnd.uniform(0.5, 2.0), rnd.uniform(0, 3)
        pts = []
        for i in range(61):
            u = i / 60
            v = 0.1 + 0.75 * u ** a + 0.1 * math.sin(b + 9 * u)
            pts.append((x0 + u * (x1 - x0), y1 - min(0.95, max(0.02, v)) * (y1 - y0)))
        draw.line(pts, fill=(200, 50, 50), width=4)
        for u in (0.2, 0.45, 0.7, 0.9):
            px, py = pts[int(u * 60)]
            draw.ellipse((px - 6, py - 6, px + 6, py + 6), fill=(30, 90, 180))


def _logo(draw: ImageDraw.ImageDraw, cx: float, cy: float, r: float) -> None:
    draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=(255, 255, 255))
    draw.ellipse((cx - r * 0.72, cy - r * 0.72, cx + r * 0.72, cy + r * 0.72), fill=_TEMPLATE_ACCENT)
    draw.polygon([(cx - r * 0.45, cy + r * 0.3), (cx, cy - r * 0.5), (cx + r * 0.45, cy + r * 0.3)], fill=_TEMPLATE_BAND)


def _table(draw: ImageDraw.ImageDraw, box: tuple[int, int, int, int], rows: list[list[str]],
           font: ImageFont.FreeTypeFont, head: ImageFont.FreeTypeFont, fg: tuple[int, int, int]) -> list[str]:
    """A ruled table of ``rows`` (the first is the header, in ``head``) from the top of ``box``: equal
    columns, cell text left-aligned. Returns its rows as reading lines (a row's cells joined by spaces)."""
    x0, y0, x1, _ = box
    cols = max(len(r) for r in rows)
    cw = (x1 - x0) / cols
    rh = round(font.size * 1.9)
    pad = round(font.size * 0.35)
    out = []
    for i, row in enumerate(rows):
        y = y0 + i * rh
        for j, cell in enumerate(row):
            draw.text((x0 + j * cw + pad, y + (rh - font.size) / 2 - 2), cell, font=head if i == 0 else font, fill=fg)
        out.append(" ".join(row))
    line = max(1, font.size // 14)
    for i in range(len(rows) + 1):
        draw.line((x0, y0 + i * rh, x1, y0 + i * rh), fill=fg, width=line * (2 if i in (0, 1) else 1))
    for j in range(cols + 1):
        draw.line((x0 + j * cw, y0, x0 + j * cw, y0 + len(rows) * rh), fill=fg, width=line)
    return out


def render_slide_with_text(design: str, title: str, lines: list[str], size: tuple[int, int], *,
                           footer: str = "", page: int | None = None, seed: int = 0,
                           table: list[list[str]] | None = None) -> tuple[Image.Image, list[str]]:
    """Renders one slide of ``design`` (one of :data:`DESIGNS`) at ``size`` (width, height).

    ``title`` is drawn on top, ``lines`` below it top to bottom (wrapped at spaces to the design's
    text width). ``footer`` and ``page`` appear in the ``template`` design's footer (other designs
    ignore them); ``seed`` picks the diagram or chart of ``two-column`` and ``figure``. ``table``
    (rows of cells, the first a header; ``two-column`` and ``figure`` only) takes the place of their
    diagram or chart, beside the body text: a slide whose reading order is the body, then the table
    row by row, though its lines sit side by side.

    Returns the RGB image and the visible text lines in reading order (title first; wrapped lines
    as drawn), which is what a perfect reader of the slide would return.
    Raises ``KeyError`` for an unknown design.
    """
    st = _STYLES[design]
    w, h = size
    img = Image.new("RGB", size, st.bg)
    draw = ImageDraw.Draw(img)
    text: list[str] = []
    body_px = round(st.body_px * h)
    title_px = round(st.title_px * h)
    body_font = _font(st.body_font, body_px)
    title_font = _font(st.title_font, title_px)
    margin = round(0.06 * w)
    y = round(st.top * h)

    # title
    if design == "template":
        band_h = round(0.16 * h)
        draw.rectangle((0, 0, w, band_h), fill=_TEMPLATE_BAND)
        draw.rectangle((0, band_h, w, band_h + max(3, h // 120)), fill=_TEMPLATE_ACCENT)
        _logo(draw, w - band_h * 0.62, band_h / 2, band_h * 0.34)
        t_lines = _wrap(title, title_font, w - 2 * margin - band_h)
        ty = (band_h - len(t_lines) * title_px * 1.2) / 2
        for tl in t_lines:
            draw.text((margin, ty), tl, font=title_font, fill=st.title_fg)
            ty += title_px * 1.2
        text.extend(t_lines)
        y = band_h + round(0.07 * h)
    elif design == "serif-cream":
        t_lines = _wrap(title, title_font, w - 2 * margin)
        for tl in t_lines:
            tw = title_font.getlength(tl)
            draw.text(((w - tw) / 2, y), tl, font=title_font, fill=st.title_fg)
            y += round(title_px * 1.25)
        draw.line((w * 0.2, y + 6, w * 0.8, y + 6), fill=st.title_fg, width=max(2, h // 270))
        text.extend(t_lines)
        y += round(0.07 * h)
    else:
        t_lines = _wrap(title, title_font, w - 2 * margin)
        for tl in t_lines:
            draw.text((margin, y), tl, font=title_font, fill=st.title_fg)
            y += round(title_px * 1.25)
        text.extend(t_lines)
        if design == "dark":
            draw.rectangle((margin, y + 4, margin + w * 0.12, y + 4 + max(3, h // 180)), fill=st.title_fg)
        y += round((0.05 if design != "plain-small" else 0.04) * h)

    # figure / diagram column (right side)
    body_x = margin
    table_text: list[str] = []
    if table is not None:
        if design not in ("two-column", "figure"):
            raise KeyError(f"design {design!r} has no column for a table")
        table_text = _table(draw, (round(w * 0.56), y + round(0.02 * h), round(w * 0.95), round(h * 0.9)), table,
                            _font(st.body_font, round(body_px * 0.85)), _font(st.title_font, round(body_px * 0.85)), st.fg)
    elif design == "two-column":
        _diagram(draw, (round(w * 0.58), y, round(w * 0.94), round(h * 0.9)), seed)
    elif design == "figure":
        _chart(draw, (round(w * 0.56), y + round(0.02 * h), round(w * 0.94), round(h * 0.86)), seed)
    if design == "mono-code":
        n_rows = sum(len(_wrap(ln, body_font, st.text_width * w - 40)) for ln in lines) if lines else 1
        draw.rectangle((margin - 16, y - 12, w - margin + 16, y + n_rows * body_px * 1.45 + 12), fill=(240, 242, 245),
                       outline=(200, 204, 210), width=2)

    # body
    line_step = body_px * (1.45 if design != "plain" else 1.6)
    indent = round(body_px * 1.1) if st.bullet else 0
    avail = st.text_width * w - indent
    for ln in lines:
        if design == "mono-code":
            rows = [ln] if body_font.getlength(ln) <= avail else _wrap(ln, body_font, avail)
        else:
            rows = _wrap(ln, body_font, avail)
        for k, row in enumerate(rows):
            if k == 0 and st.bullet:
                r = body_px * 0.16
                cy = y + body_px * 0.62
                cx = body_x + body_px * 0.35
                if st.bullet == "dot":
                    draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=st.title_fg if design != "serif-cream" else st.fg)
                else:
                    draw.rectangle((cx - r, cy - r, cx + r, cy + r), fill=_TEMPLATE_ACCENT)
            draw.text((body_x + indent + (0 if k == 0 else (0 if design == "mono-code" else body_px * 0.6)), y), row,
                      font=body_font, fill=st.fg)
            text.append(row)
            y += line_step

    text.extend(table_text)

    # template footer
    if design == "template":
        fpx = max(10, round(h * 16 / 540))
        ffont = _font(SANS, fpx)
        fy = h - round(0.06 * h)
        draw.line((margin, fy - 8, w - margin, fy - 8), fill=(180, 180, 190), width=1)
        if footer:
            draw.text((margin, fy), footer, font=ffont, fill=(110, 110, 120))
            text.append(footer)
        if page is not None:
            ps = str(page)
            draw.text((w - margin - ffont.getlength(ps), fy), ps, font=ffont, fill=(110, 110, 120))
            text.append(ps)
    return img, text


def render_slide_design(design: str, title: str, lines: list[str], size: tuple[int, int]) -> Image.Image:
    """Renders a slide of ``design`` (one of :data:`DESIGNS`) with ``title`` and ``lines`` at ``size``
    (width, height) as an RGB image; see :func:`render_slide_with_text` for the options and for
    the text the slide shows."""
    return render_slide_with_text(design, title, lines, size)[0]
