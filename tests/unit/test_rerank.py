"""The rerank step's pure parts (services/ask/rerank.py): the strict reply parser, how the kept passages
are put together, the prompt, the settings' bounds, and the keyless case (no reranker, no client). Its
behaviour against a model's HTTP API is tested in tests/integration/test_rerank.py."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from lecturecopilot.settings import Settings
from services.ask import rerank
from services.ask.retrieve import Passage
from services.ask.search_index import Hit

IDS = [f"P{i}" for i in range(1, 13)]


@pytest.mark.parametrize("reply,expected", [
    ('{"ids": ["P3", "P1", "P7"]}', ["P3", "P1", "P7"]),
    ('["P2", "P12"]', ["P2", "P12"]),
    ('```json\n{"ids": ["P5"]}\n```', ["P5"]),
    ('  {"ids": [" p4 ", "P4", "P9"]}  ', ["P4", "P9"]),  # trimmed, case-insensitive, repeats dropped
    ('{"ids": ["P1", "P2", "P3", "P4", "P5", "P6", "P7", "P8"]}', ["P1", "P2", "P3", "P4", "P5", "P6"]),  # 6 at most
    ('{"ids": ["P13", "9b2f0c1e-course-B:17", "S1", "P6"]}', ["P6"]),  # another course's, made up: ignored
])
def test_a_reply_names_the_listed_ids_in_its_order(reply, expected):
    assert rerank.parse_reply(reply, IDS) == expected


@pytest.mark.parametrize("reply", [
    "", "P3, P1, P7", "I think the third passage is the best one.", '{"ids": "P3"}', '{"ids": [3, 1]}',
    '{"order": ["P3"]}', '{"ids": ["P3", 1]}', '{"ids": ["P13", "P0", "course-2 passage 4"]}', '{"ids": []}',
    'Sure! {"ids": ["P3"]}', '{"ids": ["P3"]} and also P4', "null", "42",
])
def test_a_reply_that_does_not_parse_or_names_no_listed_id_is_none(reply):
    assert rerank.parse_reply(reply, IDS) is None


def _passages(n: int) -> list[Passage]:
    return [Passage(Hit(f"pt{i}", "lec", 1, i, 10.0 * i, 10.0 * i + 9, f"text {i}", 1.0 / (i + 1)), 1.0 / (i + 1))
            for i in range(n)]


def test_the_kept_passages_are_the_models_then_search_order_up_to_six():
    ps = _passages(12)
    assert [p.hit.point_id for p in rerank.kept(ps, [7, 2])] == ["pt7", "pt2", "pt0", "pt1", "pt3", "pt4"]
    assert [p.hit.point_id for p in rerank.kept(ps, [11, 10, 9, 8, 7, 6])] == [f"pt{i}" for i in (11, 10, 9, 8, 7, 6)]
    assert rerank.kept(ps, None) == ps[:6]
    assert rerank.kept(ps[:3], None) == ps[:3]


def test_the_prompt_lists_opaque_ids_and_no_lecture_ids_or_times():
    ps = _passages(3)
    prompt = rerank.rerank_prompt("How does merge sort merge?", ps)
    assert prompt.startswith("Passages:\n[P1]\ntext 0") and "[P3]\ntext 2" in prompt
    assert prompt.endswith("Question: How does merge sort merge?")
    assert "lec" not in prompt and "pt0" not in prompt
    long = [Passage(Hit("x", "lec", 1, 0, 0, 90, "word " * 1000, 1.0), 1.0)]
    assert len(rerank.rerank_prompt("q", long)) < rerank.PASSAGE_CHARS + 100


def test_without_a_cloud_model_no_reranker_is_built_and_search_gives_six():
    settings = Settings(_env_file=None, groq_api_key=None, gemini_api_key=None, openai_base_url=None)
    assert rerank.configured_reranker(settings) is None
    asked: list[int] = []

    def search(k: int) -> list[Passage]:
        asked.append(k)
        return _passages(k)

    assert rerank.reranked(None, "q", search) == _passages(6) and asked == [6]


def test_the_rerank_settings_are_bounded_and_default_to_the_writers_model(monkeypatch):
    for name in ("LC_RERANK_TIMEOUT_S", "LC_RERANK_MODEL"):  # the test stack's (tests/conftest.py) are not defaults
        monkeypatch.delenv(name, raising=False)
    s = Settings(_env_file=None, groq_api_key="k", groq_base_url="http://127.0.0.1:9", writer_order="groq")
    assert s.rerank_timeout_s == 3.0 and s.rerank_model is None
    r = rerank.configured_reranker(s)
    assert r is not None and r.model == s.groq_model and r.timeout_s == 3.0
    r.close()
    r = rerank.configured_reranker(Settings(_env_file=None, groq_api_key="k", rerank_model="llama-3.1-8b-instant",
                                            rerank_timeout_s=1.5))
    assert r.model == "llama-3.1-8b-instant" and r.writer.client.timeout == 1.5 and r.writer.client.max_retries == 0
    r.close()
    for bad in (0, -1, 30.5):
        with pytest.raises(ValidationError):
            Settings(_env_file=None, rerank_timeout_s=bad)
