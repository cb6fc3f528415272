"""Media in any S3-compatible object store (AWS S3, MinIO, Cloudflare R2, ...) through boto3.

``LC_MEDIA_URL=s3://bucket/prefix`` selects it (:func:`lecturecopilot.mediastores.media_store`);
boto3 finds the endpoint and credentials in the standard variables ``AWS_ENDPOINT_URL``,
``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY`` (and ``AWS_REGION`` / ``AWS_DEFAULT_REGION``).

A lecture's objects live under ``prefix/lectures/<lecture_id>/``. Every process works on local
files in ``<data_dir>/media/lectures/<lecture_id>/``: ingest writes the upload there and
:meth:`S3MediaStore.keep` sends it up (multipart in :data:`PART_BYTES` parts, streamed from the
file, never whole in memory) and drops the local copy; a worker's :meth:`S3MediaStore.resolve`
downloads the object into that folder and ffmpeg reads the local file, which keeps its
``-protocol_whitelist file``. An object may be rewritten (``web.mp4`` when a web copy is made
again, the source when a finish is retried), so a local copy is reused only while its object
still has the ETag it was downloaded with (one HEAD per resolve). A lecture a worker is working
on is pinned (:meth:`S3MediaStore.pinned`); before each download the other lectures' copies
untouched for ``LC_MEDIA_CACHE_S`` go, then the least recently used ones until the folder fits
``LC_MEDIA_CACHE_BYTES`` with the download (:meth:`S3MediaStore.evict_stale`). Pins are
in-process (one process per pod's folder in deploy/k8s; another process sharing the folder is
covered only by :data:`WRITING_S`). The local copies of a lecture deleted elsewhere stay until
evicted so.
The gateway redirects the player to a presigned GET URL (:meth:`S3MediaStore.video_url`, valid
``LC_VIDEO_URL_S``, ten minutes by default), where the store answers HTTP Range requests itself.
Multipart uploads a process died in the middle of stay in the store, unseen and billed, until
aborted: :meth:`S3MediaStore.unfinished_uploads` lists them and :meth:`S3MediaStore.abort_upload`
aborts one (ingest's sweeper, ``services/ingest/leftovers.py``); a deleted prefix's own go with it.
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
import time
import uuid
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse, urlsplit

from .storage import MediaStore, MediaUnavailable, UnsafeMediaURI, lecture_uuid

log = logging.getLogger(__name__)

PART_BYTES = 8 * 1024 * 1024  # multipart threshold and part size (S3's minimum part is 5 MiB)
# Downloads are one streamed GET: the next step (ffmpeg, whisper) takes far longer than a stream
# within a region, and boto3's ranged GETs in parallel took 10.65 s against 0.40 s for one GET of a
# 418 MB video from moto's server (python -m bench.media_read, bench/results/media_read.json).
ONE_GET = 1 << 62
# A folder with a file written this recently (seconds) is being written, maybe by another process
# sharing the folder (ingest beside the workers in one stack), whose pins this one cannot see: the
# byte budget does not evict it (age eviction needs LC_MEDIA_CACHE_S, longer anyway).
WRITING_S = 60.0
VIDEO_URL_S = 600  # presigned URL lifetime (s) unless the store is given another (LC_VIDEO_URL_S)


def parse_media_url(url: str) -> tuple[str, str]:
    """``(bucket, prefix)`` of ``s3://bucket/prefix`` (prefix without slashes at its ends, may be
    empty). Raises ValueError for another scheme, no bucket, or a prefix with ``.``/``..``/empty
    segments."""
    parsed = urlparse(url)
    if parsed.scheme != "s3" or not parsed.netloc or parsed.query or parsed.fragment:
        raise ValueError(f"LC_MEDIA_URL must look like s3://bucket/prefix, not {url!r}")
    prefix = parsed.path.strip("/")
    if prefix and any(p in ("", ".", "..") for p in prefix.split("/")):
        raise ValueError(f"LC_MEDIA_URL {url!r}: the prefix may not have empty, '.' or '..' segments")
    return parsed.netloc, prefix


def s3_client(*, path_style: bool = False, unsigned: bool = False, endpoint_url: str | None = None):
    """A boto3 S3 client configured from the standard ``AWS_*`` variables (``AWS_REGION`` is read
    too, which botocore alone does not), signing with SigV4 (presigned URLs included: R2 and
    newer AWS regions take nothing else), retrying in botocore's ``standard`` mode. ``unsigned``:
    one that signs nothing and needs no credentials (its URLs show the store's addressing).
    ``endpoint_url``: this endpoint instead of ``AWS_ENDPOINT_URL`` (the public one of presigned URLs)."""
    import boto3
    from botocore import UNSIGNED
    from botocore.config import Config

    config = Config(retries={"mode": "standard", "max_attempts": 5},
                    signature_version=UNSIGNED if unsigned else "s3v4",
                    s3={"addressing_style": "path"} if path_style else {})
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or None
    return boto3.client("s3", region_name=region, config=config, endpoint_url=endpoint_url or None)


@dataclass(frozen=True)
class CacheLimits:
    """How much of the store the working copy keeps: lectures whose files were all last touched
    over ``max_age_s`` seconds ago go, then the least recently touched until it holds at most
    ``max_bytes`` (``LC_MEDIA_CACHE_S``, ``LC_MEDIA_CACHE_BYTES``; see :meth:`S3MediaStore.evict_stale`)."""

    max_age_s: float = 86400.0
    max_bytes: int = 8 << 30


class S3MediaStore(MediaStore):
    """Lecture media as objects ``s3://bucket/prefix/lectures/<lecture_id>/<name>``, with
    ``root`` (a local folder) as the working copy, kept within ``cache``. ``client``: a boto3 S3
    client (default :func:`s3_client`). ``public_endpoint``: the endpoint presigned URLs are signed for, as
    browsers reach the store (default: the client's; ignored with an injected ``client``).
    ``video_url_s``: how long a presigned video URL stays valid (seconds).
    Errors of the store other than a missing object (``botocore`` exceptions) are raised as they
    come: a worker retries the event."""

    def __init__(self, root: Path, url: str, *, client=None, path_style: bool = False,
                 cache: CacheLimits = CacheLimits(), public_endpoint: str | None = None,
                 video_url_s: int = VIDEO_URL_S):
        super().__init__(root)
        self.video_url_s = video_url_s
        # presigned URLs go to browsers: signed for the endpoint they can reach (LC_MEDIA_PUBLIC_ENDPOINT,
        # e.g. MinIO's Ingress) when the services reach the store under an in-cluster name
        self.public_endpoint = public_endpoint
        self.cache_bytes = cache.max_bytes
        self._pins: Counter[str] = Counter()
        self._pin_lock, self._evict_lock = threading.Lock(), threading.Lock()
        self.bucket, self.prefix = parse_media_url(url)
        self._own_client = client is None
        self._path_style = path_style
        self.client = client or s3_client(path_style=path_style)
        self._signer = self.client if client is not None or not public_endpoint else \
            s3_client(path_style=path_style, endpoint_url=public_endpoint)
        self.cache_s = cache.max_age_s

    def key(self, *parts: str) -> str:
        """The object key ``prefix/<parts joined by '/'>``."""
        return "/".join(p for p in (self.prefix, *parts) if p)

    def _lecture_key(self, lecture_id: str) -> str:
        return self.key("lectures", lecture_id)

    def keep(self, path: Path, lecture_id: str, *, move: bool = False) -> str:
        """Uploads ``path`` (a file in ``lecture_dir(lecture_id)``) to the lecture's prefix under
        the same relative name and returns its ``s3://`` URI; with ``move`` the local file goes,
        else it stays as the object's local copy (its ETag beside it, ``.<name>.etag``).
        Raises ValueError for a path outside that folder."""
        from boto3.s3.transfer import TransferConfig

        rel = path.resolve().relative_to(self.lecture_dir(lecture_id).resolve()).as_posix()
        key = f"{self._lecture_key(lecture_id)}/{rel}"
        self.client.upload_file(str(path), self.bucket, key, Config=TransferConfig(
            multipart_threshold=PART_BYTES, multipart_chunksize=PART_BYTES, max_concurrency=4))
        tag_file = path.with_name(f".{path.name}.etag")
        if move:
            path.unlink(missing_ok=True)
            tag_file.unlink(missing_ok=True)
        else:  # the local file is the object's copy now (resolve reuses it while the ETag holds)
            tag_file.write_text(self.client.head_object(Bucket=self.bucket, Key=key)["ETag"])
        return f"s3://{self.bucket}/{key}"

    def _relative(self, uri: str, lecture_id: str) -> str:
        """The name of ``uri``'s object under the lecture's prefix. Raises :class:`UnsafeMediaURI`
        unless it is an object of this bucket strictly under ``prefix/lectures/<lecture_id>/``
        with no empty, ``.`` or ``..`` segment (nothing a normalisation could move elsewhere)."""
        parsed = urlparse(uri)
        if parsed.netloc != self.bucket or parsed.query or parsed.fragment or parsed.params:
            raise UnsafeMediaURI(f"only objects of the bucket {self.bucket!r} are accepted")
        parts = parsed.path[1:].split("/")
        if any(p in ("", ".", "..") or "\\" in p or "\x00" in p for p in parts):
            raise UnsafeMediaURI("an object key with empty, '.' or '..' segments is not accepted")
        folder = self._lecture_key(lecture_id).split("/")
        if len(parts) <= len(folder) or parts[:len(folder)] != folder:
            raise UnsafeMediaURI(f"{uri} is not inside the media store folder of lecture {lecture_id}")
        return "/".join(parts[len(folder):])

    def resolve(self, uri: str, lecture_id: str) -> Path:
        """The local copy of the object an ``s3://`` URI of lecture ``lecture_id`` names (downloaded
        on first use, then reused); a ``file://`` URI is confined as in :meth:`MediaStore.resolve`.
        A missing object yields a path that does not exist. Raises :class:`UnsafeMediaURI` as
        :meth:`_relative` says (and for a ``lecture_id`` that is not a UUID, an empty URI)."""
        from boto3.s3.transfer import TransferConfig

        if not uri.startswith("s3://"):
            return super().resolve(uri, lecture_id)
        lecture_id = lecture_uuid(lecture_id)
        rel = self._relative(uri, lecture_id)
        local = self.root / "lectures" / lecture_id / rel
        key = f"{self._lecture_key(lecture_id)}/{rel}"
        tag_file = local.with_name(f".{local.name}.etag")
        try:
            head = self.client.head_object(Bucket=self.bucket, Key=key)
        except Exception as e:
            if _missing(e):  # gone from the store: no stale copy either
                local.unlink(missing_ok=True)
                tag_file.unlink(missing_ok=True)
                return local
            raise
        if local.is_file() and tag_file.is_file() and tag_file.read_text() == head["ETag"]:
            os.utime(local)  # in use: the last to be evicted
            return local
        self.evict_stale(keep=lecture_id, incoming=head["ContentLength"])
        local.parent.mkdir(parents=True, exist_ok=True)
        tmp = local.with_name(f"{local.name}.{uuid.uuid4().hex}.download")
        try:
            self.client.download_file(self.bucket, key, str(tmp),
                                      Config=TransferConfig(multipart_threshold=ONE_GET, use_threads=False))
        except Exception as e:
            tmp.unlink(missing_ok=True)
            if _missing(e):
                return local
            raise
        tmp.replace(local)
        tag_file.write_text(head["ETag"])
        return local

    @contextmanager
    def pinned(self, lecture_id: str):
        """While the ``with`` block runs, :meth:`evict_stale` leaves lecture ``lecture_id``'s local
        folder alone (pins of several threads count up). An id that is not a UUID pins nothing
        that exists (resolve refuses it)."""
        try:
            lecture_id = lecture_uuid(lecture_id)  # the folder's name
        except UnsafeMediaURI:
            pass
        with self._pin_lock:
            self._pins[lecture_id] += 1
        try:
            yield
        finally:
            with self._pin_lock:
                self._pins[lecture_id] -= 1
                if self._pins[lecture_id] <= 0:
                    del self._pins[lecture_id]

    def evict_stale(self, *, keep: str | None = None, incoming: int = 0) -> list[str]:
        """Removes local lecture folders (never ``keep`` nor a :meth:`pinned` one; the objects stay)
        whose files were all last touched over ``cache_s`` seconds ago, then the least recently
        touched others until the folder holds at most ``cache_bytes`` with ``incoming`` more bytes
        (a download to come), sparing those written in the last :data:`WRITING_S` seconds;
        returns their ids, oldest first. A folder goes by an atomic rename
        to a dot-name, done while no pin can be taken, then is deleted."""
        with self._evict_lock:
            folders = [(*_usage(f), f) for f in (self.root / "lectures").glob("*")
                       if f.is_dir() and not f.name.startswith(".")]
            total = sum(size for _, size, _ in folders) + incoming
            now, gone = time.time(), []
            for touched, size, folder in sorted(folders, key=lambda t: t[0]):
                if touched >= now - self.cache_s and (total <= self.cache_bytes or touched >= now - WRITING_S):
                    break
                if folder.name != keep and self._take(folder):
                    total -= size
                    gone.append(folder.name)
            for trash in (self.root / "lectures").glob(".evicted-*"):
                shutil.rmtree(trash, ignore_errors=True)
        return gone

    def _take(self, folder: Path) -> bool:
        """Renames the unpinned lecture ``folder`` out of the way (False when it is pinned)."""
        with self._pin_lock:
            if self._pins.get(folder.name):
                return False
            try:
                folder.rename(folder.with_name(f".evicted-{folder.name}-{uuid.uuid4().hex}"))
            except OSError:
                return False
        return True

    def delete_lecture(self, lecture_id: str) -> None:
        """Deletes the local copy and every object under the lecture's prefix, and aborts its
        unfinished multipart uploads (a web copy going up meanwhile fails, and is not left behind).
        A store that refuses is logged (the lecture's rows are already gone), not raised."""
        super().delete_lecture(lecture_id)
        self.delete_prefix(self._lecture_key(lecture_id) + "/")

    def discard(self, uri: str, lecture_id: str) -> None:
        """Deletes the one object ``uri`` of lecture ``lecture_id`` (what a stage wrote for a
        lecture deleted meanwhile), and its local copy; a ``file://`` URI as
        :meth:`MediaStore.discard`. Raises :class:`UnsafeMediaURI` as :meth:`_relative` says and
        botocore's errors."""
        if not uri.startswith("s3://"):
            return super().discard(uri, lecture_id)
        lecture_id = lecture_uuid(lecture_id)
        rel = self._relative(uri, lecture_id)
        local = self.root / "lectures" / lecture_id / rel
        local.unlink(missing_ok=True)
        local.with_name(f".{local.name}.etag").unlink(missing_ok=True)
        self.client.delete_object(Bucket=self.bucket, Key=f"{self._lecture_key(lecture_id)}/{rel}")

    def lecture_ids(self) -> list[str]:
        """The names of the lecture folders (``prefix/lectures/<name>/``) that hold objects. Raises
        botocore's errors."""
        root = self.key("lectures") + "/"
        pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=root, Delimiter="/")
        return [p["Prefix"][len(root):].rstrip("/") for page in pages for p in page.get("CommonPrefixes", [])]

    def unfinished_uploads(self, prefix: str | None = None) -> list[dict]:
        """The multipart uploads begun and neither completed nor aborted (``Key``, ``UploadId``,
        ``Initiated``) whose keys start with ``prefix`` (default: this store's whole prefix).
        Raises botocore's errors."""
        if prefix is None:
            prefix = self.prefix + "/" if self.prefix else ""
        pages = self.client.get_paginator("list_multipart_uploads").paginate(Bucket=self.bucket, Prefix=prefix)
        return [u for page in pages for u in page.get("Uploads", [])]

    def abort_upload(self, key: str, upload_id: str) -> None:
        """Aborts one unfinished multipart upload (its parts are freed); one already gone is no
        error. Raises botocore's other errors."""
        try:
            self.client.abort_multipart_upload(Bucket=self.bucket, Key=key, UploadId=upload_id)
        except Exception as e:
            if not _missing(e):
                raise

    def objects(self, prefix: str) -> list[dict]:
        """The objects (``Key``, ``Size``, ``LastModified``) whose keys start with ``prefix``.
        Raises botocore's errors."""
        pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix)
        return [o for page in pages for o in page.get("Contents", [])]

    def delete_prefix(self, prefix: str) -> bool:
        """Deletes every object whose key starts with ``prefix`` and aborts the unfinished multipart
        uploads there (an upload going on meanwhile fails); False (logged) when the store refused,
        True when they are gone."""
        try:  # keys without ListBucketMultipartUploads / AbortMultipartUpload still delete the objects
            for upload in self.unfinished_uploads(prefix):
                self.abort_upload(upload["Key"], upload["UploadId"])
        except Exception as e:
            log.warning("aborting the unfinished uploads under s3://%s/%s failed: %s", self.bucket, prefix, e)
        try:
            pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix)
            for page in pages:  # at most 1000 keys a page, the most delete_objects takes
                keys = [{"Key": o["Key"]} for o in page.get("Contents", [])]
                if keys:
                    self.client.delete_objects(Bucket=self.bucket, Delete={"Objects": keys, "Quiet": True})
        except Exception as e:  # botocore's ClientError, connection errors
            log.error("deleting the objects under s3://%s/%s failed: %s", self.bucket, prefix, e)
            return False
        return True

    def video_url(self, value: str) -> str | None:
        """A presigned GET URL (valid ``video_url_s`` seconds) of the ``s3://`` object
        ``value``; None for a local path (a lecture stored before object storage was on). Raises
        :class:`MediaUnavailable` when no credentials are configured."""
        from botocore.exceptions import NoCredentialsError

        if not value.startswith("s3://"):
            return None
        parsed = urlparse(value)
        try:
            return self._signer.generate_presigned_url("get_object", ExpiresIn=self.video_url_s, Params={
                "Bucket": parsed.netloc, "Key": parsed.path[1:], "ResponseContentType": "video/mp4"})
        except NoCredentialsError:
            raise MediaUnavailable("The media store has no credentials (set AWS_ACCESS_KEY_ID and "
                                   "AWS_SECRET_ACCESS_KEY).") from None

    def media_origin(self) -> str | None:
        """The origin (``scheme://host[:port]``) of this store's presigned URLs, from the URL an
        unsigned twin of the client gives (same endpoint, region and addressing style: a
        virtual-host bucket is part of the host); needs no credentials."""
        import boto3
        from botocore import UNSIGNED
        from botocore.config import Config

        if self._own_client:
            twin = s3_client(path_style=self._path_style, unsigned=True, endpoint_url=self.public_endpoint)
        else:
            meta = self.client.meta
            twin = boto3.client("s3", endpoint_url=meta.endpoint_url, region_name=meta.region_name,
                                config=meta.config.merge(Config(signature_version=UNSIGNED)))
        u = urlsplit(twin.generate_presigned_url("get_object", Params={
            "Bucket": self.bucket, "Key": f"{self._lecture_key('origin')}/x"}))
        return f"{u.scheme}://{u.netloc}"


def _usage(folder: Path) -> tuple[float, int]:
    """``(newest modification time of its files but ETags, else of the folder, seconds since the
    epoch; bytes of its files)`` of ``folder``; a file that goes while it is looked at (a
    download renamed) counts for nothing."""
    times, size = [], 0
    for p in folder.rglob("*"):
        try:
            st = p.stat()
        except OSError:
            continue
        if not p.name.endswith(".etag"):  # a copy's ETag is written with it; resolve touches the copy
            times.append(st.st_mtime)
        size += st.st_size if p.is_file() else 0
    return max(times, default=folder.stat().st_mtime), size


def _missing(e: Exception) -> bool:
    """Whether a botocore error says the object (or the multipart upload) does not exist."""
    code = str(getattr(e, "response", {}).get("Error", {}).get("Code", ""))
    return code in ("404", "NoSuchKey", "NotFound", "NoSuchUpload")
