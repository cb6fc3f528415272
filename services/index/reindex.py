"""Re-indexing ready lectures in place: after an upgrade that changes how passages are cut or
embedded, the lectures indexed before it are rebuilt from their stored transcript and slides, with
no transcription or slide reading again and no change a student sees while it runs.

Each lecture stays ``ready`` throughout and keeps answering from its old passages until its new
ones are saved; its ``indexed_at`` moves in the same transaction, and every ask process reloads it at
its next query's sync. With ``QDRANT_URL`` the lecture's points are replaced between the save and
the move of ``indexed_at`` (a failure there leaves ask on the old passages; running again redoes it). No
"lecture ready" mail is sent. A lecture deleted, retried or reprocessed meanwhile is skipped.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Callable

from psycopg_pool import ConnectionPool

from lecturecopilot.worker import PermanentError

from . import points, store
from .handlers import build_index

log = logging.getLogger(__name__)
GONE = "deleted, retried or reprocessed while it was re-indexed"


@dataclass(frozen=True)
class Reindexed:
    """One lecture's outcome: ``passages_before`` / ``passages_after`` (segment counts; after is
    None when skipped), ``seconds`` spent, and ``skipped`` (why nothing was written, or "")."""

    lecture_id: str
    course_id: str
    number: int
    title: str
    passages_before: int
    passages_after: int | None
    seconds: float
    skipped: str = ""


def reindex_lectures(pool: ConnectionPool, model: str, writer: points.PointWriter | None = None, *,
                     course_id: str | None = None, lecture_id: str | None = None,
                     report: Callable[[int, int, Reindexed], None] = lambda i, n, r: None) -> list[Reindexed]:
    """Rebuilds the passages, sentences, sub-chunks and chapters of every ready lecture (of
    ``course_id`` and/or only ``lecture_id``; all when both are None) with the embedding ``model``,
    oldest first, and with ``writer`` (``QDRANT_URL``) replaces their search points.
    ``report(i, n, outcome)`` is called after each lecture (i from 1 of n).

    Returns one :class:`Reindexed` per lecture. Raises qdrant-client's errors when the Qdrant server
    refuses points (the lectures before it are done; running again redoes the rest) and psycopg's
    when the database is unreachable.
    """
    targets = store.reindex_targets(pool, course_id, lecture_id)
    done: list[Reindexed] = []
    for i, t in enumerate(targets, 1):
        t0 = time.monotonic()
        skipped, after = "", None
        try:
            ix = build_index(pool, model, t["id"])
        except PermanentError as e:
            skipped = str(e) if store.reindex_targets(pool, lecture_id=t["id"]) else GONE
        else:
            if store.save_reindex(pool, t["id"], t["generation"], ix, touch=writer is None):
                after = len(ix.segments)
                if writer is not None:  # the points first, then ask is told to reload
                    points.write_points(pool, writer, t["id"])
                    store.touch_indexed(pool, t["id"])
            else:
                skipped = GONE
        outcome = Reindexed(t["id"], t["course_id"], t["number"], t["title"], t["passages"], after,
                            time.monotonic() - t0, skipped)
        log.info("re-indexed %s: %d → %s passages%s", t["id"], t["passages"], after,
                 f" (skipped: {skipped})" if skipped else "")
        done.append(outcome)
        report(i, len(targets), outcome)
    return done
