"""Transcription without NATS or HTTP: media in, transcript words (with times in seconds) out.

Two sources: faster-whisper on the lecture's audio (word timestamps, Silero VAD), or the
captions the instructor uploaded (WebVTT or SRT, parsed with webvtt-py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from lecturecopilot import media, models
from lecturecopilot.captions import Word
from lecturecopilot.settings import Settings


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


WINDOW_S = 30.0  # one Whisper decoding window (its encoder sees 30 s of audio)
DEFAULT_TEMPERATURES = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)  # Whisper's fallback schedule (openai/whisper transcribe.py)
# A prompted window falls back once at most: each fallback decodes the window again, and on the robustness
# lectures the full schedule cost a third more time for the same transcript (evals/README.md)
PROMPTED_TEMPERATURES = (0.0, 0.6)


# Whisper writes "you", "Thank you." or "." on the silence that closes a window (openai/whisper discussion #679);
# prompted windows end on one here (the demo lecture: 4 of 9 windows, each 0.3–0.6 s, no-speech probability
# 0.47–0.54, under the 0.6 that Whisper's own silence rule needs, mean log-probability −1.2 to −1.5, first word
# probability 0.01–0.03), and the "you" then opened the next window's sentence ("you If there's a constant…").
# Dropped: a segment this short, of low confidence (mean log-probability < −1, Whisper's threshold) whose first
# word is improbable (< 0.1).
TAIL_S = 1.0


def _keep(seg, recent: list[str], prompt: str | None) -> bool:
    """False for a segment that is one of Whisper's known failures (see :func:`transcribe_audio`)."""
    if seg.no_speech_prob > 0.6 and seg.avg_logprob < -1.0:
        return False
    if seg.avg_logprob < -1.0 and seg.end - seg.start <= TAIL_S and seg.words and seg.words[0].probability < 0.1:
        return False  # a tail written after the speech ends: "you", "Thank you.", "." (see TAIL_S)
    if _is_repetition_loop(seg.text, recent):
        return False
    if prompt and _copies_prompt(seg.text, prompt) and (seg.no_speech_prob > 0.3 or seg.avg_logprob < -0.8):
        return False
    return True


def _copies_prompt(text: str, prompt: str) -> bool:
    """True when ``text`` is (nearly) a stretch of the prompt: Whisper's known failure of writing
    its prompt out on a window with little speech (openai/whisper discussions #679, #1783)."""
    from rapidfuzz import fuzz

    a = re.sub(r"\W+", " ", text.lower()).strip()
    b = re.sub(r"\W+", " ", prompt.lower()).strip()
    return len(a.split()) >= 3 and fuzz.partial_ratio(a, b) >= 90


def _segments_to_words(segments, offset_s: float, recent: list[str], prompt: str | None) -> list[Word]:
    words: list[Word] = []
    for seg in segments:
        if not _keep(seg, recent, prompt):
            continue
        recent.append(re.sub(r"\W+", " ", seg.text.lower()).strip())
        first = len(words)
        for w in seg.words or []:
            token = w.word.strip()
            if not token:
                continue
            start, end = round(float(w.start) + offset_s, 3), round(float(max(w.end, w.start)) + offset_s, 3)
            if len(words) > first and not w.word.startswith(" "):
                # faster-whisper begins each word with its space and starts a new one at a punctuation token,
                # so a word without one continues the last: "max" + "-heap", "1" + ".96", "95" + "%", one word
                prev = words[-1]
                words[-1] = Word(prev.start_s, end, prev.word + token)
            else:
                words.append(Word(start, end, token))
    return words


def speech_windows(audio, sampling_rate: int = 16000, window_s: float = WINDOW_S) -> list[tuple[int, int]]:
    """Sample ranges ``[start, end)`` of at most ``window_s`` seconds covering the speech Silero VAD
    finds in ``audio`` (faster-whisper's VAD, with the options its batched pipeline uses), each a
    run of whole speech chunks so a window never cuts a word in two."""
    from faster_whisper.vad import VadOptions, get_speech_timestamps

    chunks = get_speech_timestamps(audio, VadOptions(max_speech_duration_s=window_s, min_silence_duration_ms=160),
                                   sampling_rate=sampling_rate)
    limit = int(window_s * sampling_rate)
    out: list[tuple[int, int]] = []
    for c in chunks:
        if out and c["end"] - out[-1][0] <= limit:
            out[-1] = (out[-1][0], c["end"])
        else:
            out.append((c["start"], c["end"]))
    return out


@dataclass(frozen=True)
class Asr:
    """How speech is recognised: the faster-whisper model ``model_name`` (as
    :func:`lecturecopilot.models.whisper` takes it, e.g. ``"tiny.en"``; ``LC_WHISPER_MODEL``), the
    spoken ``language`` (an ISO code, or None: detected), CTranslate2's ``compute_type``
    (``LC_WHISPER_COMPUTE_TYPE``), the CPU ``threads`` (``LC_WHISPER_THREADS``) and the decoder's
    ``beam_size`` (``LC_WHISPER_BEAM_SIZE``; 1: greedy; the product's 5 is faster-whisper's default: on the
    fields benchmark's dev lectures it took slide terms heard 0.898 → 0.936 and WER 0.124 → 0.109 for 2.0× the
    decoding time, ``python -m evals.slide_terms --beam 5``; history in docs/experiments.md)."""

    model_name: str
    language: str | None = None
    compute_type: str = "int8"
    threads: int = 2
    beam_size: int = 5

    @classmethod
    def from_settings(cls, settings: Settings, language: str | None) -> Asr:
        """The recognizer ``settings`` configure (``LC_WHISPER_*``), for
        speech in ``language`` (an ISO code; None or "": detected)."""
        return cls(settings.whisper_model, language or None, settings.whisper_compute_type,
                   settings.whisper_threads, settings.whisper_beam_size)


