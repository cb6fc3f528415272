import pytest

from lecturecopilot.captions import parse_captions


def test_webvtt_with_bom_crlf_and_no_hours(tmp_path):
    f = tmp_path / "c.vtt"
    f.write_bytes("\ufeffWEBVTT\r\n\r\n01:02.500 --> 01:05.000\r\nHash tables <b>store</b> keys.\r\n\r\n"
                  "01:05.000 --> 01:07.000\r\nChaining handles collisions.\r\n".encode("utf-8"))
    words = parse_captions(f)
    assert [w.word for w in words] == ["Hash", "tables", "store", "keys.", "Chaining", "handles", "collisions."]
    assert words[0].start_s == pytest.approx(62.5)
    assert words[3].end_s == pytest.approx(65.0, abs=0.01)
    assert all(a.start_s <= b.start_s for a, b in zip(words, words[1:]))


def test_srt(tmp_path):
    f = tmp_path / "c.srt"
    f.write_text("1\n00:00:01,000 --> 00:00:03,000\nMerge sort splits the array.\n\n"
                 "2\n00:00:03,500 --> 00:00:05,000\nThen it merges.\n")
    words = parse_captions(f)
    assert words[0].word == "Merge" and words[0].start_s == pytest.approx(1.0)
    assert words[-1].word == "merges." and words[-1].end_s == pytest.approx(5.0, abs=0.01)


@pytest.mark.parametrize("timing", ["00:00:99,000 --> xx", "00:00:04,000 --> 00:61:00,000", "00:00:04 --> 00:00:05",
                                    "4.0 --> 5.0", "99999999999:00:00,000 --> 99999999999:00:05,000"])
def test_a_cue_with_a_broken_timing_is_refused_not_dropped(tmp_path, timing):
    f = tmp_path / "c.srt"
    f.write_text(f"1\n00:00:01,000 --> 00:00:03,000\nMerge sort splits the array.\n\n2\n{timing}\nThen it merges.\n")
    with pytest.raises(ValueError, match="line 6: .*expected HH:MM:SS.mmm"):
        parse_captions(f)


def test_character_references_are_decoded(tmp_path):
    f = tmp_path / "c.vtt"
    f.write_text("WEBVTT\n\n00:01.000 --> 00:03.000\nInsert &amp; delete: a &lt; b.\n")
    assert [w.word for w in parse_captions(f)] == ["Insert", "&", "delete:", "a", "<", "b."]


def test_cue_settings_and_short_timings_are_valid(tmp_path):
    f = tmp_path / "c.vtt"
    f.write_text("WEBVTT\n\n00:01.000 --> 00:03.000 align:start position:10%\nMerge sort.\n\n"
                 "1:00:03.500 --> 1:00:05.000\nThen it merges.\n")
    assert [w.word for w in parse_captions(f)] == ["Merge", "sort.", "Then", "it", "merges."]


@pytest.mark.parametrize("content", ["WEBVTT\n\n", "this is not a caption file", ""])
def test_unreadable_or_empty_captions(tmp_path, content):
    f = tmp_path / "c.vtt"
    f.write_text(content)
    with pytest.raises(ValueError):
        parse_captions(f)


def test_latin1_and_utf16_and_nul(tmp_path):
    f = tmp_path / "c.vtt"
    f.write_bytes("WEBVTT\n\n00:01.000 --> 00:03.000\nCafé résumé naïve.\n".encode("cp1252"))
    assert [w.word for w in parse_captions(f)] == ["Café", "résumé", "naïve."]
    f.write_bytes("WEBVTT\n\n00:01.000 --> 00:03.000\nHash tables.\n".encode("utf-16"))
    assert [w.word for w in parse_captions(f)] == ["Hash", "tables."]
    f.write_bytes(b"WEBVTT\n\n00:01.000 --> 00:03.000\nNul\x00 byte here.\n")
    assert [w.word for w in parse_captions(f)] == ["Nul", "byte", "here."]
    for junk in (b"\xff\xfe\xfa garbage!\n",  # a UTF-16 byte-order mark before bytes that are not UTF-16
                 b"\xff\xfeWEBVTT\n\n00:00:01.000 --> 00:00:05.000\nnot utf16 reallyX\n"):  # even: junk characters
        f.write_bytes(junk)
        with pytest.raises(ValueError, match="^The captions file starts with a UTF-16 byte-order mark"):
            parse_captions(f)
    # a UTF-8 byte-order mark before a byte that is not UTF-8: said so, not read as Windows-1252 (where
    # the mark itself became "ï»¿" before "WEBVTT" and the file was refused as "Invalid format")
    f.write_bytes(b"\xef\xbb\xbfWEBVTT\n\n00:01.000 --> 00:03.000\nCaf\xe9 tables.\n")
    with pytest.raises(ValueError, match="^The captions file starts with a UTF-8 byte-order mark, but byte [0-9]+ is not UTF-8"):
        parse_captions(f)
    f.write_bytes(b"WEBVTT\n\n00:01.000 --> 00:03.000\nCaf\xe9 tables.\n")  # no mark: Windows-1252 is a fair guess
    assert [w.word for w in parse_captions(f)] == ["Caf\u00e9", "tables."]


