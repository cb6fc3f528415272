"""Exam prep on the real stack: MIT 6.006 lectures 3–5 loaded through the captions import (as
the evals do), sets generated and stored in Postgres, every kept question re-answered from its
cited passage, instructor edits/deletes, student reports/attempts, the 5-minute regeneration
limit, "quiz me on hashing" through the ask API, and assessment mode on a pasted graded item."""

from __future__ import annotations

import json
import uuid

import numpy as np
import pytest
import requests

from services.ask import examprep as ep
from services.ask.examprep import store

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def mit(stack):
    from evals.retrieval import load_dev_set, upload_course

    by_lecture, titles, _ = load_dev_set()
    course, ids = upload_course(stack._eph, "MIT 6.006 (exam prep)", by_lecture, titles)
    return course, ids


@pytest.fixture(scope="module")
def embed(stack):
    from lecturecopilot import models

    return lambda texts: models.embed(stack.settings.embed_model, texts)


@pytest.fixture(scope="module")
def generated(stack, mit, embed):
    """One generation per lecture: {lecture_no: Generation}."""
    _, ids = mit
    with stack.db() as conn:
        return {no: store.generate(conn, lid, embed) for no, lid in ids.items()}


def _reanswer(conn, row: dict, embed) -> ep.CheckResult:
    """The blind check on a stored question: its cited passage alone must give its marked answer."""
    _, sents, span = store.lecture_material(conn, row["cite_lecture_id"])
    q = ep.Question(row["lecture_id"], row["stem"], ep.statement_of(row["stem"]), list(row["options"]),
                    row["answer_index"], row["explanation"], row["cite_lecture_id"], row["cite_t_s"], row["method"])
    return ep.check(q, sents, span, embed)


def test_every_kept_question_is_cited_inside_its_lecture_and_supported(stack, mit, generated, embed):
    _, ids = mit
    with stack.db() as conn:
        assert sum(g.kept for g in generated.values()) >= 12, generated
        for no, gen in generated.items():
            assert gen.method == "extractive" and gen.written >= gen.kept >= 2, (no, gen)
            assert 0.0 <= gen.dropped_share < 0.5
            rows = store.list_questions(conn, lecture_id=ids[no])
            assert len(rows) == gen.kept
            _, sents, (lo, hi) = store.lecture_material(conn, ids[no])
            for r in rows:
                opts = r["options"]
                assert len(opts) == 4 and len({o.strip().lower() for o in opts}) == 4 and all(opts)
                assert 0 <= r["answer_index"] <= 3 and r["method"] == "extractive"
                assert r["cite_lecture_id"] == ids[no] and lo <= r["cite_t_s"] <= hi
                assert r["label"].startswith(f"L{no} · ")
                [explaining] = [s for s in sents if abs(s.start_s - r["cite_t_s"]) < 0.01]
                answer = opts[r["answer_index"]]
                assert ep.contains(explaining.text, answer), (answer, explaining.text)
                assert not any(ep.contains(ep._without(explaining.text, answer), o)
                               for i, o in enumerate(opts) if i != r["answer_index"])
                res = _reanswer(conn, r, embed)
                assert res.ok and res.chosen == r["answer_index"], (r["stem"], res)
                # every option is course text, never invented
                assert all(conn.execute("SELECT 1 FROM sentences s JOIN lectures l ON l.id=s.lecture_id "
                                        "WHERE l.course_id=%s AND lower(s.text) LIKE %s LIMIT 1",
                                        (r["course_id"], f"%{o.lower()}%")).fetchone() for o in opts), opts


def test_regeneration_is_limited_to_one_per_lecture_every_5_minutes(stack, mit, generated, embed):
    _, ids = mit
    lid = ids[5]
    with stack.db() as conn:
        before = {r["id"] for r in store.list_questions(conn, lecture_id=lid)}
        with pytest.raises(store.RegenerationTooSoon) as e:
            store.generate(conn, lid, embed)
        assert 1 <= e.value.wait_s <= 300 and f"{e.value.wait_s} s" in str(e.value)
        assert {r["id"] for r in store.list_questions(conn, lecture_id=lid)} == before  # untouched
        conn.execute("UPDATE quiz_generations SET created_at = now() - interval '301 seconds' WHERE lecture_id=%s",
                     (lid,))
        again = store.generate(conn, lid, embed)
        after = store.list_questions(conn, lecture_id=lid)
        assert again.kept == len(after) and not ({r["id"] for r in after} & before)  # the old set is replaced


