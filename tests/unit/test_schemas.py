"""The gateway's body models (services/gateway/schemas.py): strict JSON types, bounds, our own
error sentences naming the field, the codes the web client knows."""

from __future__ import annotations

import pytest

from services.gateway import schemas


def _refusal(model, data) -> schemas.BodyError:
    with pytest.raises(schemas.BodyError) as e:
        schemas.parse(model, data)
    return e.value


@pytest.mark.parametrize("data, field", [({"question_id": "x"}, "question_id"), ({"conn": 1}, "conn"),
                                         ({"cite_t_s": 10 ** 400}, "cite_t_s"), ({"cite_t_s": True}, "cite_t_s"),
                                         ({"options": ["a", "b", "c"]}, "options"), ({"options": ["a", 1, "b", "c"]},
                                                                                     "options[1]")])
def test_question_edits_refuse_unknown_fields_and_huge_numbers(data, field):
    e = _refusal(schemas.QuizEdit, data)
    assert e.code == "invalid_quiz" and e.field == field and f"'{field}'" in e.message
    assert "Input should" not in e.message and "pydantic" not in e.message


def test_strict_json_types_and_bounds():
    assert _refusal(schemas.SearchQuery, {"query": "q", "k": True}).code == "invalid_k"
    assert _refusal(schemas.SearchQuery, {"query": "q", "k": "6"}).code == "invalid_k"
    assert _refusal(schemas.SearchQuery, {"query": "q", "k": 51}).message == "'k' must be an integer from 1 to 50."
    assert _refusal(schemas.LectureUpdate, {"number": 10 ** 400}).code == "invalid_number"
    assert _refusal(schemas.CourseUpdate, {"assessment_mode": 1}).code == "invalid_assessment_mode"
    assert schemas.parse(schemas.QuizEdit, {"cite_t_s": 13}).cite_t_s == 13.0  # an integer is a number
    assert schemas.parse(schemas.SearchQuery, {"query": "q"}).k == 6


def test_text_is_cleaned_and_checked():
    assert schemas.parse(schemas.CourseCreate, {"title": "  Week   1 \n"}).title == "Week 1"
    assert schemas.parse(schemas.Contact, {"message": " line one\nline two "}).message == "line one\nline two"
    assert schemas.parse(schemas.Feedback, {"rating": "up", "comment": "   "}).comment is None
    for bad in ("A\u202eB", "nul\x00", "\ud800"):
        e = _refusal(schemas.CourseCreate, {"title": bad})
        assert e.code == "invalid_title" and "text-direction controls" in e.message
    assert _refusal(schemas.CourseCreate, {"title": "x" * 201}).message == "'title' must be at most 200 characters."
    assert _refusal(schemas.AskQuestion, {}).code == "invalid_question"
    # only invisible format characters (zero-width space, joiners, BOM) is an empty question, not one to count
    e = _refusal(schemas.AskQuestion, {"question": "\u200b\u200c \u200d\ufeff"})
    assert e.code == "invalid_question" and "non-empty" in e.message
    assert schemas.parse(schemas.AskQuestion, {"question": "what is cha\u200bining?"}).question == "what is cha\u200bining?"
    for blank in ("\u3164", "\u2800\u2800", "\u115f"):  # letters that show nothing
        assert _refusal(schemas.CourseCreate, {"title": blank}).code == "invalid_title"
    assert schemas.parse(schemas.CourseCreate, {"title": "\ud55c\uad6d\uc5b4 \u3164\uac15\uc758"}).title  # Korean with a filler


def test_nested_fields_are_named_by_their_path_and_keep_their_codes():
    e = _refusal(schemas.QuizAnswers, {"answers": [{"question_id": "a", "choice": 0}, {"question_id": "b", "choice": 4}]})
    assert (e.code, e.field) == ("invalid_choice", "answers[1].choice")
    e = _refusal(schemas.QuizAnswers, {"answers": [{"question_id": "a", "choice": 0, "x": 1}]})
    assert (e.code, e.field) == ("invalid_body", "answers[0].x") and "'question_id', 'choice'" in e.message
    assert _refusal(schemas.QuizAnswers, {"answers": []}).code == "invalid_answers"
    e = _refusal(schemas.AskQuestion, {"question": "why?", "conversation_id": "nope"})
    assert e.code == "invalid_conversation" and "a UUID" in e.message
