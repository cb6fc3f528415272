from services.index.core import TimedWord, make_segments, split_sentences


def words_from(text: str, start: float = 0.0, rate_s: float = 0.4) -> list[TimedWord]:
    out, t = [], start
    for w in text.split():
        out.append(TimedWord(t, t + rate_s * 0.9, w))
        t += rate_s
    return out


def test_sentences_end_on_punctuation():
    s = split_sentences(words_from("Hashing maps keys. Why? Because arrays are fast! Done"))
    assert [x.text for x in s] == ["Hashing maps keys.", "Why?", "Because arrays are fast!", "Done"]
    assert s[0].start_s == 0.0 and s[1].start_s == s[0].end_s + 0.4 - 0.36


def test_unpunctuated_text_is_cut_by_length_and_pauses():
    ws = words_from("word " * 200)  # 80 s without punctuation
    s = split_sentences(ws, max_sentence_s=30)
    assert len(s) >= 3 and all(x.end_s - x.start_s <= 30 for x in s)
    paused = words_from("first part here") + words_from("second part", start=10.0)
    assert [x.text for x in split_sentences(paused)] == ["first part here", "second part"]


def test_segments_are_60_to_90_seconds_and_end_on_sentences():
    text = " ".join(f"This is sentence number {i} of the lecture." for i in range(120))
    ws = words_from(text)  # 8 words per sentence = 3.2 s, 384 s total
    sents = split_sentences(ws)
    segs = make_segments(sents)
    assert len(segs) >= 4
    for seg in segs:
        assert seg.end_s - seg.start_s <= 90
        assert seg.text.endswith(".")
    for seg in segs[:-1]:
        assert seg.end_s - seg.start_s >= 60 - 0.5
    # nothing lost, nothing duplicated
    assert sum(len(s.sentences) for s in segs) == len(sents)


def test_sentence_longer_than_max_is_cut_by_words():
    ws = words_from("a " * 300 + "end.", rate_s=0.5)  # one 150 s "sentence"
    sents = split_sentences(ws, max_sentence_s=1000, pause_s=1000)
    assert len(sents) == 1
    segs = make_segments(sents)
    assert len(segs) >= 2 and all(s.end_s - s.start_s <= 90 for s in segs)


def test_short_tail_joins_previous_segment():
    text = " ".join(f"Sentence {i} goes here." for i in range(21))  # 4 words = 1.6 s each
    segs = make_segments(split_sentences(words_from(text, rate_s=1.0)))  # 4 s per sentence, 84 s
    assert len(segs) == 1 and segs[0].end_s - segs[0].start_s <= 90


def test_slides_join_the_sentences_in_time_order_and_segments_span_them():
    from services.index.core import Sentence, TimedWord, make_segments, merge_slides

    spoken = [Sentence(0.0, 8.0, "First we hash.", [TimedWord(0.0, 8.0, "First")]),
              Sentence(8.0, 20.0, "Then we probe.", [TimedWord(8.0, 20.0, "Then")])]
    merged = merge_slides(spoken, [(10.0, "Open addressing: probe the next slot."), (8.0, "Probing."), (3.0, "  ")])
    assert [s.text for s in merged] == ["First we hash.", "Then we probe.", "Probing.",
                                        "Open addressing: probe the next slot."]
    assert merged[3].start_s == 10.0 and merged[3].end_s == 11.0 and merged[3].words == []
    seg = make_segments(merged)
    assert len(seg) == 1 and seg[0].start_s == 0.0 and seg[0].end_s == 20.0  # a slide never ends a segment early


