"""The one check of text people send (lecturecopilot/text.py): what titles, file names and comments
may hold."""

import pytest

from lecturecopilot.text import TextError, check_filename, check_text


@pytest.mark.parametrize("value", [
    "Week 1 \u202e4pm.exe",  # right-to-left override: shows as "Week 1 exe.mp4"
    "A\u2066B\u2069", "\u202aLRE", "\u202bRLE", "\u202cPDF", "\u202dLRO", "\u2067RLI", "\u2068FSI",
    "Heaps\x01", "Bell\x07", "DEL\x7f", "C1\x9b[31m", "NUL\x00", "lone \ud800 surrogate",
])
def test_refused_in_titles(value):
    with pytest.raises(TextError) as e:
        check_text(value, "title", 200)
    assert e.value.code == "invalid_title"
    assert "text-direction controls" in str(e.value)


@pytest.mark.parametrize("value,expected", [
    ("  Week   1\n\tHeaps ", "Week 1 Heaps"),  # whitespace, line breaks included, made one space
    ("الخوارزميات Algorithms", "الخوارزميات Algorithms"),  # right-to-left text itself is welcome
    ("שיעור \u200f3", "שיעור \u200f3"),  # and the marks that write it correctly (RLM, LRM, ALM)
    ("x\u200ey \u061cz", "x\u200ey \u061cz"),
    ("Family \U0001F468\u200d\U0001F469\u200d\U0001F467", "Family \U0001F468\u200d\U0001F469\u200d\U0001F467"),
])
def test_allowed_in_titles(value, expected):
    assert check_text(value, "title", 200) == expected


def test_length_blank_and_type():
    assert check_text("x" * 200, "title", 200) == "x" * 200
    # a hostile pass listed courses titled "\u3164" (a Hangul filler) and "\u2800\u2800" (blank Braille): empty entries
    for bad in ("x" * 201, "   ", "", None, 5, ["a"], "\u3164", "\u2800\u2800", "\u115f \u200b", "\uffa0\u1160"):
        with pytest.raises(TextError):
            check_text(bad, "title", 200)


def test_multiline_keeps_line_breaks_but_not_other_controls():
    assert check_text(" line one\nline two\r\n\tend ", "comment", 2000, multiline=True) == \
        "line one\nline two\r\n\tend"
    with pytest.raises(TextError):
        check_text("line\x0bvertical tab", "comment", 2000, multiline=True)
    with pytest.raises(TextError):
        check_text("line \u202e", "comment", 2000, multiline=True)


@pytest.mark.parametrize("name", ["Week 1 \u202e4pm.exe.mp4", "a\x00b.mp4", "tab\there.mp4", "../x.mp4",
                                  "dir\\x.mp4", "..", "x" * 252 + ".mp4", "", None])
def test_refused_file_names(name):
    with pytest.raises(TextError) as e:
        check_filename(name)
    assert e.value.code == "invalid_filename"


def test_file_names_keep_their_spaces():
    assert check_filename(" My  lecture (1).mp4 ") == "My  lecture (1).mp4"
