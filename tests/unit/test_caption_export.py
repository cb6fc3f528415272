"""Captions out (services/gateway/caption_export.py): the VTT and SRT files read back with webvtt-py
with the same cue times (to the millisecond) and text, under and over one hour, with text that
needs escaping; long sentences cut into short cues at word times; slides marked."""

from __future__ import annotations

import html
import re

import pytest
import webvtt

from lecturecopilot.captions import Word, parse_captions
from services.gateway.caption_export import (LINE_CHARS, MAX_CUE_S, SLIDE_CUE_S, Cue, Line, build_cues,
                                             download_name, to_srt, to_vtt)

LONG = ("So today we are going to talk about hashing, which is the idea that we can store a set of keys "
        "in a table whose size is about the number of keys, and not the size of the universe they come from.")
TRICKY = "  if a --> b and c < d & e > f,\n\nthen <b>x</b> &amp; y  "


def _words(text: str, start_s: float, step_s: float = 0.4) -> list[Word]:
    return [Word(round(start_s + i * step_s, 3), round(start_s + i * step_s + 0.3, 3), t)
            for i, t in enumerate(text.split())]


def _lecture(offset_s: float) -> tuple[list[Line], list[Word]]:
    """Sentences (speech and slides) and words of a lecture starting ``offset_s`` in."""
    texts = ["Hashing stores keys in a table.", LONG, "Collisions happen & we chain them.", TRICKY]
    words: list[Word] = []
    lines: list[Line] = []
    t = offset_s + 1.0
    for i, text in enumerate(texts):
        ws = _words(text, t)
        words += ws
        lines.append(Line(ws[0].start_s, ws[-1].end_s, " ".join(w.word for w in ws)))
        if i == 0:  # a slide appears while the lecturer speaks
            lines.append(Line(ws[0].start_s + 0.5, ws[0].start_s + 1.5,
                              "Hashing: a table of size m for n keys, with m about n, and a hash function h.", "slide"))
        t = ws[-1].end_s + 2.0
    return lines, words


def _srt_text(raw: str) -> str:
    """SRT cue text as shown: the two references srt_escape writes, decoded."""
    return raw.replace("&lt;", "<").replace("&gt;", ">")


def _same(cues: list[Cue], read: webvtt.WebVTT, decode=html.unescape) -> None:
    """The read-back captions have the cues' times (ms) and text (``decode``: its character references)."""
    assert len(read.captions) == len(cues)
    for cue, cap in zip(cues, read.captions):
        assert cap.start_time.in_milliseconds() == round(cue.start_s * 1000)
        assert cap.end_time.in_milliseconds() == round(cue.end_s * 1000)
        assert decode(cap.raw_text) == "\n".join(cue.lines)


@pytest.mark.parametrize("offset_s", [0.0, 3600.0 + 59 * 60 + 57.123], ids=["under-an-hour", "over-an-hour"])
def test_vtt_and_srt_read_back_with_the_same_times_and_text(tmp_path, offset_s):
    lines, words = _lecture(offset_s)
    cues = build_cues(lines, words)
    assert len(cues) >= 6 and any(c.slide for c in cues)
    (tmp_path / "c.vtt").write_text(to_vtt(cues), encoding="utf-8")
    (tmp_path / "c.srt").write_text(to_srt(cues), encoding="utf-8")
    vtt = webvtt.read(str(tmp_path / "c.vtt"), strict=True)
    _same(cues, vtt)
    _same(cues, webvtt.from_srt(str(tmp_path / "c.srt")), _srt_text)
    # slides sit at the top of the picture in WebVTT; speech has no settings
    assert [str(c.settings) for c in vtt.captions] == ["line:0" if c.slide else "" for c in cues]
    if offset_s > 3600:
        assert re.search(r"^01:59:5\d\.\d{3} --> 02:00:\d\d\.\d{3}$", to_vtt(cues), re.M)
        assert re.search(r"^02:00:\d\d,\d{3} --> 02:00:\d\d,\d{3}$", to_srt(cues), re.M)