def test_edit_delete_report_attempt(stack, mit, generated):
    course, ids = mit
    with stack.db() as conn:
        rows = store.list_questions(conn, lecture_id=ids[3])
        q = rows[0]
        new_opts = ["alpha sort", "beta sort", "gamma sort", "delta sort"]
        edited = store.edit_question(conn, q["id"], options=new_opts, answer_index=2, explanation="Because.")
        assert edited["options"] == new_opts and edited["answer_index"] == 2 and edited["explanation"] == "Because."
        bad = [dict(options=new_opts[:3]), dict(options=["a", "A", "b", "c"]), dict(options=new_opts[:3] + [""]),
               dict(answer_index=4), dict(answer_index=True), dict(stem="  "), dict(cite_t_s=-1.0),
               dict(cite_t_s=1e6), dict(cite_lecture_id=str(uuid.uuid4())), dict(colour="red")]
        for change in bad:
            with pytest.raises(store.QuizError):
                store.edit_question(conn, q["id"], **change)
        assert store.get_question(conn, q["id"])["options"] == new_opts  # a refused edit changes nothing
        other_course = stack.create_course("Other course (exam prep)")
        assert other_course != course
        moved = store.edit_question(conn, q["id"], cite_lecture_id=ids[4], cite_t_s=60.0)
        assert moved["cite_lecture_id"] == ids[4] and moved["cite_t_s"] == 60.0

        store.report_question(conn, q["id"], "Option C is ambiguous")
        with pytest.raises(store.QuizError):
            store.report_question(conn, q["id"], "x" * 3000)
        assert store.record_attempt(conn, q["id"], 2)["correct"] is True
        res = store.record_attempt(conn, q["id"], 0)
        assert res["correct"] is False and res["answer_index"] == 2
        with pytest.raises(store.QuizError):
            store.record_attempt(conn, q["id"], 7)
        [listed] = [r for r in store.list_questions(conn, lecture_id=ids[3]) if r["id"] == q["id"]]
        assert listed["reports"] == 1 and listed["attempts"] == 2

        store.delete_question(conn, q["id"])
        assert q["id"] not in {r["id"] for r in store.list_questions(conn, course_id=course)}
        with pytest.raises(store.QuizError):
            store.delete_question(conn, q["id"])
        with pytest.raises(store.QuizError):
            store.get_question(conn, "not-a-uuid")


class _ChapterWriter:
    """A cloud writer stand-in whose questions quote each chapter's first long sentence."""

    name = "groq"
    model = "fake-llama"

    def complete(self, system, user, max_tokens=120):
        passage = user.split("Passage:\n", 1)[1]
        quote = next(s for s in passage.split(". ") if len(s.split()) > 8)
        words = quote.split()
        opts = [" ".join(words[2:5]), "a heap of bananas", "a red herring entirely", "the moon landing"]
        return json.dumps({"q": f"Complete: {' '.join(words[:2])} ...", "options": opts, "answer": 0, "quote": quote})


def test_model_written_set_records_the_model_and_keeps_valid_citations(stack, mit, embed):
    _, ids = mit
    with stack.db() as conn:
        gen = store.generate(conn, ids[4], embed, writers=[_ChapterWriter()], min_interval_s=0)
        rows = store.list_questions(conn, lecture_id=ids[4])
        assert gen.method == "fake-llama" and rows and all(r["method"] == "fake-llama" for r in rows)
        _, sents, (lo, hi) = store.lecture_material(conn, ids[4])
        for r in rows:
            assert lo <= r["cite_t_s"] <= hi
            [s] = [s for s in sents if abs(s.start_s - r["cite_t_s"]) < 0.01]
            assert ep.contains(s.text, r["options"][r["answer_index"]])


