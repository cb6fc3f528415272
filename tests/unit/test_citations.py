import pytest

import re

from services.ask.citations import PassageRef, RawCitation, extract, parse_time, split_sentences, take_sentences, validate

P = [PassageRef(1, "a", 4, 600.0, 660.0), PassageRef(2, "a", 4, 1880.0, 1950.0), PassageRef(3, "b", 5, 10.0, 80.0)]


@pytest.mark.parametrize("text,expected", [
    ("12:34", 754.0), ("1:02:03", 3723.0), ("754s", 754.0), ("754.5", 754.5), ("0:05", 5.0), ("31:32.5", 1892.5),
])
def test_parse_time(text, expected):
    assert parse_time(text) == expected


@pytest.mark.parametrize("sentence,clean,cites", [
    ("Chaining stores a list [S2 @ 31:32].", "Chaining stores a list.", [RawCitation(2, None, 1892.0)]),
    ("Chaining stores a list [S2@31:32].", "Chaining stores a list.", [RawCitation(2, None, 1892.0)]),
    ("Chaining stores a list [S2, 31:32].", "Chaining stores a list.", [RawCitation(2, None, 1892.0)]),
    ("Chaining stores a list (S2 31:32).", "Chaining stores a list.", [RawCitation(2, None, 1892.0)]),
    ("Chaining stores a list [Source 2 at 0:31:32].", "Chaining stores a list.", [RawCitation(2, None, 1892.0)]),
    ("Chaining stores a list [S2 @ 1892s].", "Chaining stores a list.", [RawCitation(2, None, 1892.0)]),
    ("Chaining stores a list 【S2 @ 31:32】.", "Chaining stores a list.", [RawCitation(2, None, 1892.0)]),
    ("Both are used [S1 @ 10:05; S2 @ 31:40].", "Both are used.", [RawCitation(1, None, 605.0), RawCitation(2, None, 1900.0)]),
    ("Chaining stores a list [L4 · 31:32].", "Chaining stores a list.", [RawCitation(None, 4, 1892.0)]),
    ("Chaining stores a list [Lecture 4, 31:32].", "Chaining stores a list.", [RawCitation(None, 4, 1892.0)]),
    ("Chaining stores a list [S2].", "Chaining stores a list.", [RawCitation(2, None, None)]),
    ("Arrays (see below) are fast.", "Arrays (see below) are fast.", []),
    ("Use a[i] to index.", "Use a[i] to index.", []),
])
def test_extract_variants(sentence, clean, cites):
    assert extract(sentence) == (clean, cites)


def test_split_keeps_trailing_citation_with_its_sentence():
    text = "Chaining stores a list. [S2 @ 31:32] Open addressing probes. [S1 @ 10:10] Done [S3 @ 0:20]."
    parts = split_sentences(text)
    assert len(parts) == 3
    assert [extract(p)[1][0].source for p in parts] == [2, 1, 3]
    assert extract(parts[0])[0] == "Chaining stores a list."


STREAMED = ("According to the lecture, chaining stores a list [S2 @ 31:32]. Open addressing probes. [S1 @ 10:10] "
            "It looks for \"another slot.\" Done (S3, 0:20).")


def _pieces(text: str, how: str) -> list[str]:
    if how == "chars":
        return list(text)
    if how == "trailing_space":  # "word " pieces, as some servers stream
        return re.findall(r"\S+\s*", text)
    if how == "leading_space":  # " word" pieces, as OpenAI's tokens come
        return re.findall(r"\s*\S+", text)
    return [text[i:i + 7] for i in range(0, len(text), 7)]  # arbitrary cuts, as Gemini's chunks


@pytest.mark.parametrize("how", ["chars", "trailing_space", "leading_space", "cuts"])
def test_sentences_taken_from_a_stream_are_those_of_the_whole_text(how):
    """However the stream is cut, the sentences released as it arrives are those of the whole text:
    no two words glued where a piece ended in a space, and a citation after a full stop still with
    its sentence when its group arrives in pieces."""
    buffer, got = "", []
    for piece in _pieces(STREAMED, how):
        buffer += piece
        done, buffer = take_sentences(buffer)
        got += done
    got += split_sentences(buffer)
    assert got == split_sentences(STREAMED), got
    assert [extract(p)[1][0].source for p in got if extract(p)[1]] == [2, 1, 3]


@pytest.mark.parametrize("cites,ok,reason_part", [
    ([RawCitation(2, None, 1892.0)], True, None),
    ([RawCitation(2, None, 1951.5)], True, None),               # within the 2 s tolerance
    ([], False, "no citation"),
    ([RawCitation(4, None, 10.0)], False, "not one of the passages"),
    ([RawCitation(0, None, 10.0)], False, "not one of the passages"),
    ([RawCitation(1, None, 1892.0)], False, "outside S1"),
    ([RawCitation(2, None, None)], False, "no time"),
    ([RawCitation(None, 5, 30.0)], True, None),
    ([RawCitation(None, 5, 300.0)], False, "not inside any passage"),
    ([RawCitation(None, 9, 30.0)], False, "not inside any passage"),
])
def test_validate(cites, ok, reason_part):
    valid, reason = validate(cites, P)
    assert (reason is None) == ok
    if ok:
        assert valid and all(v.passage.start_s <= v.t_s <= v.passage.end_s for v in valid)
    else:
        assert reason_part in reason and valid == []


def _streamed(pieces) -> tuple[list[str], str]:
    """``pieces`` cut as a stream is cut (``services.ask.writers.fallback._Cutter``): each piece added to the
    buffer, which ``take_sentences`` looks at from where it last found nothing."""
    got, buffer, since = [], "", 0
    for piece in pieces:
        buffer += piece
        complete, buffer = take_sentences(buffer, since)
        got += complete
        since = len(buffer)
    return got, buffer


@pytest.mark.parametrize("text", [
    "Hashing maps keys. [S1 @ 0:01] Chaining keeps lists [S1 @ 0:40]. Open addressing probes (S1, 0:50). Done.",
    "One [S1 @ 0:0" + "1]. Two. \"Three.\" Four! " * 30 + "e.g. five " * 200 + "Six.",
])
def test_a_stream_cut_piece_by_piece_gives_the_sentences_of_the_whole_text(text):
    for size in (1, 3, 7, 50):
        got, rest = _streamed(text[i:i + size] for i in range(0, len(text), size))
        assert got + split_sentences(rest) == split_sentences(text), size


def test_a_long_stream_with_no_sentence_end_is_looked_at_a_bounded_number_of_times(monkeypatch):
    """Issue 31: a 4 MB answer with no full stop rescanned its whole buffer for every piece."""
    from services.ask import citations

    scanned = []
    real = citations._cites_before_stop
    monkeypatch.setattr(citations, "_cites_before_stop", lambda text: scanned.append(len(text)) or real(text))
    pieces = ["blah blah. " if i % 50 == 0 else "blah " for i in range(20_000)]  # 100 kB; no "." ends a sentence
    got, rest = _streamed(pieces)
    assert got == [] and len(rest) == sum(map(len, pieces))
    assert sum(scanned) <= len(pieces) * (citations.LOOK_BACK + 11)  # linear; rescanning it all: 1e9 characters
