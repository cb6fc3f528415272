"""Transcription without NATS or HTTP: media in, transcript words (with times in seconds) out.

Two sources: faster-whisper on the lecture's audio (word timestamps, Silero VAD), or the
captions the instructor uploaded (WebVTT or SRT, parsed with webvtt-py).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

from lecturecopilot import media, models
from lecturecopilot.captions import Word


def _is_repetition_loop(text: str, previous: list[str]) -> bool:
    """Whisper's known failure: the same phrase emitted again and again."""
    norm = re.sub(r"\W+", " ", text.lower()).strip()
    if not norm:
        return True
    if len(previous) >= 2 and all(p == norm for p in previous[-2:]):
        return True
    tokens = norm.split()
    # one n-gram (n <= 4) making up most of a long segment
    for n in (1, 2, 3, 4):
        if len(tokens) >= 4 * n + 4:
            grams = [" ".join(tokens[i:i + n]) for i in range(0, len(tokens) - n + 1, n)]
            top = max(grams.count(g) for g in set(grams))
            if top * n >= 0.6 * len(tokens):
                return True
    return False


def transcribe_audio(audio: Path, *, model_name: str, language: str | None, duration_s: float,
                     progress: Callable[[float], None] = lambda f: None,
                     compute_type: str = "int8", threads: int = 2) -> list[Word]:
    """faster-whisper with word timestamps and VAD on a 16 kHz mono WAV.

    Guards (from public Whisper bug reports): ``vad_filter`` drops silence and music before
    decoding (hallucinations on silence); ``condition_on_previous_text=False`` stops
    repeated-phrase loops from feeding themselves; segments that look like loops or have a
    high no-speech probability with low confidence are dropped.
    """
    model = models.whisper(model_name, compute_type, threads)
    segments, _info = model.transcribe(
        str(audio), language=language or None, word_timestamps=True, vad_filter=True,
        condition_on_previous_text=False, beam_size=1,
    )
    words: list[Word] = []
    recent: list[str] = []
    for seg in segments:
        if seg.no_speech_prob > 0.6 and seg.avg_logprob < -1.0:
            continue
        if _is_repetition_loop(seg.text, recent):
            continue
        recent.append(re.sub(r"\W+", " ", seg.text.lower()).strip())
        for w in seg.words or []:
            token = w.word.strip()
            if token:
                words.append(Word(float(w.start), float(max(w.end, w.start)), token))
        if duration_s > 0:
            progress(min(0.99, seg.end / duration_s))
    return words


def transcribe_media(path: Path, *, info: media.ProbeResult, model_name: str, language: str | None,
                     duration_s: float, progress: Callable[[float], None], workdir: Path,
                     compute_type: str = "int8", threads: int = 2) -> list[Word]:
    """Extracts the audio of ``path`` (probed as ``info``) once and transcribes it (see
    :func:`transcribe_audio`). Raises :class:`lecturecopilot.media.MediaError` when the audio
    cannot be decoded."""
    wav = media.extract_audio(path, workdir / "audio16k.wav", info)
    try:
        return transcribe_audio(wav, model_name=model_name, language=language, duration_s=duration_s,
                                progress=progress, compute_type=compute_type, threads=threads)
    finally:
        wav.unlink(missing_ok=True)
