"""The chapter evaluation's measures (evals.chapters): Pk / WindowDiff on second units and boundary matching."""

from evals.chapters import boundary_match, score, title_share, units


def test_units_mark_the_second_before_each_chapter_start():
    assert units([3.0, 7.2], 10) == "0010001000"
    assert units([], 4) == "0000"


def test_an_exact_segmentation_scores_zero_and_one_chapter_misses_every_boundary():
    ref = [0.0, 300.0, 700.0]
    exact = score(ref, ref, 1000)
    assert exact["pk"] == 0 and exact["windowdiff"] == 0 and exact["hits"] == 2
    one = score(ref, [0.0], 1000)
    assert one["hits"] == 0 and one["pk"] > 0.2 and one["boundaries"] == 0


def test_a_boundary_counts_within_the_tolerance_and_each_reference_once():
    assert boundary_match([300.0], [340.0]) == 1
    assert boundary_match([300.0], [380.0]) == 0
    assert boundary_match([300.0], [290.0, 310.0]) == 1
    near = score([0.0, 300.0, 700.0], [0.0, 320.0, 690.0], 1000)
    far = score([0.0, 300.0, 700.0], [0.0, 500.0], 1000)
    assert near["pk"] < far["pk"]


def test_titles_match_on_a_shared_stemmed_content_word():
    ref = [{"start_s": 0, "end_s": 100, "title": "Merge Sort and Merging"},
           {"start_s": 100, "end_s": 200, "title": "Direct Access Array"}]
    hyp = [{"start_s": 0, "end_s": 120, "title": "Merges"}, {"start_s": 120, "end_s": 200, "title": "Hash tables"}]
    assert title_share(ref, hyp, 200) == 0.5
