"""The gateway's SQL (Postgres through ``lecturecopilot.db``'s pool of dict rows)."""

from __future__ import annotations

from psycopg_pool import ConnectionPool


def caption_rows(pool: ConnectionPool, lecture_id: str) -> tuple[list[dict], list[dict]]:
    """A lecture's sentences ``{"start_s", "end_s", "text", "kind"}`` and transcript words
    ``{"start_s", "end_s", "word"}``, each in their stored order (times in seconds); empty lists
    for an unknown lecture."""
    with pool.connection() as conn:
        sentences = conn.execute("SELECT start_s, end_s, text, kind FROM sentences WHERE lecture_id=%s ORDER BY idx",
                                 (lecture_id,)).fetchall()
        words = conn.execute("SELECT start_s, end_s, word FROM transcript_words WHERE lecture_id=%s ORDER BY idx",
                             (lecture_id,)).fetchall()
    return sentences, words
