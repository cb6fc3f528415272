"""How a decoding window's words are judged: the longest stretch of the window with no word in it
(the sign that prompted decoding skipped speech; services.transcribe.core._decode_window)."""

from __future__ import annotations

import pytest

from lecturecopilot.captions import Word
from services.transcribe.core import MAX_SILENT_S, _longest_silence


def test_the_longest_stretch_without_a_word():
    assert _longest_silence([], 10.0, 40.0) == 30.0  # nothing kept: the whole window
    words = [Word(11.0, 11.5, "a"), Word(11.6, 12.0, "heap"), Word(19.0, 19.4, "is"), Word(19.5, 20.0, "full")]
    assert _longest_silence(words, 10.0, 21.0) == pytest.approx(7.0)  # the skipped sentence between 12 and 19
    assert _longest_silence(words, 10.0, 40.0) == pytest.approx(20.0)  # the window's end, never reached
    speech = [Word(t, t + 0.4, "w") for t in [10.0 + 0.5 * k for k in range(60)]]
    assert _longest_silence(speech, 10.0, 40.0) < MAX_SILENT_S  # ordinary speech: no second decoding


def test_the_recognizer_is_configured_from_the_settings(monkeypatch):
    from lecturecopilot.settings import Settings
    from services.transcribe.core import Asr

    asr = Asr.from_settings(Settings(whisper_model="tiny.en", whisper_beam_size=3, whisper_threads=1), "")
    assert (asr.model_name, asr.language, asr.beam_size, asr.threads) == ("tiny.en", None, 3, 1)
    assert Asr.from_settings(Settings(), "de").language == "de"
    # the product decodes with faster-whisper's own beam width (evals.slide_terms --beam), not greedily
    # (a test session's stacks set LC_WHISPER_BEAM_SIZE=1 in this process: the default is read without it)
    monkeypatch.delenv("LC_WHISPER_BEAM_SIZE", raising=False)
    assert Asr.from_settings(Settings(), None).beam_size == Asr("base").beam_size == 5
    with pytest.raises(ValueError):
        Settings(whisper_beam_size=0)
