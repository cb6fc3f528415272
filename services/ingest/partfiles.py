"""The bytes of resumable uploads, in one of two backends that :func:`.parts.parts_of` picks for the
media store: :class:`LocalParts`, ``<media>/uploads/<id>.part`` files locked by ``flock`` (the
media folder, shared by every ingest process), or, with ``LC_MEDIA_URL=s3://...``,
:class:`~.s3parts.S3Parts` (one object per chunk, locked in Postgres). Both hand out, under the
upload's lock, a part with ``size()``, ``receive(stream, at, want)``, ``local_file()`` and
``discard_local()``; ``min_chunk(settings)`` is the smallest chunk but the last they take. The state machine that decides when to write, finish or remove is
:mod:`services.ingest.resumable`."""

from __future__ import annotations

import errno
import fcntl
import os
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Iterator

from lecturecopilot.httpserve import BodyTimeout
from lecturecopilot.storage import MediaStore

from .errors import IngestError
from .spool import no_room

CHUNK_READ = 1024 * 1024  # bytes read from a request body at a time


class Busy(Exception):
    """Another request or process holds the upload's lock."""


def part_path(store: MediaStore, upload_id: str) -> Path:
    """Where the bytes of upload ``upload_id`` live (the ``uploads`` folder is created if missing)."""
    d = store.root / "uploads"
    d.mkdir(parents=True, exist_ok=True)
    return d / f"{upload_id}.part"


def part_files(store: MediaStore) -> list[Path]:
    """Every ``.part`` file in the store, whoever owns it."""
    return list((store.root / "uploads").glob("*.part"))


def offset(store: MediaStore, row: dict) -> int:
    """The bytes of the upload ``row`` (``id``, ``size``, ``state``) received so far: its file's
    size, or for a file already gone, ``size`` once it was finishing or queued, else 0 (a refused
    or expired upload keeps none)."""
    part = part_path(store, str(row["id"]))
    if part.exists():
        return part.stat().st_size
    return row["size"] if row["state"] in ("finishing", "queued") else 0


_held_here: set[str] = set()  # uploads locked by this process (see locked_part)
_held_guard = threading.Lock()


@contextmanager
def locked_part(store: MediaStore, upload_id: str) -> Iterator[BinaryIO | None]:
    """The upload's ``.part`` file, open for writing and exclusively locked while the block runs;
    None when there is no such file. Raises :class:`Busy` when another holds it. The lock is an
    ``flock`` of the file (between processes, also on another host of a shared store: NFS and
    CephFS lock it for every client; the kernel drops it when its process dies) plus a set of the
    uploads this process holds (between its threads: on NFS an ``flock`` is a POSIX lock, which
    one process's threads share)."""
    with _held_guard:
        if upload_id in _held_here:
            raise Busy
        _held_here.add(upload_id)
    try:
        try:
            fd = os.open(part_path(store, upload_id), os.O_RDWR)
        except FileNotFoundError:
            yield None
            return
        with os.fdopen(fd, "r+b") as f:  # closing releases the lock
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise Busy from None
            yield f
    finally:
        with _held_guard:
            _held_here.discard(upload_id)


def receive(f: BinaryIO, stream: BinaryIO, at: int, want: int, resume: int | None = None) -> int:
    """Writes exactly ``want`` bytes of ``stream`` at byte ``at`` of ``f`` and returns ``want``; on
    anything else truncates ``f`` back to ``at`` and raises :class:`IngestError`: 408 a body past
    its time bound, 507 no room, 400 a body cut off or of another length. ``resume``: the
    upload's byte the client is told to send again from (default ``at``)."""
    got = 0
    at_msg = at if resume is None else resume
    f.seek(at)
    try:
        while got < want:
            buf = stream.read(min(CHUNK_READ, want - got))
            if not buf:
                break
            f.write(buf)
            got += len(buf)
        extra = stream.read(1)
        f.flush()
    except BodyTimeout as e:
        f.truncate(at)
        raise IngestError(f"{e.description} The chunk was discarded; send it again from byte {at_msg} (smaller "
                          "chunks on a slow connection).", status=408, code="chunk_timeout") from None
    except OSError as e:
        f.truncate(at)
        if e.errno == errno.ENOSPC:
            raise no_room() from None
        raise IngestError(f"The chunk was cut off before its end; send it again from byte {at_msg}.",
                          code="incomplete_chunk") from None
    except Exception:
        f.truncate(at)
        raise IngestError(f"The chunk was cut off before its end; send it again from byte {at_msg}.",
                          code="incomplete_chunk") from None
    if got != want or extra:
        f.truncate(at)
        raise IngestError(f"The chunk's body is not the {want} bytes its range announces.", code="size_mismatch")
    return got


def discard_rest(stream: BinaryIO) -> None:
    """Reads what is left of a chunk that was answered without it (a refusal before the bytes, a
    finish resumed by a chunk sent again), so the relay gets its answer instead of a reset
    connection; bounded like any upload body."""
    try:
        while stream.read(CHUNK_READ):
            pass
    except Exception:  # cut off or past its bounds: the connection closes anyway
        pass


class LocalPart:
    """An upload's ``.part`` file, open and locked (see :func:`locked_part`)."""

    def __init__(self, f: BinaryIO, path: Path):
        self.f, self.path = f, path

    def size(self) -> int:
        """The bytes received so far."""
        return os.fstat(self.f.fileno()).st_size

    def receive(self, stream: BinaryIO, at: int, want: int) -> int:
        """Appends one chunk (see :func:`receive`)."""
        return receive(self.f, stream, at, want)

    def local_file(self) -> Path | None:
        """The file with the upload's bytes (the ``.part`` file itself), or None when it is gone
        (its course was deleted meanwhile: the finish answers 410 ``upload_lost``)."""
        return self.path if self.path.exists() else None

    def discard_local(self) -> None:
        """Nothing: the ``.part`` file is the upload's only copy."""


class LocalParts:
    """Resumable uploads' bytes as ``.part`` files in the local (or shared) media folder."""

    def __init__(self, store: MediaStore):
        self.store = store

    def min_chunk(self, settings) -> int:
        """0: a ``.part`` file takes chunks of any size (``LC_UPLOAD_MIN_CHUNK_BYTES`` is for object storage)."""
        return 0

    def create(self, upload_id: str) -> None:
        """An empty ``.part`` file for a new upload."""
        part_path(self.store, upload_id).touch()

    def remove(self, upload_id: str) -> None:
        """Removes the upload's bytes (if any)."""
        part_path(self.store, upload_id).unlink(missing_ok=True)

    def offset(self, row: dict) -> int:
        """The bytes received (see :func:`offset`)."""
        return offset(self.store, row)

    def expected(self, open_rows: list[dict]) -> int:
        """The bytes the open uploads ``open_rows`` (``id``, ``size``) still need on this disk."""
        return sum(max(0, r["size"] - offset(self.store, {**r, "state": "receiving"})) for r in open_rows)

    @contextmanager
    def locked(self, upload_id: str) -> Iterator[LocalPart | None]:
        """The upload's part under its lock, None when it has no bytes; raises :class:`Busy`."""
        with locked_part(self.store, upload_id) as f:
            yield None if f is None else LocalPart(f, part_path(self.store, upload_id))

    def orphans(self, open_ids: set[str], grace_s: float) -> list[str]:
        """Names of ``.part`` files older than ``grace_s`` seconds that no open upload owns."""
        now = time.time()
        out = []
        for part in part_files(self.store):
            try:
                if part.stem not in open_ids and now - part.stat().st_mtime > grace_s:
                    out.append(part.stem)
            except OSError:
                pass
        return out