def test_text_that_needs_care_comes_back_as_it_was_said(tmp_path):
    cues = build_cues([Line(5.0, 9.0, TRICKY)])
    said = "if a --> b and c < d & e > f, then <b>x</b> &amp; y"
    assert " ".join(" ".join(c.lines) for c in cues) == said  # whitespace and blank lines folded
    vtt, srt = to_vtt(cues), to_srt(cues)
    assert "-->" not in "".join(vtt.split("\n")[3:]) and "&amp;amp;" in vtt and "&lt;b&gt;" in vtt
    assert "\n\n\n" not in vtt and "\n\n\n" not in srt
    (tmp_path / "c.vtt").write_text(vtt)
    (tmp_path / "c.srt").write_text(srt)
    _same(cues, webvtt.read(str(tmp_path / "c.vtt"), strict=True))
    _same(cues, webvtt.from_srt(str(tmp_path / "c.srt")), _srt_text)
    # SRT stays plain where it can: "&" and "-->" are written as they are, a tag-like "<" is escaped
    assert "& e" in srt and "&lt;b>" in srt and "a --> b" in srt


def test_srt_arrow_after_a_line_of_digits_is_not_read_as_the_next_cue(tmp_path):
    cues = [Cue(1.0, 2.0, ("2024", "--> 00:00:05,000 is not a time")), Cue(3.0, 4.0, ("then",))]
    srt = to_srt(cues)
    assert "\n--&gt; 00:00:05,000" in srt
    (tmp_path / "c.srt").write_text(srt)
    _same(cues, webvtt.from_srt(str(tmp_path / "c.srt")), _srt_text)
    (tmp_path / "c.vtt").write_text(to_vtt(cues))
    _same(cues, webvtt.read(str(tmp_path / "c.vtt"), strict=True))


def test_srt_arrow_in_a_line_that_starts_like_a_time_is_escaped(tmp_path):
    cues = [Cue(1.0, 2.0, ("00:00:09,000 --> 00:00:10,000 injected",)), Cue(3.0, 4.0, ("then", "1:2:3.4-->5:6:7.8")),
            Cue(5.0, 6.0, ("at 00:00:09,000 --> b stays plain",))]
    srt = to_srt(cues)
    assert "\n00:00:09,000 --&gt; 00:00:10,000 injected\n" in srt and "\n1:2:3.4--&gt;5:6:7.8\n" in srt
    assert "at 00:00:09,000 --> b stays plain" in srt
    (tmp_path / "c.srt").write_text(srt)
    _same(cues, webvtt.from_srt(str(tmp_path / "c.srt")), _srt_text)


def test_long_sentence_is_cut_at_word_times_into_short_cues():
    ws = _words(LONG, 100.0, step_s=0.45)
    cues = build_cues([Line(ws[0].start_s, ws[-1].end_s, LONG)], ws)
    assert len(cues) >= 3
    assert " ".join(" ".join(c.lines) for c in cues) == LONG  # every word, once, in order
    starts = {w.start_s for w in ws}
    for a, b in zip(cues, cues[1:]):
        assert b.start_s in starts and a.end_s == b.start_s  # cut between words, no gap in a sentence
    for c in cues:
        assert 1 <= len(c.lines) <= 2 and all(len(x) <= LINE_CHARS for x in c.lines)
        assert c.end_s - c.start_s <= MAX_CUE_S + 0.3  # the last word's own length past its start
    assert cues[0].start_s == ws[0].start_s and cues[-1].end_s == ws[-1].end_s


def test_without_words_the_sentence_time_is_spread_and_still_cut():
    cues = build_cues([Line(10.0, 40.0, LONG)])
    assert len(cues) >= 3 and cues[0].start_s == 10.0 and cues[-1].end_s == 40.0
    assert all(c.end_s - c.start_s <= MAX_CUE_S + 1e-6 for c in cues)
    assert " ".join(" ".join(c.lines) for c in cues) == LONG


