"""All of the transcribe service's SQL: the transcript words and the slides it writes (its own
tables), and what it reads and marks on the lecture's row (ingest's ``lectures``: the media path,
the course, the times the words and slides were stored, the browser copy's path; see
``tests/unit/test_table_owners.py`` for why each crossing is still there). Times in seconds."""

from __future__ import annotations

from typing import Sequence

from psycopg_pool import ConnectionPool

from lecturecopilot.captions import Word


def save_words(pool: ConnectionPool, lecture_id: str, words: Sequence[Word]) -> None:
    """Replaces lecture ``lecture_id``'s transcript with ``words`` (in order) and stamps it transcribed."""
    with pool.connection() as conn, conn.transaction():
        conn.execute("DELETE FROM transcript_words WHERE lecture_id=%s", (lecture_id,))
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO transcript_words (lecture_id, idx, start_s, end_s, word) VALUES (%s,%s,%s,%s,%s)",
                [(lecture_id, i, w.start_s, w.end_s, w.word) for i, w in enumerate(words)],
            )
        conn.execute("UPDATE lectures SET transcribed_at=now() WHERE id=%s", (lecture_id,))


def save_slides(pool: ConnectionPool, lecture_id: str, slides: Sequence[tuple[float, float, Sequence[str]]]) -> None:
    """Replaces lecture ``lecture_id``'s slides with ``slides`` ((start_s, end_s, lines), in time order)
    and stamps them read."""
    with pool.connection() as conn, conn.transaction():
        conn.execute("DELETE FROM slides WHERE lecture_id=%s", (lecture_id,))
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO slides (lecture_id, idx, start_s, end_s, text) VALUES (%s,%s,%s,%s,%s)",
                            [(lecture_id, i, start_s, end_s, "\n".join(lines))
                             for i, (start_s, end_s, lines) in enumerate(slides)])
        conn.execute("UPDATE lectures SET slides_read_at=now() WHERE id=%s", (lecture_id,))


def other_lectures_text(pool: ConnectionPool, lecture_id: str) -> list[str]:
    """The slide texts and titles of the other lectures of lecture ``lecture_id``'s course (none when the
    lecture is gone)."""
    with pool.connection() as conn:
        course = conn.execute("SELECT course_id FROM lectures WHERE id=%s", (lecture_id,)).fetchone()
        if course is None:
            return []
        rows = conn.execute(
            "SELECT s.text FROM slides s JOIN lectures l ON l.id=s.lecture_id WHERE l.course_id=%s AND l.id<>%s "
            "UNION ALL SELECT title FROM lectures WHERE course_id=%s AND id<>%s",
            (course["course_id"], lecture_id, course["course_id"], lecture_id)).fetchall()
    return [r["text"] for r in rows]


def lecture_exists(pool: ConnectionPool, lecture_id: str) -> bool:
    """Whether lecture ``lecture_id`` still has its row."""
    with pool.connection() as conn:
        return conn.execute("SELECT 1 FROM lectures WHERE id=%s", (lecture_id,)).fetchone() is not None


def name_web_copy(pool: ConnectionPool, lecture_id: str, column: str) -> bool:
    """Records ``column`` (the media store's column form of a URI) as the lecture's browser copy; False
    when the lecture is gone."""
    with pool.connection() as conn:
        return bool(conn.execute("UPDATE lectures SET web_path=%s WHERE id=%s", (column, lecture_id)).rowcount)


def media_of(pool: ConnectionPool, lecture_id: str) -> tuple[str | None, float]:
    """``(media_path column or None, duration_s or 0.0)`` of lecture ``lecture_id`` ((None, 0.0) when gone)."""
    with pool.connection() as conn:
        row = conn.execute("SELECT media_path, duration_s FROM lectures WHERE id=%s", (lecture_id,)).fetchone()
    return (row["media_path"] or None, row["duration_s"] or 0.0) if row else (None, 0.0)
