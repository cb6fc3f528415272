"""Speech recognition's words as the transcript keeps them: faster-whisper's word list, where each word
begins with its space and a punctuation token begins a new word, joined back where a word continues the
last one (a newcomer's statistics lecture showed "1 .96 standard errors" and "a 95 % confidence interval")."""

from faster_whisper.transcribe import Segment, Word

from services.transcribe.core import _segments_to_words


def _segment(start: float, words: list[tuple[str, float, float]]) -> Segment:
    text = "".join(w for w, _, _ in words)
    return Segment(id=0, seek=0, start=start, end=words[-1][2], text=text, tokens=[], avg_logprob=-0.2,
                   compression_ratio=1.2, no_speech_prob=0.01, temperature=0.0,
                   words=[Word(start=a, end=b, word=w, probability=0.9) for w, a, b in words])


def test_a_word_without_its_space_continues_the_last_one():
    seg = _segment(0.0, [(" A", 0.0, 0.2), (" 95", 0.2, 0.6), ("%", 0.6, 0.9), (" interval", 0.9, 1.4),
                         (" is", 1.4, 1.5), (" 1", 1.5, 1.8), (".96", 1.8, 2.4), (" max", 2.4, 2.6),
                         ("-heap", 2.6, 3.0), (" errors.", 3.0, 3.5)])
    words = _segments_to_words([seg], 10.0, [], None)
    assert [w.word for w in words] == ["A", "95%", "interval", "is", "1.96", "max-heap", "errors."]
    assert (words[1].start_s, words[1].end_s) == (10.2, 10.9) and (words[4].start_s, words[4].end_s) == (11.5, 12.4)


def test_a_segment_never_continues_the_one_before():
    one = _segment(0.0, [(" It", 0.0, 0.3), (" ends.", 0.3, 0.8)])
    two = _segment(1.0, [("Then", 1.0, 1.3), (" more.", 1.3, 1.8)])  # a segment's first word may lack its space
    assert [w.word for w in _segments_to_words([one, two], 0.0, [], None)] == ["It", "ends.", "Then", "more."]