def test_words_that_do_not_spell_the_sentence_are_not_used():
    ws = _words("something else entirely was said here", 10.0)
    cues = build_cues([Line(10.0, 12.0, "Hash tables store keys.")], ws)
    assert cues == [Cue(10.0, 12.0, ("Hash tables store keys.",))]


def test_slides_are_marked_short_and_end_before_the_next_slide():
    body = "Open addressing: " + " ".join(f"probe{i}" for i in range(40))
    cues = build_cues([Line(0.0, 1.0, body, "slide"), Line(2.0, 3.0, "Chaining: lists in buckets.", "slide"),
                       Line(30.0, 31.0, "Load factor: n over m.", "slide"), Line(30.5, 33.0, "Now the load factor.")])
    slides = [c for c in cues if c.slide]
    assert [c.start_s for c in slides] == [0.0, 2.0, 30.0]
    assert all(c.lines[0].startswith("[Slide] ") and len(c.lines) <= 2 for c in slides)
    assert slides[0].lines[-1].endswith("…") and all(len(x) <= LINE_CHARS for x in slides[0].lines)
    assert slides[0].end_s == 2.0 and slides[1].end_s == 2.0 + SLIDE_CUE_S and slides[2].end_s == 30.0 + SLIDE_CUE_S
    assert slides[2].lines == ("[Slide] Load factor: n over m.",)


def test_every_cue_lasts_and_empty_lines_are_skipped():
    cues = build_cues([Line(1.0, 1.0, "Short."), Line(1.2, 1.2, "Next."), Line(5.0, 5.0, "Last."),
                       Line(6.0, 7.0, " \n\t ")])
    assert [(c.start_s, c.end_s) for c in cues] == [(1.0, 1.2), (1.2, 1.7), (5.0, 5.5)]


def test_exported_vtt_uploads_back_to_the_same_words(tmp_path):
    """The export, slides and all, read back as uploaded captions gives the speech's words: a slide's
    cue (``[Slide] …``) is not taken for speech (a newcomer re-uploaded an export and found the slide's
    text in the transcript, beside the real slide)."""
    lines, words = _lecture(0.0)
    speech = [x for x in lines if x.kind == "speech"]
    assert len(speech) < len(lines)  # the lecture has a slide
    f = tmp_path / "c.vtt"
    f.write_text(to_vtt(build_cues(lines, words)))
    assert [w.word for w in parse_captions(f)] == " ".join(x.text for x in speech).split()
    f = tmp_path / "c.srt"  # SRT has no escapes: "&amp;" said comes back as "&", so only the slide is checked
    f.write_text(to_srt(build_cues(lines, words)))
    got = [w.word for w in parse_captions(f)]
    assert "[Slide]" not in got and "function" not in " ".join(got) and got[:5] == "Hashing stores keys in a".split()


def test_no_cues_is_still_a_valid_file():
    assert webvtt.from_string(to_vtt([]), strict=True).captions == []
    assert to_srt([]) == ""


@pytest.mark.parametrize("number,title,name", [
    (3, "Week 1: Hashing", "L3-Week-1-Hashing.vtt"),
    (1, "Vorlesung über Graphen / Teil 2!", "L1-Vorlesung-uber-Graphen-Teil-2.vtt"),
    (2, '"; rm -rf / \r\n<script>', "L2-rm-rf-script.vtt"),
    (4, "日本語", "L4-lecture.vtt"),
    (5, "x" * 300, "L5-" + "x" * 80 + ".vtt"),
])
def test_download_name_has_safe_characters_only(number, title, name):
    assert download_name(number, title, "vtt") == name
    assert re.fullmatch(r"[A-Za-z0-9._-]+", name)
