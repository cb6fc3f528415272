"""Whisper's known failures that the transcriber drops (services.transcribe.core._keep), on segments with the
statistics faster-whisper gave for them (the demo lecture, whisper base, prompted windows)."""

from types import SimpleNamespace

from services.transcribe import core


def _seg(text, start, end, nsp, lp, probs):
    return SimpleNamespace(text=text, start=start, end=end, no_speech_prob=nsp, avg_logprob=lp,
                           words=[SimpleNamespace(word=w, probability=p) for w, p in zip(text.split(), probs)])


def test_the_you_a_window_ends_on_is_dropped_and_speech_is_kept():
    tails = [_seg(" you", 26.84, 27.10, 0.54, -1.49, [0.02]), _seg(" Thank you.", 84.14, 84.48, 0.47, -1.18, [0.03, 0.95]),
             _seg(" .", 54.62, 54.86, 0.50, -1.25, [0.01])]
    assert not any(core._keep(s, [], "Hashing. Collisions.") for s in tails)
    assert not any(core._keep(s, [], None) for s in tails)
    speech = [_seg(" Okay.", 22.7, 23.0, 0.02, -0.20, [0.69]),           # short, but confident
              _seg(" you know,", 5.0, 5.6, 0.10, -1.10, [0.4, 0.9]),      # unsure, but its first word is not improbable
              _seg(" If there's a constant number of things stored there", 224.4, 230.0, 0.0, -1.2, [0.05] * 9)]
    assert all(core._keep(s, [], None) for s in speech)