def test_a_new_slide_starts_a_segment_once_the_one_before_spans_20_seconds():
    from services.index.core import merge_slides

    text = " ".join(f"Sentence {i} goes here." for i in range(30))  # 4 s per sentence, 120 s
    spoken = split_sentences(words_from(text, rate_s=1.0))
    slides = [(0.0, "Binary heaps: complete binary trees."), (40.0, "Max-heap property: parent at least child."),
              (52.0, "Quick aside."), (80.0, "Insert: sift up.")]
    segs = make_segments(merge_slides(spoken, slides))
    assert [round(s.start_s) for s in segs] == [0, 40, 80]  # 52 s: 12 s into a segment, no cut
    assert [[x.start_s for x in s.sentences if x.kind == "slide"] for s in segs] == [[0.0], [40.0, 52.0], [80.0]]
    assert all(s.sentences[-1].end_s <= nxt.start_s + 0.5 for s, nxt in zip(segs, segs[1:]))  # slides on sentence starts
    assert sum(len(s.sentences) for s in segs) == len(spoken) + 4
    # without slides the same speech is cut by time alone (60..90 s)
    assert [round(s.start_s) for s in make_segments(spoken)] == [0, 64]  # the first sentence end past 60 s


def test_with_sentence_embeddings_a_segment_ends_where_the_topic_shifts():
    import numpy as np

    text = " ".join(f"Sentence {i} goes here." for i in range(40))  # 4 s per sentence, 160 s
    spoken = split_sentences(words_from(text, rate_s=1.0))
    topic = [0] * 13 + [1] * 15 + [2] * 12  # shifts after 52 s and after 112 s
    rng = np.random.default_rng(0)
    vecs = np.stack([np.eye(8)[t] + 0.05 * rng.standard_normal(8) for t in topic])
    segs = make_segments(spoken, vecs=vecs)
    assert [round(s.start_s) for s in segs] == [0, 52, 112]
    assert all(s.end_s - s.start_s <= 90 for s in segs)
    assert [s for seg in segs for s in seg.sentences] == spoken
    # a shift before min_s (40 s) is not taken: one topic per 8 s gives segments of 40..90 s
    choppy = np.stack([np.eye(8)[(i // 2) % 8] for i in range(40)])
    assert all(40 - 4 <= s.end_s - s.start_s <= 90 for s in make_segments(spoken, vecs=choppy)[:-1])


def test_a_slide_during_a_sentence_leaves_it_before_and_a_merged_tail_keeps_its_end():
    from services.index.core import Sentence, TimedWord

    def said(a, b, text):
        return Sentence(a, b, text, [TimedWord(a, b, text)])

    segs = make_segments([said(0, 29, "a."), said(29, 58, "b."), said(58, 85, "c."), Sentence(79, 80, "New", kind="slide")])
    assert len(segs) == 1 and segs[0].end_s == 85  # the slide's short tail merged back: it ends with "c."
    segs = make_segments([said(0, 29, "a."), said(29, 58, "b."), said(58, 85, "c."), Sentence(79, 80, "New", kind="slide"),
                          said(85, 110, "d."), said(110, 130, "e.")])
    assert [(s.start_s, s.end_s) for s in segs] == [(0, 85), (79, 130)]  # "c." under way stays before: 6 s overlap


def test_equal_topic_shifts_cut_nearest_60_seconds():
    import numpy as np

    text = " ".join(f"Sentence {i} goes here." for i in range(40))
    spoken = split_sentences(words_from(text, rate_s=1.0))
    segs = make_segments(spoken, vecs=np.ones((len(spoken), 4)))  # no shift anywhere: every gap ties
    assert [round(s.start_s) for s in segs] == [0, 60, 120]


def test_slide_sentence_takes_a_short_first_line_as_title():
    from lecturecopilot.slidetext import slide_sentence

    assert slide_sentence(["Radix Sort", "Sort digit by digit,", "least significant first"]) == \
        "Radix Sort: Sort digit by digit, least significant first."
    assert slide_sentence(["One long line that is a whole sentence with no title at all here"]) == \
        "One long line that is a whole sentence with no title at all here."
    assert slide_sentence(["", "  "]) == ""


def test_a_slide_read_aloud_is_not_added_twice():
    from services.index.core import Sentence, TimedWord, merge_slides

    spoken = [Sentence(10.0, 16.0, "Chaining keeps a linked list of the keys in each slot.", [TimedWord(10.0, 16.0, "x")]),
              Sentence(300.0, 306.0, "Now something else entirely.", [TimedWord(300.0, 306.0, "y")])]
    read_aloud = (5.0, "Chaining: chaining keeps a linked list of the keys in each slot.")
    not_said = (8.0, "Open addressing: probe other slots until an empty one turns up.")
    said_later = (200.0, "Chaining: chaining keeps a linked list of the keys in each slot.")  # 190 s before it is said
    out = merge_slides(spoken, [read_aloud, not_said])
    # the read-aloud slide's body is not added; its title stays where its section starts (a genetics trial's
    # "Punnett squares" build slide, read aloud, was dropped and its section began on the next bullet)
    assert [(s.kind, s.start_s, s.text) for s in out[:2]] == [("slide", 5.0, "Chaining."), ("slide", 8.0, not_said[1])]
    assert [s.kind for s in out[2:]] == ["speech", "speech"]
    assert any(s.kind == "slide" for s in merge_slides(spoken, [said_later], near_s=60))
    again = (20.0, "Chaining: chaining keeps a linked list of the keys in each slot.")  # the same title again: nothing
    assert [s.start_s for s in merge_slides(spoken, [read_aloud, again]) if s.kind == "slide"] == [5.0]


def test_ocr_noise_leaves_slide_text():
    from lecturecopilot.slidetext import denoise_slide

    assert denoise_slide("Hashing: y sse ssn h essentially find another place.") == \
        "Hashing: essentially find another place."
    # words, common short words, numbers and formulas stay
    assert denoise_slide("Chaining: put x in slot h(k) of the table, O(1) expected") == \
        "Chaining: put x in slot h(k) of the table, O(1) expected"
    assert denoise_slide("Probing.") == "Probing."
    assert denoise_slide("van Emde Boas: successor in O(log log u) time") == \
        "van Emde Boas: successor in O(log log u) time"  # a lone unknown letter is a variable
    assert denoise_slide("ss q zz.") == ""


def test_slide_terms_the_lecture_never_says_stay():
    """Speech recognition mishears the terms the slide spells right ("minor repeats" for "binary
    heaps"): a slide is kept for what it says, not for agreeing with the transcript."""
    from services.index.core import Sentence, TimedWord, merge_slides
    from lecturecopilot.slidetext import denoise_slide

    spoken = [Sentence(0.0, 9.0, "Today minor repeats, a complete minor tree in an array.", [TimedWord(0.0, 9.0, "x")])]
    slide = (1.0, "Binary heaps: complete binary tree in an array, max-heap property.")
    out = merge_slides(spoken, [slide])
    assert [s.kind for s in out] == ["speech", "slide"] and "Binary heaps" in out[1].text
    assert denoise_slide("Heapify: sift down from the last internal node, BST vs heap") == \
        "Heapify: sift down from the last internal node, BST vs heap"


def test_a_sentence_said_mostly_after_a_slide_appears_goes_with_the_slide():
    """A circuits trial: "The second rule is Kirchhoff's voltage law." started at 24.8 s by the recogniser's
    clock, the voltage-law slide at 25.0 s (a frame sample); the sentence ended the current-law passage."""
    from services.index.core import Sentence, TimedWord

    def said(a, b, text):
        return Sentence(a, b, text, [TimedWord(a, b, text)])

    segs = make_segments([said(0, 12, "The first is the current law."), said(12, 24.8, "Charge is conserved."),
                          said(24.8, 27.5, "The second rule is the voltage law."),
                          Sentence(25.0, 26.0, "Kirchhoff's Voltage Law", kind="slide"),
                          said(27.5, 40, "Voltages around a loop sum to zero."), said(40, 52, "Energy is conserved.")])
    assert [[x.text for x in s.sentences][0] for s in segs] == ["The first is the current law.",
                                                                "The second rule is the voltage law."]
