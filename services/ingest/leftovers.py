"""What a crash or a race left in the media store, found and removed: ingest's sweeper runs
:func:`sweep` at start and every :func:`.resumable.sweep_interval_s`, after
:func:`.resumable.sweep` (which finishes, expires and removes uploads by their rows).

Each kind of leftover is removed once it is older than ``LC_UPLOAD_IDLE_S`` (the *grace*), and
never while it may still be in use: a lecture this process is storing and registering
(:func:`.core.ingesting`), the lecture of an open resumable upload (:func:`.resumable.lecture_id_of`),
a resumable upload whose lock a request or another process holds.

- **Unfinished multipart uploads** (object storage). A process killed while it sent a file up (the
  source of an upload, a resumable chunk over 8 MiB, a worker's web copy) leaves its parts in the
  bucket, unlisted and billed, for good. Those under ``<prefix>/uploads/`` and
  ``<prefix>/lectures/`` begun more than the grace ago are aborted.
- **Spool files** in the local media folder: a chunk spooled before it goes up
  (``uploads/<id>.<at>.<hex>.chunk``), the file a finish puts together from the chunk objects
  (``uploads/<id>.part``, object storage only: otherwise that file *is* the upload, and
  :func:`.resumable.sweep` owns it), and a lecture folder with no lecture row (``lectures/<id>/``:
  the ``source.mp4`` of an upload cut off by a crash, a worker's copies of a deleted lecture when
  the folder is shared), untouched for the grace.
- **Objects of no lecture** (object storage): everything under ``<prefix>/lectures/<id>/`` for an
  ``id`` with no lecture row whose newest object is older than the grace: a stage's write (the web
  copy) that raced the lecture's deletion, or the source of a process that died before it
  registered the lecture. The stage itself writes nothing for a lecture that is gone and removes
  what it wrote when the lecture went meanwhile; this catches what a crash in between leaves.
"""

from __future__ import annotations

import logging
import shutil
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from lecturecopilot.objectstore import S3MediaStore
from lecturecopilot.settings import Settings
from lecturecopilot.storage import MediaStore

from .core import ingesting
from .resumable import OPEN, lecture_id_of
from .store import IngestStore

log = logging.getLogger(__name__)


@dataclass
class Swept:
    """What one :func:`sweep` removed: the keys of the multipart uploads it aborted, the spool
    files and lecture folders it deleted, the lecture ids whose objects it deleted."""

    aborted: list[str] = field(default_factory=list)
    spool: list[str] = field(default_factory=list)
    objects: list[str] = field(default_factory=list)


def _uuid(name: str) -> str | None:
    """``name`` in canonical UUID form, or None when it is not one."""
    try:
        return str(uuid.UUID(name))
    except ValueError:
        return None


def sweep(*, settings: Settings, records: IngestStore, store: MediaStore) -> Swept:
    """Removes what is left over in ``store`` (see the module docstring); returns what went. A
    kind the store or the database refuses now is logged and the others go on (the next sweep
    tries again); raises only when the open uploads cannot be read."""
    grace = settings.upload_idle_s
    # read before anything is listed: an upload finishing later registers its lecture in this process
    # (ingesting) or is younger than the grace
    spared = {lecture_id_of(str(r["id"])) for r in records.uploads_in(OPEN)}
    swept = Swept()
    steps = [("spool", lambda: remove_stale_spool(store, records, grace, spared))]
    if isinstance(store, S3MediaStore):
        steps += [("aborted", lambda: abort_stale_uploads(store, records, grace, spared)),
                  ("objects", lambda: remove_objects_of_no_lecture(store, records, grace, spared))]
    for name, step in steps:
        try:
            setattr(swept, name, step())
        except Exception as e:  # botocore's errors (a key without the rights), psycopg's, the file system's
            log.warning("sweep of leftovers (%s) failed: %s", name, e)
    for what, items in (("aborted unfinished multipart uploads", swept.aborted), ("removed spool files", swept.spool),
                        ("removed the objects of deleted lectures", swept.objects)):
        if items:
            log.info("sweep: %s: %s", what, ", ".join(items))
    return swept