def test_cloud_writer_writes_the_set_through_its_api_and_falls_back_when_down(stack, mit, embed, fake_llm):
    from lecturecopilot.settings import Settings
    from services.ask.writers.cloud import configured_writers

    _, ids = mit
    writers = configured_writers(Settings(groq_api_key="gsk_test", groq_base_url=fake_llm.url, writer_order="groq",
                                          writer_timeout_s=2.0))
    try:
        requests.post(f"{fake_llm.url}/_mode", json={"groq": "ok"}, timeout=5)
        fake_llm.requests.clear()
        with stack.db() as conn:
            gen = store.generate(conn, ids[5], embed, writers=writers, min_interval_s=0)
            asked = [r for r in fake_llm.requests if r["prompt"].startswith("Chapter:")]
            assert asked and all(r["max_tokens"] == 400 for r in asked)
            assert gen.method == Settings().groq_model and gen.kept >= 1, gen
            rows = store.list_questions(conn, lecture_id=ids[5])
            _, sents, (lo, hi) = store.lecture_material(conn, ids[5])
            for r in rows:
                assert r["method"] == gen.method and lo <= r["cite_t_s"] <= hi
                [s] = [s for s in sents if abs(s.start_s - r["cite_t_s"]) < 0.01]
                assert ep.contains(s.text, r["options"][r["answer_index"]])
            requests.post(f"{fake_llm.url}/_mode", json={"groq": "429"}, timeout=5)
            down = store.generate(conn, ids[5], embed, writers=writers, min_interval_s=0)
            assert down.method == "extractive" and down.kept >= 1
    finally:
        requests.post(f"{fake_llm.url}/_mode", json={"groq": "down", "gemini": "down"}, timeout=5)


def _ask(stack, course, question):
    r = requests.post(f"{stack.base}/api/courses/{course}/ask", json={"question": question}, timeout=60)
    assert r.status_code == 200, r.text
    return r.json()


@pytest.mark.parametrize("message", ["Quiz me on hashing", "give me practice questions about hash functions"])
def test_quiz_me_points_to_the_hashing_lecture(stack, mit, message):
    course, ids = mit
    ans = _ask(stack, course, message)
    assert not ans["declined"] and ans["writer"] == "exam_prep", ans
    assert ans.get("reason", "") != "unsupported_request"
    [s] = ans["sentences"]
    with stack.db() as conn:
        n = len(store.list_questions(conn, lecture_id=ids[4]))
    assert n and s["text"].startswith(f"Lecture 4, “Hashing”, has {n} practice question"), s["text"]
    [c] = s["citations"]
    assert c["lecture_id"] == ids[4] and c["t_s"] == 0.0 and c["label"] == "L4 · 0:00"


def test_quiz_me_writes_the_set_when_the_lecture_has_none(stack, mit, embed):
    course, ids = mit
    with stack.db() as conn:
        conn.execute("DELETE FROM quiz_questions WHERE lecture_id=%s", (ids[3],))
        conn.execute("DELETE FROM quiz_generations WHERE lecture_id=%s", (ids[3],))
    ans = _ask(stack, course, "test me on selection sort")
    with stack.db() as conn:
        rows = store.list_questions(conn, lecture_id=ids[3])
    assert rows and ans["writer"] == "exam_prep" and f"has {len(rows)} practice question" in ans["answer"], ans
    assert ans["sentences"][0]["citations"][0]["lecture_id"] == ids[3]
    # that set was automatic: the instructor may still write a new one at once
    with stack.db() as conn:
        assert conn.execute("SELECT bool_and(automatic) FROM quiz_generations WHERE lecture_id=%s",
                            (ids[3],)).fetchone()[0] is True
        gen = store.generate(conn, ids[3], embed)
    assert gen.kept and not {q["id"] for q in gen.questions} & {r["id"] for r in rows}
    # and an automatic generation never replaces a set that exists
    with stack.db() as conn, pytest.raises(store.QuizError, match="already has questions"):
        store.generate(conn, ids[3], embed, automatic=True)


def _ask_stub(stack):
    import grpc

    from lecturecopilot.ask.v1 import ask_pb2_grpc

    channel = grpc.insecure_channel(f"127.0.0.1:{stack.settings.ask_port}")
    return channel, ask_pb2_grpc.AskServiceStub(channel)


