"""Each table has one owner (issue 32, item 6).

:data:`OWNERS` names, for every table of ``lecturecopilot/schema.sql``, the one unit that owns it:
a service (``services/<name>``: every module under it) or, for shared infrastructure, one module of
``lecturecopilot/``. A unit reads and writes only its own tables; what it needs of another's arrives
in an event or a gRPC call, or is a read model it keeps itself.

The SQL of every module under ``services/``, ``lecturecopilot/`` and ``lecturecopilot_ops/`` is read
with ``ast`` and parsed by sqlglot (``tests/sql_reading.py``). The tests fail on

- a table of schema.sql missing from the ledger, or a ledger table schema.sql does not make;
- SQL naming a table that is in neither (Postgres's own catalogs, ``pg_*``, aside), or SQL that does
  not parse;
- SQL of one unit touching another unit's table, unless the pair is in :data:`CROSS_READS` (a read)
  or :data:`CROSS_WRITES` (a write: INSERT/UPDATE/DELETE target or DDL), each entry saying why;
- an entry of those two that no longer happens (they only shrink).

Owners, and why (the unit that makes the rows and decides what they hold):

- ``courses``: the gateway (``POST /v1/courses`` makes them; title, visibility, assessment mode and
  members are edited there; ``services/gateway/access.py`` decides who sees one).
- ``lectures`` and ``uploads``: ingest (an upload, resumable or not, makes the lecture row:
  ``register_lecture``; a requeue and the deletion of lectures, with their media and uploads, are ingest's; the course row
  goes after, the gateway's).
- ``transcript_words``, ``slides``: transcribe.  ``segments``, ``subchunks``, ``sentences``,
  ``chapters``: index.  ``answers``, ``quiz_*``: ask.  Accounts (``users``, ``login_tokens``,
  ``web_sessions``, ``api_tokens``, ``role_requests``, ``course_members``), ``rate_counters``,
  ``feedback`` and ``notes``: the gateway.
- ``processed_events``: ``lecturecopilot/worker.py``, the shared bus-consumer wrapper every pipeline
  service runs: its rows are keyed by consumer (``consumer``, ``msg_id``), so each consumer reads and
  writes only its own rows, through that one module.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import sqlglot
from sqlglot import exp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from sql_reading import HOLE, read_module  # noqa: E402  (tests/sql_reading.py)

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("services", "lecturecopilot", "lecturecopilot_ops")
GATEWAY, INGEST, TRANSCRIBE, INDEX, ASK = (f"services/{s}" for s in ("gateway", "ingest", "transcribe", "index", "ask"))

OWNERS: dict[str, str] = {
    "courses": GATEWAY, "course_members": GATEWAY, "users": GATEWAY, "login_tokens": GATEWAY,
    "web_sessions": GATEWAY, "api_tokens": GATEWAY, "role_requests": GATEWAY, "rate_counters": GATEWAY,
    "feedback": GATEWAY, "notes": GATEWAY,
    "lectures": INGEST, "uploads": INGEST,
    "transcript_words": TRANSCRIBE, "slides": TRANSCRIBE,
    "segments": INDEX, "subchunks": INDEX, "sentences": INDEX, "chapters": INDEX,
    "answers": ASK, "quiz_questions": ASK, "quiz_reports": ASK, "quiz_attempts": ASK, "quiz_generations": ASK,
    "processed_events": "lecturecopilot/worker.py",
}

_COURSE_READ_MODEL = ("a read model of course ids, titles and assessment mode kept from course events would "
                      "replace it (there are no course events yet)")
_LECTURE_READ_MODEL = "a read model fed by the lecture events (lecture.uploaded / ready / deleted) would replace it"

#: (module, table, why): a read of another unit's table that is still there. Only shrinks.
CROSS_READS: frozenset[tuple[str, str, str]] = frozenset({
    ("services/ask/examprep/store.py", "lectures", "course, number and title of a quiz's lecture and of the "
     f"lecture a question cites; {_LECTURE_READ_MODEL}"),
    ("services/ask/examprep/store.py", "sentences", "the sentences a quiz is written from and a course's "
     "vocabulary; index would send them (an event, or ask's own copy as search_index keeps)"),
    ("services/ask/examprep/store.py", "chapters", "a lecture's chapter titles for quiz topics"),
    ("services/ask/search_index.py", "lectures", f"which lectures of a course are ready and indexed; {_LECTURE_READ_MODEL}"),
    ("services/ask/search_index.py", "segments", "loads index's passages into ask's in-memory search index"),
    ("services/ask/search_index.py", "sentences", "loads index's sentences into ask's in-memory search index"),
    ("services/ask/search_index.py", "subchunks", "loads index's subchunks into ask's in-memory search index"),
    ("services/ask/search_index.py", "chapters", "loads chapter bullet embeddings into ask's search index"),
    ("services/ask/search_index.py", "slides", "each slide's time on screen, the window of a question about "
     "a moment (issue 33); index would keep the windows beside its slide sentences, which are dropped "
     "when the slide is read aloud, so they cannot stand in for the slides today"),
    ("services/ask/store.py", "courses", f"course exists / assessment mode; {_COURSE_READ_MODEL}"),
    ("services/ask/store.py", "lectures", f"a course's lectures (number, title, duration); {_LECTURE_READ_MODEL}"),
    ("services/ask/store.py", "chapters", "a course's chapters for the outline answers"),
    ("services/gateway/notes_store.py", "lectures", f"a note's lecture number and title; {_LECTURE_READ_MODEL}"),
    ("services/gateway/store.py", "lectures", f"the lecture pages and access checks; {_LECTURE_READ_MODEL}"),
    ("services/gateway/store.py", "answers", "the course insights (insight_rows): answers joined "
     "with the gateway's feedback and lectures; an ask RPC of the aggregates, with feedback moved to ask "
     "(a RateAnswer RPC), would replace it"),
    ("services/gateway/store.py", "chapters", "GET /v1/lectures/{id}: the lecture's chapters"),
    ("services/gateway/store.py", "sentences", "the lecture's transcript page and caption export"),
    ("services/gateway/store.py", "transcript_words", "the caption export's word timings"),
    ("services/index/notify.py", "courses", f"the course title in the 'lecture ready' notice; {_COURSE_READ_MODEL}"),
    ("services/index/notify.py", "lectures", f"the lecture of the 'lecture ready' notice; {_LECTURE_READ_MODEL}"),
    ("services/index/store.py", "lectures", f"a lecture's course, number and state; {_LECTURE_READ_MODEL}"),
    ("services/index/store.py", "transcript_words", "the words to index; transcribe's event would carry them "
     "(or a blob reference)"),
    ("services/index/store.py", "slides", "the slide text to index; as transcript_words"),
    ("services/transcribe/store.py", "lectures", f"media path, course and duration of the lecture; {_LECTURE_READ_MODEL}"),
    ("lecturecopilot/worker.py", "lectures", "a stage's lecture's course id (every pipeline service)"),
})

#: (module, table, why): a write (INSERT/UPDATE/DELETE target, DDL) of another unit's table. Only shrinks.
CROSS_WRITES: frozenset[tuple[str, str, str]] = frozenset({
    ("services/index/store.py", "lectures", "indexed_at and the 'ready' status; a 'lecture.indexed' event "
     "consumed by ingest would replace it"),
    ("services/transcribe/store.py", "lectures", "transcribed_at, slides_read_at, web_path; as index's"),
    ("lecturecopilot/worker.py", "lectures", "each pipeline stage's progress (stage, status, progress, error); "
     "a progress event consumed by ingest would replace it"),
})


def schema_tables() -> set[str]:
    """The tables ``lecturecopilot/schema.sql`` creates (its CREATE TABLE statements, parsed by sqlglot)."""
    trees = sqlglot.parse((ROOT / "lecturecopilot" / "schema.sql").read_text(encoding="utf-8"), read="postgres")
    return {t.this.find(exp.Table).name for t in trees
            if isinstance(t, exp.Create) and str(t.args.get("kind", "")).upper() == "TABLE"}


def unit_of(module: str) -> str:
    """The unit a module belongs to: ``services/<name>`` for a service's module, else the module."""
    parts = module.split("/")
    return "/".join(parts[:2]) if parts[0] == "services" else module


