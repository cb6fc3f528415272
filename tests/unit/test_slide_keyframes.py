"""Slide changes from ink maps (services/transcribe/slides.py): frames drawn with Pillow and fed to
``key_frames`` directly, so each case is exact and fast. The designs are the ones scene detection
missed: text changing on the same template, a bullet added to a build, 18 px text at 1080p, light
text on a dark theme; and what must not be a slide change: a speaker's picture in a corner that
never rests, a pointer moving over a still slide, compression-like noise."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from services.transcribe.slides import _build_step, changed_cells, ink_frame, key_frames

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
W, H, CELL = 640, 360, 40  # a 1920×1080 frame scaled to the detector's proxy: 16 cells across
FPS = 2.0


def slide(lines: list[str], *, size_px: int = 34, scale: float = 1 / 3, dark: bool = False,
          header: bool = False) -> np.ndarray:
    """A 1920×1080 slide with ``lines`` at ``size_px`` (px at 1080p), as the grey proxy frame."""
    big = Image.new("L", (1920, 1080), 25 if dark else 255)
    d = ImageDraw.Draw(big)
    if header:
        d.rectangle([0, 0, 1920, 140], fill=90)
        d.text((1700, 1000), "UNIVERSITY", fill=120, font=ImageFont.truetype(FONT, 30))
    y = 200
    for ln in lines:
        d.text((120, y), ln, fill=230 if dark else 10, font=ImageFont.truetype(FONT, size_px))
        y += int(size_px * 1.8)
    return np.asarray(big.resize((int(1920 * scale), int(1080 * scale)), Image.Resampling.BOX))


def timeline(*shots: tuple[np.ndarray, float], noise=None):
    """(t, frame) at FPS for each (frame, seconds) in turn; ``noise(t, frame)`` may change a frame."""
    t = 0.0
    for frame, seconds in shots:
        for _ in range(int(seconds * FPS)):
            f = frame if noise is None else noise(t, frame.copy())
            yield t, f
            t += 1 / FPS


def starts(frames) -> list[float]:
    return [k.start_s for k in key_frames(frames, cell=CELL)]


def test_text_change_on_the_same_template_is_a_new_slide():
    a = slide(["Light reactions", "Thylakoid membrane"], header=True)
    b = slide(["Calvin cycle", "RuBisCO fixes carbon"], header=True)
    c = slide(["Photorespiration", "Oxygen instead of CO2"], header=True)
    assert starts(timeline((a, 10), (b, 12), (c, 9))) == [0.0, 10.0, 22.0]


def test_a_bullet_added_to_a_build_is_a_new_key_frame():
    lines = ["Glycolysis", "Glucose is phosphorylated", "Fructose bisphosphate splits", "Pyruvate"]
    got = starts(timeline((slide(lines[:2]), 8), (slide(lines[:3]), 8), (slide(lines), 8)))
    assert got == [0.0, 8.0, 16.0]


@pytest.mark.parametrize("dark", [False, True])
def test_small_text_at_1080p_on_light_and_dark_themes(dark):
    a = slide(["Hotspots", "Mantle plumes under Hawaii"], size_px=18, dark=dark)
    b = slide(["Subduction", "Oceanic plate sinks"], size_px=18, dark=dark)
    assert starts(timeline((a, 10), (b, 10), (a, 10))) == [0.0, 10.0, 20.0]


def test_a_speaker_picture_that_never_rests_makes_no_slides():
    rng = np.random.default_rng(7)

    def speaker(t, frame):  # a 160×120 proxy-pixel picture in the bottom-right corner: a head that sways
        pip = np.full((120, 160), 70, dtype=np.uint8)
        cx, cy = 80 + int(25 * np.sin(1.7 * t)), 55 + int(10 * np.cos(1.1 * t))
        yy, xx = np.ogrid[:120, :160]
        pip[(xx - cx) ** 2 + (yy - cy) ** 2 < 30 ** 2] = 200
        pip[rng.integers(0, 120, 200), rng.integers(0, 160, 200)] = 120  # sensor noise
        frame[230:350, 470:630] = pip
        return frame

    a = slide(["Plate tectonics", "Lithosphere on the asthenosphere"])
    b = slide(["Seafloor spreading", "Magnetic striping"])
    keys = key_frames(timeline((a, 30), (b, 30), noise=speaker), cell=CELL)
    assert [k.start_s for k in keys] == [0.0, 30.0]
    assert keys[-1].busy[-2:, -3:].all() and not keys[-1].busy[:3, :8].any()


def test_a_pointer_moving_over_a_still_slide_and_noise_make_no_slides():
    rng = np.random.default_rng(3)

    def pointer(t, frame):  # a 6×6 dot wandering, plus ±2 grey levels of noise everywhere
        x, y = int(100 + 40 * t) % 600, int(150 + 20 * np.sin(t)) % 340
        frame[y:y + 6, x:x + 6] = 0
        return np.clip(frame.astype(np.int16) + rng.integers(-2, 3, frame.shape), 0, 255).astype(np.uint8)

    a = slide(["Cardiac cycle", "Systole and diastole", "Stroke volume"])
    assert starts(timeline((a, 40), noise=pointer)) == [0.0]


def test_a_change_counts_once_the_screen_rests():
    a, b = slide(["Typing"]), slide(["Typing", "print(hello)"])
    frames = list(timeline((a, 5), (b, 0.5), (a, 0.5), (b, 5)))  # flickers, then rests on b
    got = starts(iter(frames))
    assert got == [0.0, 6.0]


def test_reencoding_noise_is_not_a_change_but_new_text_is():
    rng = np.random.default_rng(5)
    a = slide(["Le Chatelier's principle", "A stressed equilibrium shifts"])
    noisy = np.clip(a + rng.normal(0, 2, a.shape), 0, 255).astype(np.uint8)
    same = changed_cells(ink_frame(a), ink_frame(noisy), CELL).sum()
    other = changed_cells(ink_frame(a), ink_frame(slide(["Carnot efficiency", "No engine does better"])), CELL).sum()
    assert same < 0.05 * other


def test_build_step_keeps_the_title_and_the_new_lines():
    before = ("Glycolysis", "Glucose is phosphorylated")
    assert _build_step(before, (*before, "Pyruvate is formed")) == ("Glycolysis", "Pyruvate is formed")
    assert _build_step(before, ("Krebs cycle", "Citrate")) is None
    assert _build_step(before, before) is None


def test_a_slide_read_again_with_a_pointer_over_it_is_the_same_slide():
    from services.transcribe.slides import _hidden_part, _same_lines

    full = ("Hash tables", "A hash function maps keys to buckets", "Chaining resolves collisions")
    assert _same_lines(full, ("Hash tables", "A hash funQion maps keys to buckets", "Chaining resolves collisions"))
    assert _hidden_part(full, ("Hash tables", "4"))
    assert not _hidden_part(full, ("Hash tables", "Open addressing probes"))
    assert not _same_lines(full, (*full, "Load factor triggers resizing"))