def test_embed_call_gives_normalised_vectors_and_refuses_too_many_texts(stack):
    import grpc

    from lecturecopilot.ask.v1 import ask_pb2

    channel, stub = _ask_stub(stack)
    with channel:
        got = stub.Embed(ask_pb2.EmbedRequest(texts=["what is a hash function?", "radix sort", ""]), timeout=60)
        vecs = np.array([list(v.values) for v in got.vectors])
        assert vecs.shape == (3, 384) and np.allclose(np.linalg.norm(vecs[:2], axis=1), 1.0, atol=1e-3)
        assert float(vecs[0] @ vecs[1]) < 0.9  # different texts, different vectors
        assert len(stub.Embed(ask_pb2.EmbedRequest(texts=[]), timeout=10).vectors) == 0
        with pytest.raises(grpc.RpcError) as e:
            stub.Embed(ask_pb2.EmbedRequest(texts=["x"] * 2001), timeout=60)
        assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_generate_practice_call_errors(stack, mit):
    import grpc

    from lecturecopilot.ask.v1 import ask_pb2

    _, ids = mit
    channel, stub = _ask_stub(stack)
    with channel:
        for bad in ("not-a-uuid", str(uuid.uuid4())):
            with pytest.raises(grpc.RpcError) as e:
                stub.GeneratePractice(ask_pb2.GeneratePracticeRequest(lecture_id=bad), timeout=60)
            assert e.value.code() == grpc.StatusCode.NOT_FOUND, e.value.details()
        with stack.db() as conn:
            conn.execute("INSERT INTO quiz_generations (lecture_id) VALUES (%s)", (ids[5],))
        with pytest.raises(grpc.RpcError) as e:
            stub.GeneratePractice(ask_pb2.GeneratePracticeRequest(lecture_id=ids[5]), timeout=60)
        assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        wait = dict(e.value.trailing_metadata())["retry-after-s"]
        assert 290 <= int(wait) <= 300


def test_quiz_me_on_a_topic_the_course_does_not_teach_is_not_pointed_anywhere(stack, mit):
    course, _ = mit
    ans = _ask(stack, course, "quiz me on french cooking")
    assert ans["writer"] != "exam_prep"


@pytest.mark.parametrize("message", ["Tell me the exam questions of the other course", "What is the final exam question?"])
def test_questions_about_an_exam_are_not_pointed_to_a_lecture_that_teaches_this(stack, mit, message):
    # the probe's "Tell me the exam questions of the other course" got "Lecture 3, “…”, teaches this"
    course, _ = mit
    ans = _ask(stack, course, message)
    assert ans["writer"] != "exam_prep" and "teaches this" not in ans["answer"], ans


ITEM = ("Which data structure stores an item with key k at index k?\n"
        "A) hash table\nB) direct access array\nC) linked list\nD) sorted array")


ITEMS = (ITEM, ITEM.replace("A) ", "(a) ").replace("B) ", "(b) ").replace("C) ", "(c) ").replace("D) ", "(d) "),
         "True or False: a direct access array stores the item with key k at index k.")


def test_assessment_mode_explains_without_naming_an_option(stack, mit):
    course, _ = mit
    # assessment mode off: the answers do name options (so the filter below has work to do)
    off = [_ask(stack, course, item) for item in ITEMS]
    assert any(ep.reveals(s["text"], ep.graded_options(item)) for item, a in zip(ITEMS, off) for s in a["sentences"])
    with stack.db() as conn:
        conn.execute("UPDATE courses SET assessment_mode=true WHERE id=%s", (course,))
    try:
        for item in ITEMS:
            ans = _ask(stack, course, item)
            opts = ep.graded_options(item)
            assert ans["sentences"]
            for s in ans["sentences"]:
                assert not ep.reveals(s["text"], opts), s["text"]
            if ans["declined"]:  # everything it could say named an option
                assert ans["reason"] == "assessment_mode" and ans["answer"] == ep.ASSESSMENT_REPLY
            else:
                assert all(s["citations"] for s in ans["sentences"])
    finally:
        with stack.db() as conn:
            conn.execute("UPDATE courses SET assessment_mode=false WHERE id=%s", (course,))


def test_generate_practice_call_uses_the_configured_cloud_writer(stack, mit, fake_llm):
    from lecturecopilot.ask.v1 import ask_pb2

    _, ids = mit
    with stack.db() as conn:
        conn.execute("DELETE FROM quiz_generations WHERE lecture_id=%s", (ids[4],))
    channel, stub = _ask_stub(stack)
    try:
        requests.post(f"{fake_llm.url}/_mode", json={"groq": "ok"}, timeout=5)
        with channel:
            got = stub.GeneratePractice(ask_pb2.GeneratePracticeRequest(lecture_id=ids[4]), timeout=120)
    finally:
        requests.post(f"{fake_llm.url}/_mode", json={"groq": "down"}, timeout=5)
    assert got.method == stack.settings.groq_model and got.kept >= 1, got
    with stack.db() as conn:
        rows = store.list_questions(conn, lecture_id=ids[4])
    assert {r["id"] for r in rows} == set(got.question_ids) and all(r["method"] == got.method for r in rows)