def test_overlapping_cues_keep_speech_order(tmp_path):
    f = tmp_path / "c.vtt"
    f.write_text("WEBVTT\n\n00:00.000 --> 00:04.000\nHash tables store keys.\n\n"
                 "00:03.000 --> 00:06.000\nChaining handles collisions.\n")
    words = parse_captions(f)
    assert " ".join(w.word for w in words) == "Hash tables store keys. Chaining handles collisions."
    assert all(a.end_s <= b.start_s + 1e-6 for a, b in zip(words, words[1:]))
    assert words[4].start_s == pytest.approx(4.0, abs=0.01) and words[-1].end_s == pytest.approx(6.0, abs=0.01)


def test_roll_up_captions_do_not_repeat_lines(tmp_path):
    f = tmp_path / "c.vtt"
    f.write_text("WEBVTT\n\n00:00.000 --> 00:02.000\nso a heap is\n\n"
                 "00:02.000 --> 00:04.000\nso a heap is\na complete binary tree\n\n"
                 "00:04.000 --> 00:06.000\na complete binary tree\nwith the heap property\n")
    words = parse_captions(f)
    assert " ".join(w.word for w in words) == "so a heap is a complete binary tree with the heap property"
    assert words[4].start_s == pytest.approx(2.0) and words[-1].end_s == pytest.approx(6.0, abs=0.01)


def test_control_and_text_direction_characters_never_reach_the_words(tmp_path):
    f = tmp_path / "c.vtt"
    f.write_text("WEBVTT\n\n00:00.000 --> 00:04.000\nThe \u202egnp.exe\u202c walrus \u2066x\u2069 and \x01\x07\x1b[31m red\n",
                 encoding="utf-8")
    text = " ".join(w.word for w in parse_captions(f))
    assert text == "The gnp.exe walrus x and [31m red"


def test_srt_style_comma_times_in_a_webvtt_file_are_read(tmp_path):
    f = tmp_path / "c.vtt"
    f.write_text("WEBVTT\n\n00:00:01,000 --> 00:00:03,500\nhello there\n\n00:00:04,000 --> 00:00:05,000\nagain\n",
                 encoding="utf-8")
    words = parse_captions(f)
    assert [w.word for w in words] == ["hello", "there", "again"]
    assert words[0].start_s == 1.0 and words[-1].end_s == 5.0


def test_a_cue_holding_more_words_than_its_time_could_is_refused(tmp_path):
    """300 000 words in a 10 s cue would be stretched over hours of invented lecture; a cue at the
    limit (10 words a second, 50 spare) is read."""
    f = tmp_path / "c.vtt"
    f.write_text("WEBVTT\n\n00:00.000 --> 00:10.000\n" + "word " * 300_000 + "\n")
    with pytest.raises(ValueError, match=r"The cue at 0:00 holds 300000 words in 10 s"):
        parse_captions(f)
    f.write_text("WEBVTT\n\n00:00.000 --> 00:10.000\n" + "word " * 150 + "\n")
    assert len(parse_captions(f)) == 150


def test_a_word_longer_than_any_spoken_is_refused(tmp_path):
    """A 2-million-character 'word' would make every search reply that finds it megabytes long."""
    f = tmp_path / "c.vtt"
    f.write_text("WEBVTT\n\n00:00.000 --> 00:10.000\nsee " + "x" * 2_000_000 + "\n")
    with pytest.raises(ValueError, match=r"holds a 'word' of 2000000 characters"):
        parse_captions(f)
    f.write_text("WEBVTT\n\n00:00.000 --> 00:10.000\nsee https://example.edu/" + "a" * 400 + "\n")
    assert len(parse_captions(f)) == 2


def test_an_arrow_in_an_srt_cue_s_text_is_text(tmp_path):
    """SRT has no rule against "-->" in a cue's text (a graph lecture says "u --> v"); only a timing
    line, at the head of its block, must be a valid timing."""
    f = tmp_path / "c.srt"
    f.write_text("1\n00:00:01,000 --> 00:00:04,000\nthe edge u --> v relaxes\n\n2\n00:00:04,500 --> 00:00:06,000\n"
                 "Then we go on.\n")
    assert [w.word for w in parse_captions(f)][:5] == ["the", "edge", "u", "-->", "v"]


def test_parsing_stops_at_the_first_cue_past_the_limit(tmp_path):
    from lecturecopilot.captions import TooLong

    p = tmp_path / "bomb.vtt"
    p.write_text("WEBVTT\n\n" + "\n\n".join(f"00:00:01.000 --> 00:00:01.000\n{' '.join('ab'[i % 2] * 50)}"
                                            for i in range(2000)) + "\n")
    with pytest.raises(TooLong) as e:
        parse_captions(p, max_end_s=600)
    assert 600 < e.value.end_s < 605  # 50 words of no time are stretched to 2.5 s each
    assert parse_captions(p)[-1].end_s == pytest.approx(5001.0, abs=0.1)  # no limit: all of it (from 0:01)
    p.write_text("WEBVTT\n\n" + "\n\n".join("00:00:01.000 --> 00:00:02.000\nx" for _ in range(400)) + "\n")
    with pytest.raises(TooLong, match="more than 350 cues"):
        parse_captions(p, max_end_s=60)
