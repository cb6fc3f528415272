"""The shared vocabulary (lecturecopilot/vocabulary.py): the wordfreq-made lists hold what they say
and leave topic words alone; the steps read their lists from it."""

from lecturecopilot import vocabulary as v


def test_common_english_is_function_words_not_topics():
    common = v.common_english(6.0)
    assert {"the", "with", "because", "people", "much"} <= common
    assert not {"algorithm", "hash", "table", "tree", "graph", "sort", "chain", "heap"} & common
    assert all(w.isalpha() and w == w.lower() for w in common)


def test_title_stop_keeps_fillers_and_common_words_but_no_topic():
    assert v.TITLE_FILLERS <= v.TITLE_STOP and v.common_english(6.0) <= v.TITLE_STOP
    assert {"um", "gonna", "folks", "stuff", "today", "the", "because"} <= v.TITLE_STOP
    assert not {"hash", "table", "algorithm", "merge", "graph", "search", "array", "binary"} & v.TITLE_STOP


def test_steps_read_the_shared_lists():
    from services.ask import disfluency, followup, gate, outline, refine, spelling
    from services.ask.examprep import quantities, words
    from services.index import chapters

    assert chapters._TITLE_STOP is v.TITLE_STOP and refine._STOP is v.REFINE_STOP and words._STOP is v.TERM_STOP
    assert spelling._KEEP is v.SPELLING_KEEP and followup._QUESTION_VERBS is v.QUESTION_VERBS
    assert disfluency._MEANT_TWICE is v.MEANT_TWICE and outline._ORDINALS is v.ORDINALS
    assert gate.COMMON_ZIPF == v.COMMON_ZIPF and gate.common_word("vs") and not gate.common_word("chaining")
    # exam prep reads spoken mathematics from here and keeps no subject's word list (terms are found statistically)
    assert words._MATH_WORDS is v.MATH_WORDS and quantities._SAME is v.SPOKEN_MATH_SAME
    assert not hasattr(v, "TERM_HEADS") and not hasattr(v, "NEAR_TIME_CLASSES")
    assert not {"sort", "heap", "table", "array", "enzyme", "price"} & v.TERM_STOP
