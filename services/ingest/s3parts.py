"""The bytes of resumable uploads in the object store (``LC_MEDIA_URL=s3://bucket/prefix``), so
that no volume is shared between ingest pods: one chunk of an upload can reach any pod.

Upload ``<id>`` is the objects under ``prefix/uploads/<id>/``: an empty ``open`` marker (put at
the start: the upload has bytes, none yet) and one object per accepted chunk, named by its first
byte (``00000000000000000000``, ``00000000000001048576``, ...). A chunk is spooled to a local
file first and put only once it arrived whole, so a chunk cut off leaves no object; the offset
is the end of the run of chunk objects from byte 0. Every chunk but the last (the one that ends
at the declared size) must be at least ``LC_UPLOAD_MIN_CHUNK_BYTES`` (default 5 MiB, S3's multipart
minimum; :meth:`S3Parts.min_chunk`), so an upload has a bounded number of objects to list and read.
The finishing pod streams the objects in order into
``<media>/uploads/<id>.part`` (its local working folder) and the usual checks and
:meth:`~lecturecopilot.objectstore.S3MediaStore.keep` follow; the objects go after the finish,
on a refusal, on expiry and with the course.

The upload's lock (one writer, one finisher) is a Postgres session advisory lock on a connection
of its own (:meth:`~.store.IngestStore.upload_lock`): Postgres drops it when the pod dies, as the
kernel drops an ``flock``. That connection is idle while the bytes stream (no transaction, not
one of the pool's)."""

from __future__ import annotations

import uuid
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import BinaryIO, Iterator

import psycopg
from botocore.exceptions import BotoCoreError, ClientError

from lecturecopilot.objectstore import PART_BYTES, S3MediaStore

from .errors import IngestError
from .partfiles import CHUNK_READ, Busy, receive
from .store import IngestStore

MARKER = "open"  # the empty object that says an upload exists before its first chunk


STORE_ERRORS = (BotoCoreError, ClientError)  # what boto3 raises when the store refuses or is unreachable


def _unavailable(at: int) -> IngestError:
    return IngestError(f"The media store did not take the chunk; send it again from byte {at}.",
                       status=503, code="store_unavailable", headers={"Retry-After": "5"})


def _store_down() -> IngestError:
    return IngestError("The media store is not reachable; try again shortly.", status=503,
                       code="store_unavailable", headers={"Retry-After": "5"})


def _db_down() -> IngestError:
    return IngestError("The database is not reachable; try again shortly.", status=503,
                       code="database_unavailable", headers={"Retry-After": "5"})


class S3Part:
    """An upload's chunk objects, under its lock; ``chunks`` are ``(first byte, size)`` pairs."""

    def __init__(self, parts: "S3Parts", upload_id: str, chunks: list[tuple[int, int]]):
        self.parts, self.upload_id, self.chunks = parts, upload_id, chunks

    def size(self) -> int:
        """The bytes received so far (the end of the chunk run from byte 0)."""
        return _run_end(self.chunks)

    def receive(self, stream: BinaryIO, at: int, want: int) -> int:
        """Spools one chunk of ``want`` bytes starting at upload byte ``at`` to a local file, then
        puts it as an object; returns ``want``. Raises :class:`IngestError` as
        :func:`.partfiles.receive` does, and 503 when the store refuses the object."""
        from boto3.s3.transfer import TransferConfig

        store = self.parts.store
        tmp = self.parts.local_dir() / f"{self.upload_id}.{at}.{uuid.uuid4().hex}.chunk"
        try:
            with open(tmp, "w+b") as f:
                receive(f, stream, 0, want, resume=at)
            try:
                store.client.upload_file(str(tmp), store.bucket, self.parts.prefix(self.upload_id) + f"{at:020d}",
                                         Config=TransferConfig(multipart_threshold=PART_BYTES,
                                                               multipart_chunksize=PART_BYTES, max_concurrency=4))
            except Exception:  # botocore's errors and connection errors: nothing was accepted
                raise _unavailable(at) from None
        finally:
            tmp.unlink(missing_ok=True)
        self.chunks.append((at, want))
        return want

    def local_file(self) -> Path | None:
        """The upload's bytes as one local file (the chunk objects streamed into it in order), or
        None when the chunks do not reach the end they promise. Raises botocore's errors."""
        store = self.parts.store
        path = self.parts.local_path(self.upload_id)
        with open(path, "wb") as out:
            for first, _ in _run(self.chunks):
                body = store.client.get_object(Bucket=store.bucket,
                                               Key=self.parts.prefix(self.upload_id) + f"{first:020d}")["Body"]
                for buf in body.iter_chunks(CHUNK_READ):
                    out.write(buf)
        if path.stat().st_size != self.size():
            path.unlink(missing_ok=True)
            return None
        return path

    def discard_local(self) -> None:
        """Removes the local copy (the objects stay for a retry)."""
        self.parts.local_path(self.upload_id).unlink(missing_ok=True)