def modules() -> list[tuple[str, str]]:
    """``(module path relative to the root, source)`` of every module checked (generated ``*_pb2``
    code aside)."""
    return [(p.relative_to(ROOT).as_posix(), p.read_text(encoding="utf-8"))
            for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py")) if "_pb2" not in p.name]


def findings(sources: list[tuple[str, str]], owners: dict[str, str] = OWNERS,
             reads: frozenset = CROSS_READS, writes: frozenset = CROSS_WRITES) -> dict[str, list[str]]:
    """What is wrong with ``sources`` against the ledger: ``unknown`` tables, ``unparsed`` SQL,
    ``crossings`` not allowed, ``stale`` entries; each a list of lines ``"module:line ..."``."""
    out: dict[str, list[str]] = {"unknown": [], "unparsed": [], "crossings": [], "stale": []}
    seen: set[tuple[str, str, str]] = set()
    allowed = {"read": {(m, t) for m, t, _ in reads}, "write": {(m, t) for m, t, _ in writes}}
    for module, source in sources:
        reading = read_module(source, module)
        out["unparsed"] += [f"{module}:{line} {text[:120]!r}" for line, text in reading.unparsed]
        for (table, kind), line in sorted(reading.uses.items()):
            if table.startswith(("pg_", "pg_catalog.", "information_schema.")):
                continue  # Postgres's own catalogs
            if table not in owners:
                why = "a table name not known from the source" if HOLE in table else "not in OWNERS"
                out["unknown"].append(f"{module}:{line} {kind}s {table!r}: {why}")
                continue
            seen.add((module, table, kind))
            if owners[table] != unit_of(module) and (module, table) not in allowed[kind]:
                out["crossings"].append(f"{module}:{line} {kind}s {table!r}, owned by {owners[table]}")
    for kind, entries in allowed.items():
        out["stale"] += [f"{m} {kind}s {t}: no longer happens" for m, t in sorted(entries) if (m, t, kind) not in seen]
    return out


def test_the_ledger_names_every_table_of_the_schema():
    tables = schema_tables()
    assert len(tables) > 20  # the parse found the schema's tables
    assert sorted(tables - OWNERS.keys()) == [], "tables of schema.sql with no owner in OWNERS"
    assert sorted(OWNERS.keys() - tables) == [], "OWNERS names tables schema.sql does not make"


def test_the_cross_entries_name_ledger_tables_and_cross_units():
    for module, table, why in CROSS_READS | CROSS_WRITES:
        assert table in OWNERS and OWNERS[table] != unit_of(module) and why, (module, table)
        assert (ROOT / module).is_file(), module


def test_each_unit_touches_only_its_own_tables():
    found = findings(modules())
    assert found["unparsed"] == [], "SQL sqlglot cannot parse: the check would not see its tables"
    assert found["unknown"] == [], "SQL naming tables outside OWNERS"
    assert found["crossings"] == [], "SQL touching another unit's table (CROSS_READS / CROSS_WRITES list why)"
    assert found["stale"] == [], "entries of CROSS_READS / CROSS_WRITES that no longer happen: remove them"


def test_the_parser_sees_every_table_a_word_scan_sees():
    """A safety net under the parser: every (module, table) that a plain scan of the modules' strings
    finds after FROM / JOIN / INTO / UPDATE / TABLE (any case) is one the parsed SQL touches too, so
    SQL the reader does not take as SQL (say, lower case handed to a helper) cannot hide a crossing."""
    words = re.compile(r"\b(?:from|join|into|update|table)\s+(" + "|".join(sorted(OWNERS)) + r")\b", re.I)
    missed = []
    for module, source in modules():
        seen = {table for table, _ in read_module(source, module).uses}
        tree = ast.parse(source)
        prose = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose:
                missed += [f"{module}:{node.lineno} {m}" for m in words.findall(node.value) if m not in seen]
    assert missed == []


def _docstrings(tree: ast.AST) -> set[int]:
    return {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and n.body
            and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}


def test_the_check_reads_every_way_sql_is_written():
    source = '''
COLUMNS = "n.id, l.title"
_FROM = "FROM notes n JOIN lectures l ON l.id = n.lecture_id"
_INSERT = "INSERT INTO segments (id) SELECT {number} {source}"
def f(conn, x):
    conn.execute(f"SELECT {COLUMNS} {_FROM} WHERE n.id=%s", (x,))
    for table in ("sentences", "chapters"):
        conn.execute(f"DELETE FROM {table} WHERE lecture_id=%s", (x,))
    conn.execute(_INSERT.format(number="1", source="FROM uploads"))
    conn.execute(sql.SQL("SELECT count(*) FROM {} WHERE x").format(sql.Identifier("slides")))
    conn.execute("WITH r AS (SELECT id FROM answers) UPDATE courses SET title='' FROM r WHERE r.id=courses.id")
    helper(conn, "SELECT 1 FROM quiz_reports")
    conn.execute(f"SELECT 1 FROM {unknowable(x)}")
'''
    uses = read_module(source).uses
    assert set(uses) == {("notes", "read"), ("lectures", "read"), ("sentences", "write"), ("chapters", "write"),
                         ("segments", "write"), ("uploads", "read"), ("slides", "read"), ("answers", "read"),
                         ("courses", "write"), ("quiz_reports", "read"), (HOLE, "read")}


def test_the_check_fails_on_an_injected_violation():
    clean = ("services/gateway/x.py", 'def f(conn):\n    conn.execute("SELECT 1 FROM users WHERE email=%s", ("a",))\n')
    assert findings([clean], reads=frozenset(), writes=frozenset()) == {
        "unknown": [], "unparsed": [], "crossings": [], "stale": []}
    bad = ("services/gateway/x.py", 'Q = "SELECT a.id FROM answers a JOIN users u ON u.email = a.asker"\n'
           'def f(conn):\n    conn.execute("UPDATE slides SET text=%s", ("",))\n    conn.execute("SELECT 1 FROM nope")\n'
           '    conn.execute("SELECT FROM WHERE")\n')
    found = findings([bad], reads=frozenset({("services/gateway/x.py", "chapters", "gone")}), writes=frozenset())
    assert found["crossings"] == ["services/gateway/x.py:1 reads 'answers', owned by services/ask",
                                  "services/gateway/x.py:3 writes 'slides', owned by services/transcribe"]
    assert found["unknown"] == ["services/gateway/x.py:4 reads 'nope': not in OWNERS"]
    assert found["unparsed"] == ["services/gateway/x.py:5 'SELECT FROM WHERE'"]
    assert found["stale"] == ["services/gateway/x.py reads chapters: no longer happens"]
    allowed = frozenset({("services/gateway/x.py", "answers", "why")})
    assert found["crossings"][1:] == findings([bad], reads=allowed, writes=frozenset())["crossings"]