def abort_stale_uploads(store: S3MediaStore, records: IngestStore, grace: float, spared: set[str]) -> list[str]:
    """Aborts the unfinished multipart uploads under ``uploads/`` and ``lectures/`` begun more than
    ``grace`` seconds ago, but a chunk of a resumable upload whose lock is held (being sent now)
    and those of a lecture in ``spared`` or being ingested here; returns their keys."""
    cutoff = time.time() - grace
    gone = []
    for kind in ("uploads", "lectures"):
        root = store.key(kind) + "/"
        for up in store.unfinished_uploads(root):
            if up["Initiated"].timestamp() > cutoff:
                continue
            owner = up["Key"][len(root):].split("/", 1)[0]
            if _abort_unless_busy(store, records, up, lecture=kind == "lectures", owner=owner, spared=spared):
                gone.append(up["Key"])
    return gone


def _abort_unless_busy(store: S3MediaStore, records: IngestStore, up: dict, *, lecture: bool, owner: str,
                       spared: set[str]) -> bool:
    """Aborts the unfinished multipart upload ``up`` (``Key``, ``UploadId``) of ``owner`` (a
    lecture's id when ``lecture``, else a resumable upload's) unless the lecture is in ``spared``
    or being ingested here, or the resumable upload's lock is held; True when it did."""
    if lecture:
        if owner in spared or owner in ingesting():
            return False
        store.abort_upload(up["Key"], up["UploadId"])
        return True
    with records.upload_lock(owner) as got:  # a chunk going up holds it
        if got:
            store.abort_upload(up["Key"], up["UploadId"])
        return got


def remove_objects_of_no_lecture(store: S3MediaStore, records: IngestStore, grace: float,
                                 spared: set[str]) -> list[str]:
    """Deletes every object under ``lectures/<id>/`` of an ``id`` with no lecture row (neither in
    ``spared`` nor being ingested here) whose newest object is over ``grace`` seconds old; returns
    those ids. Folders not named by a UUID are not this system's and stay."""
    ids = [i for i in map(_uuid, store.lecture_ids()) if i is not None]
    if not ids:
        return []
    live = records.existing_lectures(ids)
    cutoff = time.time() - grace
    gone = []
    for lid in ids:
        if lid in live or lid in spared:
            continue
        objs = store.objects(store.key("lectures", lid) + "/")
        if not objs or max(o["LastModified"].timestamp() for o in objs) > cutoff:
            continue
        if lid in ingesting() or records.existing_lectures([lid]):  # registered meanwhile
            continue
        if store.delete_prefix(store.key("lectures", lid) + "/"):
            gone.append(lid)
    return gone


def _newest(path: Path) -> float:
    """The newest modification time (seconds since the epoch) of ``path`` and the files under it;
    a file that goes while it is looked at counts for nothing."""
    times = []
    for p in [path, *path.rglob("*")] if path.is_dir() else [path]:
        try:
            times.append(p.stat().st_mtime)
        except OSError:
            pass
    return max(times, default=0.0)


def remove_stale_spool(store: MediaStore, records: IngestStore, grace: float, spared: set[str]) -> list[str]:
    """Deletes the spool files untouched for ``grace`` seconds: chunks (``uploads/*.chunk``) and,
    with object storage, finishes' files (``uploads/*.part``) of uploads whose lock is free, and
    lecture folders (``lectures/<id>/``) with no lecture row, not in ``spared`` nor being ingested
    here; returns their paths relative to the media folder."""
    cutoff = time.time() - grace
    gone = []
    kinds = {".chunk", ".part"} if isinstance(store, S3MediaStore) else {".chunk"}
    for f in sorted((store.root / "uploads").glob("*")):
        if f.suffix not in kinds or not f.is_file() or _newest(f) > cutoff:
            continue
        with records.upload_lock(f.name.split(".", 1)[0]) as got:  # the chunk's request, the finish hold it
            if got and f.exists():
                f.unlink(missing_ok=True)
                gone.append(f"uploads/{f.name}")
    folders = {lid: d for d in (store.root / "lectures").glob("*")
               if d.is_dir() and not d.name.startswith(".") and (lid := _uuid(d.name)) is not None}
    if not folders:
        return gone
    live = records.existing_lectures(list(folders))
    for lid, d in sorted(folders.items()):
        if lid in live or lid in spared or _newest(d) > cutoff:
            continue
        if lid in ingesting() or records.existing_lectures([lid]):
            continue
        shutil.rmtree(d, ignore_errors=True)
        gone.append(f"lectures/{d.name}/")
    return gone