def _run(chunks: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The chunks that follow each other from byte 0, in order."""
    out, at = [], 0
    for first, size in sorted(chunks):
        if first == at and size > 0:
            out.append((first, size))
            at += size
        elif first > at:
            break
    return out


def _run_end(chunks: list[tuple[int, int]]) -> int:
    return sum(size for _, size in _run(chunks))


class S3Parts:
    """Resumable uploads' bytes as objects of ``store`` (an
    :class:`~lecturecopilot.objectstore.S3MediaStore`), locked through ``records``. Store errors
    (botocore's) are raised as they come unless a method says otherwise."""

    def __init__(self, store: S3MediaStore, records: IngestStore):
        self.store, self.records = store, records

    def prefix(self, upload_id: str) -> str:
        """The key prefix of the upload's objects (ends with ``/``)."""
        return self.store.key("uploads", upload_id) + "/"

    def local_dir(self) -> Path:
        d = self.store.root / "uploads"
        d.mkdir(parents=True, exist_ok=True)
        return d

    def local_path(self, upload_id: str) -> Path:
        """Where the finishing pod puts the upload's bytes together."""
        return self.local_dir() / f"{upload_id}.part"

    def min_chunk(self, settings) -> int:
        """The fewest bytes a chunk other than an upload's last may have: ``LC_UPLOAD_MIN_CHUNK_BYTES``."""
        return settings.upload_min_chunk_bytes

    def create(self, upload_id: str) -> None:
        """The empty marker object of a new upload; :class:`IngestError` 503 ``store_unavailable``
        when the store refuses it or cannot be reached."""
        try:
            self.store.client.put_object(Bucket=self.store.bucket, Key=self.prefix(upload_id) + MARKER, Body=b"")
        except STORE_ERRORS:
            raise _store_down() from None

    def remove(self, upload_id: str) -> None:
        """Deletes the upload's objects (a refusing store is logged) and its local copy."""
        self.store.delete_prefix(self.prefix(upload_id))
        self.local_path(upload_id).unlink(missing_ok=True)

    def _chunks(self, upload_id: str) -> list[tuple[int, int]] | None:
        """``(first byte, size)`` of the upload's chunk objects; None when it has no object at all."""
        objs = self.store.objects(self.prefix(upload_id))
        if not objs:
            return None
        names = ((o["Key"].rsplit("/", 1)[-1], o["Size"]) for o in objs)
        return [(int(name), size) for name, size in names if name.isdigit()]

    def offset(self, row: dict) -> int:
        """The bytes of upload ``row`` (``id``, ``size``, ``state``) received so far; for one
        whose objects are gone, ``size`` once it was finishing or queued, else 0 (a refused or
        expired upload keeps none). Raises :class:`IngestError` 503 ``store_unavailable`` when the store cannot list them."""
        try:
            chunks = self._chunks(str(row["id"]))
        except STORE_ERRORS:
            raise _store_down() from None
        if chunks is None:
            return row["size"] if row["state"] in ("finishing", "queued") else 0
        return _run_end(chunks)

    def expected(self, open_rows: list[dict]) -> int:
        """0: the open uploads' bytes wait in the bucket, not on this pod's disk."""
        return 0

    @contextmanager
    def locked(self, upload_id: str) -> Iterator[S3Part | None]:
        """The upload's part under its lock, None when it has no objects; raises :class:`Busy`
        when another request or pod holds it, :class:`IngestError` 503 ``database_unavailable``
        when Postgres cannot be reached for the lock and ``store_unavailable`` when the store
        cannot list the objects (errors of the block itself pass through as they are)."""
        with ExitStack() as stack:
            try:
                got = stack.enter_context(self.records.upload_lock(upload_id))
            except psycopg.OperationalError:
                raise _db_down() from None
            if not got:
                raise Busy
            try:
                chunks = self._chunks(upload_id)
            except STORE_ERRORS:
                raise _store_down() from None
            yield None if chunks is None else S3Part(self, upload_id, chunks)

    def orphans(self, open_ids: set[str], grace_s: float) -> list[str]:
        """Ids of uploads with objects but no open upload, untouched for over ``grace_s`` seconds."""
        import time

        newest: dict[str, float] = {}
        root = self.store.key("uploads") + "/"
        for o in self.store.objects(root):
            uid = o["Key"][len(root):].split("/", 1)[0]
            newest[uid] = max(newest.get(uid, 0.0), o["LastModified"].timestamp())
        now = time.time()
        return [uid for uid, t in newest.items() if uid not in open_ids and now - t > grace_s]

