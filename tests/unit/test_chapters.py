import numpy as np

from services.index.chapters import chapter_boundaries, chapter_budget, chapter_title, make_chapters
from services.index.core import Segment, Sentence


def _unit(v):
    v = np.asarray(v, dtype="float32")
    return v / np.linalg.norm(v)


def test_boundaries_follow_topic_shifts():
    rng = np.random.default_rng(0)
    topics = [_unit(rng.normal(size=16)) for _ in range(3)]
    vecs = np.stack([_unit(topics[i // 5] + 0.1 * rng.normal(size=16)) for i in range(15)])
    assert chapter_boundaries(vecs) == [0, 5, 10]


def test_one_topic_is_one_chapter_and_short_lectures_too():
    rng = np.random.default_rng(1)
    t = _unit(rng.normal(size=16))
    vecs = np.stack([_unit(t + 0.05 * rng.normal(size=16)) for _ in range(12)])
    assert chapter_boundaries(vecs) == [0]
    assert chapter_boundaries(vecs[:4]) == [0]


def test_chapters_never_shorter_than_min_segments():
    rng = np.random.default_rng(2)
    vecs = np.stack([_unit(rng.normal(size=16)) for _ in range(20)])  # noise: many shallow gaps
    starts = chapter_boundaries(vecs, min_segments=3)
    bounds = starts + [20]
    assert starts[0] == 0 and all(b - a >= 3 for a, b in zip(bounds, bounds[1:]))


def test_the_budget_keeps_the_deepest_shifts_and_grows_with_the_lecture():
    rng = np.random.default_rng(3)
    topics = [_unit(rng.normal(size=16)) for _ in range(6)]
    vecs = np.stack([_unit(topics[i // 5] + 0.1 * rng.normal(size=16)) for i in range(30)])
    assert chapter_boundaries(vecs) == [0, 5, 10, 15, 20, 25]
    three = chapter_boundaries(vecs, max_chapters=3)
    assert len(three) == 3 and set(three) < {0, 5, 10, 15, 20, 25}
    assert [chapter_budget(s) for s in (60, 240, 1800, 3180, 7200)] == [1, 2, 3, 6, 12]


def test_title_is_the_distinctive_phrase():
    df = {"hash": 1, "table": 1, "the": 9, "sort": 8, "merge": 2}
    assert chapter_title("the hash table and the hash table again, we sort", df, 10) == "Hash Table"


def test_make_chapters_bullets_are_central_sentences_in_order():
    rng = np.random.default_rng(3)
    topics = [_unit(rng.normal(size=8)) for _ in range(2)]
    segs, seg_vecs, sent_vecs = [], [], []
    for i in range(8):
        t = topics[i // 4]
        sents = [Sentence(i * 60 + j * 20, i * 60 + j * 20 + 18, f"Sentence {j} of segment {i} about topic words here.")
                 for j in range(3)]
        segs.append(Segment(i * 60, i * 60 + 58, sents))
        seg_vecs.append(_unit(t + 0.05 * rng.normal(size=8)))
        sent_vecs.append(np.stack([_unit(t + 0.3 * rng.normal(size=8)) for _ in sents]))
    chapters = make_chapters(segs, np.stack(seg_vecs), sent_vecs)
    assert [c.first_segment for c in chapters] == [0, 4]
    assert chapters[0].start_s == 0 and chapters[1].start_s == 240
    for c in chapters:
        assert 1 <= len(c.bullets) <= 3 and c.title


def test_chapter_titles_skip_contractions_and_classroom_words():
    df = {"hashing": 1, "show": 9, "explain": 9}
    text = "I'll show you, we're going to do hashing today. I'll explain, you'll see, a lot of stuff, guys."
    assert chapter_title(text, df, 10) == "Hashing"
    assert chapter_title("I'll we're don't you'll", {}, 10) == "Untitled"
    assert chapter_title("euler's tour and euler's tour", {}, 10) == "Euler Tour"  # a possessive names its owner
    text = "Dijkstra's algorithm finds paths. Dijkstra's queue holds vertices. We run Dijkstra's algorithm again."
    assert chapter_title(text, {"dijkstra": 1, "algorithm": 1, "paths": 3, "queue": 3}, 10) == "Dijkstra"


def test_a_chapter_takes_the_title_of_the_slide_shown_longest_in_it():
    from services.index.chapters import slide_chapter_title

    slides = [(0.0, "Binary heaps"), (30.0, "Max-heap property"), (100.0, ""), (150.0, "Insert: sift up")]
    assert slide_chapter_title(slides, 0.0, 120.0) == "Max-heap property"  # 30 s vs 70 s; the untitled slide counts for none
    assert slide_chapter_title(slides, 140.0, 200.0) == "Insert: sift up"   # 50 s vs the untitled one's 10 s
    assert slide_chapter_title(slides, 0.0, 25.0) == "Binary heaps"
    assert slide_chapter_title([], 0.0, 60.0) == ""
    # no slide up for half of it (a short lecture in one chapter): its first slide names it
    lecture = [(0.0, "The central limit theorem"), (14.5, "Standard error"), (32.0, "Confidence intervals"),
               (48.0, "Building a 95% interval"), (64.0, "Interpreting the interval")]
    assert slide_chapter_title(lecture, 0.0, 85.0) == "The central limit theorem"
    assert slide_chapter_title(lecture, 10.0, 85.0) == "The central limit theorem"  # up at the start: it counts
    # a title slide naming the lecture is passed over (a trial's first chapter was "ECON 102 — Lecture 1")
    econ = [(0.0, "ECON 102 — Lecture 1"), (13.1, "What is inflation?"), (39.1, "The consumer price index"),
            (65.1, "Computing the inflation rate"), (90.0, "Nominal vs real values")]
    assert slide_chapter_title(econ, 0.0, 117.0) == "What is inflation?"
    assert slide_chapter_title([(0.0, "Week 3: Entropy")], 0.0, 60.0) == "Week 3: Entropy"  # the only one
    # a name card left up for most of the stretch names the lecturer, not the stretch (a chemistry trial's chapter
    # was "Dr. Ada Okafor"): a title none of whose words is said there is passed over
    card = [(33.0, "Nucleophilic substitution"), (95.0, "Dr. Ada Okafor")]
    said = "A nucleophile attacks the carbon. The substitution goes in one step or in two, through a carbocation."
    assert slide_chapter_title(card, 33.0, 186.0) == "Dr. Ada Okafor"
    assert slide_chapter_title(card, 33.0, 186.0, said) == "Nucleophilic substitution"
    assert slide_chapter_title([(95.0, "Dr. Ada Okafor")], 95.0, 186.0, said) == ""
    assert slide_chapter_title(lecture, 0.0, 85.0, "the limit of the sampling distribution") == "The central limit theorem"


def test_make_chapters_prefer_the_slides_spelling_to_the_transcripts():
    rng = np.random.default_rng(4)
    t = _unit(rng.normal(size=8))
    # speech recognition heard "binary search trees" as "minor research trees"
    sents = [Sentence(i * 20, i * 20 + 18, "Today we talk about minor research trees and their keys.") for i in range(3)]
    segs = [Segment(0, 58, sents)]
    vecs = [np.stack([_unit(t + 0.1 * rng.normal(size=8)) for _ in sents])]
    plain = make_chapters(segs, np.stack([t]), vecs)
    titled = make_chapters(segs, np.stack([t]), vecs, slide_titles=[(0.0, "Binary search trees")])
    assert plain[0].title != "Binary search trees" and titled[0].title == "Binary search trees"


def test_slide_titles_are_short_first_lines_with_a_word():
    from lecturecopilot.slidetext import slide_title

    assert slide_title(["Binary heaps", "• Max-heap property"]) == "Binary heaps"
    assert slide_title(["Open addressing:"]) == "Open addressing"   # a section slide: all title
    assert slide_title(["• Insert: sift up", "• Extract-max"]) == ""   # a list, no title
    assert slide_title(["T(n) = 2T(n/2) + n"]) == ""
    assert slide_title(["one two three four five six seven eight nine", "body"]) == ""


def _slide_lecture(n: int, span_s: float, said: tuple[str, ...] = ()):
    rng = np.random.default_rng(5)
    topics = [_unit(rng.normal(size=8)) for _ in range(n)]
    segs, vecs, sent_vecs = [], [], []
    for i in range(n):
        about = said[i] if i < len(said) else f"part {i}"
        sents = [Sentence(i * span_s, i * span_s + span_s - 2, f"Sentence about {about} of this lecture here.")]
        segs.append(Segment(i * span_s, (i + 1) * span_s - 1, sents))
        vecs.append(_unit(topics[i] + 0.05 * rng.normal(size=8)))
        sent_vecs.append(np.stack([vecs[-1]]))
    return segs, np.stack(vecs), sent_vecs


def test_a_short_lecture_with_slides_is_chaptered_at_its_slides_within_a_budget():
    # five parts of 50 s, each under its own slide: too few passages for TextTiling (one chapter before)
    titles = ["Collisions", "Two ways", "Open addressing", "Chaining", "Why it works"]
    segs, vecs, sent_vecs = _slide_lecture(5, 50.0, tuple(t.lower() for t in titles))  # each part says its title's words
    slides = [(i * 50.0, t) for i, t in enumerate(titles)]
    assert [c.first_segment for c in make_chapters(segs, vecs, sent_vecs)] == [0]
    chapters = make_chapters(segs, vecs, sent_vecs, slide_titles=slides)
    assert len(chapters) == 3  # 250 s: one chapter per 120 s at most, the sharpest slide changes
    assert all(c.title in {t for _, t in slides} for c in chapters)
    # the same slide title again starts nothing; no chapter under 30 s
    same = [(0.0, "Heaps"), (50.0, "Heaps"), (100.0, "Heaps")]
    assert [c.first_segment for c in make_chapters(segs[:3], vecs[:3], sent_vecs[:3], slide_titles=same)] == [0]
    short, svecs, ssent = _slide_lecture(6, 20.0)
    titled = [(i * 20.0, f"Slide {i}") for i in range(6)]
    starts = [c.start_s for c in make_chapters(short, svecs, ssent, slide_titles=titled)]
    bounds = starts + [short[-1].end_s]
    assert all(b - a >= 30 for a, b in zip(bounds, bounds[1:])), starts


def test_chapters_share_no_second_when_passages_share_a_sentence():
    sents = [Sentence(60.0 * i, 60.0 * i + 58, f"topic {i // 3} sentence number {i} here is a longer line") for i in range(12)]
    segs = [Segment(s.start_s, s.end_s + 6.0, [s]) for s in sents]  # each passage runs into the next
    rng = np.random.default_rng(4)
    topics = [_unit(rng.normal(size=16)) for _ in range(4)]
    vecs = np.stack([_unit(topics[i // 3 if i < 6 else 1 + i // 6] + 0.05 * rng.normal(size=16)) for i in range(12)])
    chapters = make_chapters(segs, vecs, [v[None, :] for v in vecs])
    assert len(chapters) >= 2
    assert all(a.end_s == b.start_s for a, b in zip(chapters, chapters[1:]))


def test_a_chapter_is_summed_up_by_what_was_said_not_by_its_slide():
    said = [Sentence(10.0 * i, 10.0 * i + 9, f"we now look at how the window grows in step {i} here") for i in range(3)]
    slide = Sentence(0.0, 0.0, "Why congestion control?: Flow control: receiver window; Collapse in 1986", kind="slide")
    rng = np.random.default_rng(5)
    t = _unit(rng.normal(size=16))
    segs = [Segment(0.0, 29.0, [slide] + said)]
    vecs = [np.stack([t] + [_unit(t + 0.5 * rng.normal(size=16)) for _ in said])]  # the slide is the most central
    [chapter] = make_chapters(segs, np.stack([t]), vecs)
    assert chapter.bullets == [s.text for s in said]
    [only] = make_chapters([Segment(0.0, 0.0, [slide])], np.stack([t]), [np.stack([t])])
    assert only.bullets == [slide.text]  # nothing said: the slide it is
