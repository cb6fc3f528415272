"""The index service's operator commands read no table of another service: a course title is looked
up by the caller's ``titled`` (the operator CLI hands in the gateway's), and without one only an id
is taken."""

import pytest

from services.index import commands


def test_a_course_title_needs_the_callers_lookup(capsys):
    with pytest.raises(SystemExit) as e:
        commands._course_id(None, "Sorting", None)  # index's own `python -m services.index reindex`
    assert e.value.code == 2 and "a course's id" in capsys.readouterr().err
    cid = "3f2b0c1e-8a4d-4c55-9d7e-0e2a6b1c9f00"
    assert commands._course_id(None, cid, None) == cid  # an id needs no lookup


def test_the_lookup_decides_between_none_one_and_several(capsys):
    asked = []

    def titled(pool, title):
        asked.append((pool, title))
        return {"One": ["a"], "Two": ["b", "c"]}.get(title, [])

    assert commands._course_id("pool", "One", titled) == "a"
    for title, said in (("Two", "2 courses are titled 'Two'"), ("None", "no course is titled 'None'")):
        with pytest.raises(SystemExit):
            commands._course_id("pool", title, titled)
        assert said in capsys.readouterr().err
    assert asked == [("pool", "One"), ("pool", "Two"), ("pool", "None")]
    with pytest.raises(SystemExit):
        commands._course_id("pool", "x" * 201, titled)  # over a title's 200 characters: not asked
    assert len(asked) == 3