def transcribe_audio(audio: Path, asr: Asr, *, duration_s: float, progress: Callable[[float], None] = lambda f: None,
                     prompt_for: Callable[[float, float], str | None] | None = None) -> list[Word]:
    """faster-whisper (as ``asr`` says) with word timestamps and VAD on a 16 kHz mono WAV of
    ``duration_s`` seconds (0: unknown, no progress); words with times in seconds.

    ``prompt_for(start_s, end_s)``, when given, is the text prompt for the decoding window
    ``start_s``..``end_s`` (the course's vocabulary around that moment, see
    :mod:`services.transcribe.vocabulary`): the audio is cut at VAD speech boundaries into windows of
    at most 30 s and each is decoded with its own ``initial_prompt``. Without it, one pass with
    faster-whisper's own VAD.

    Guards (from public Whisper bug reports): VAD drops silence and music before decoding
    (hallucinations on silence); ``condition_on_previous_text=False`` stops repeated-phrase loops
    from feeding themselves; segments that look like loops, have a high no-speech probability with
    low confidence, are a sub-second low-confidence tail ("you", :data:`TAIL_S`), or copy the prompt
    without confident speech behind them are dropped; a prompted
    window whose words leave 5 s of it without a word is decoded again unprompted
    (:func:`_decode_window`).
    """
    model = models.whisper(asr.model_name, asr.compute_type, asr.threads)
    recent: list[str] = []
    opts = dict(language=asr.language or None, word_timestamps=True, condition_on_previous_text=False,
                beam_size=asr.beam_size)
    if prompt_for is None:
        segments, _info = model.transcribe(str(audio), vad_filter=True, **opts)
        words = []
        for seg in segments:
            words += _segments_to_words([seg], 0.0, recent, None)
            if duration_s > 0:
                progress(min(0.99, seg.end / duration_s))
        return words
    from faster_whisper import decode_audio

    samples = decode_audio(str(audio), sampling_rate=16000)
    words = []
    for a, b in speech_windows(samples):
        start_s, end_s = a / 16000, b / 16000
        words += _decode_window(model, samples[a:b], start_s, end_s, prompt_for(start_s, end_s), recent, opts)
        if duration_s > 0:
            progress(min(0.99, end_s / duration_s))
    return words


MAX_SILENT_S = 5.0  # a prompted window leaving this long a stretch without a word is decoded again unprompted


def _decode_window(model, samples, start_s: float, end_s: float, prompt: str | None, recent: list[str],
                   opts: dict) -> list[Word]:
    """The words of one window (``samples``, ``start_s``..``end_s`` seconds of the lecture) decoded
    with ``prompt``; ``recent`` (the texts of the segments kept so far, for the loop guard) gets the
    kept decoding's. Prompted decoding has a second known failure besides copying its prompt: it
    skips speech, a whole sentence of it (a sentence read from the slide, on the robustness
    benchmark's lecture 5 with Piper's voice). When the words leave a stretch of
    :data:`MAX_SILENT_S` or more of the window without a word, the window is decoded again without
    the prompt, and the decoding whose words leave the shorter such stretch is kept (the prompted
    one on a tie)."""
    before = list(recent)
    segments, _info = model.transcribe(samples, vad_filter=False, initial_prompt=prompt,
                                       temperature=PROMPTED_TEMPERATURES if prompt else DEFAULT_TEMPERATURES, **opts)
    words = _segments_to_words(list(segments), start_s, recent, prompt)
    if not prompt or _longest_silence(words, start_s, end_s) < MAX_SILENT_S:
        return words
    plain_recent = list(before)
    segments, _info = model.transcribe(samples, vad_filter=False, temperature=DEFAULT_TEMPERATURES, **opts)
    plain = _segments_to_words(list(segments), start_s, plain_recent, None)
    if _longest_silence(plain, start_s, end_s) < _longest_silence(words, start_s, end_s):
        recent[:] = plain_recent
        return plain
    return words


def _longest_silence(words: list[Word], start_s: float, end_s: float) -> float:
    """The longest stretch of ``start_s``..``end_s`` (seconds) with no word in it."""
    edges = [start_s, *(x for w in words for x in (w.start_s, w.end_s)), end_s]
    return max(max(0.0, b - a) for a, b in zip(edges[0::2], edges[1::2]))


def transcribe_media(path: Path, asr: Asr, *, info: media.ProbeResult, duration_s: float,
                     progress: Callable[[float], None], workdir: Path,
                     prompt_for: Callable[[float, float], str | None] | None = None) -> list[Word]:
    """Extracts the audio of ``path`` (probed as ``info``) into ``workdir`` once and transcribes it
    (see :func:`transcribe_audio`; ``asr``, ``duration_s``, ``progress`` and ``prompt_for`` as there).
    Raises :class:`lecturecopilot.media.MediaError` when the audio cannot be decoded."""
    wav = media.extract_audio(path, workdir / "audio16k.wav", info)
    try:
        return transcribe_audio(wav, asr, duration_s=duration_s, progress=progress, prompt_for=prompt_for)
    finally:
        wav.unlink(missing_ok=True)
