"""Media storage behind one interface, two backends chosen by ``LC_MEDIA_URL``:

- unset: :class:`MediaStore`, the local folder ``<data_dir>/media``, addressed by ``file://`` URIs;
- ``s3://bucket/prefix``: :class:`lecturecopilot.objectstore.S3MediaStore`, any S3-compatible store
  (``s3://`` URIs); the local folder is then its working copy and cache.

:func:`lecturecopilot.mediastores.media_store` makes the one the settings select.

Files are made and read as local files in ``lecture_dir(<lecture_id>)``; :meth:`MediaStore.keep`
makes one durable and returns its URI; :meth:`MediaStore.resolve` turns a URI of an event back into
a local file (after confining it to the lecture's own folder). Rows keep the value of
:meth:`MediaStore.column` (a local path, or the ``s3://`` URI).
"""

from __future__ import annotations

import logging
import os
import shutil
import uuid
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import unquote, urlparse


log = logging.getLogger(__name__)


class UnsafeMediaURI(ValueError):
    """A media or captions URI that does not name a file inside the lecture's own folder of the
    store; ``str(err)`` says why (fit for logs and the dead-letter reason, it holds no file
    contents)."""


class MediaUnavailable(RuntimeError):
    """The media store cannot serve a request now (e.g. no credentials configured); ``str(err)``
    says why, fit to show the client."""


def lecture_uuid(lecture_id: str) -> str:
    """``lecture_id`` in canonical UUID form. Raises :class:`UnsafeMediaURI` when it is not one."""
    try:
        return str(uuid.UUID(lecture_id))
    except (ValueError, TypeError, AttributeError):
        raise UnsafeMediaURI(f"lecture id {lecture_id!r} is not a UUID") from None


class MediaStore:
    """Stores lecture media under ``root/lectures/<lecture_id>/``. The folder is its owner's alone
    (0700, when this process owns it): a private course's videos and captions are not for every user
    of a shared machine (a probe read them all, files 0644 under 0755 folders)."""

    def __init__(self, root: Path):
        self.root = root
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            if self.root.stat().st_uid == os.getuid() and self.root.stat().st_mode & 0o077:
                self.root.chmod(0o700)
        except OSError as e:  # a read-only mount (the gateway's in Kubernetes): its volume decides
            log.debug("media folder %s keeps its mode: %s", self.root, e)

    def keep(self, path: Path, lecture_id: str, *, move: bool = False) -> str:
        """Makes ``path`` (a file in ``lecture_dir(lecture_id)``) durable and returns its URI. The
        local folder is the store, so this is its ``file://`` URI (``move`` changes nothing)."""
        return self.uri(path)

    def video_url(self, value: str) -> str | None:
        """A URL the browser may fetch the stored video ``value`` (a :meth:`column` value) from
        directly, or None when it is a local file the gateway serves itself."""
        return None

    def media_origin(self) -> str | None:
        """The origin of :meth:`video_url` URLs (for the CSP's ``media-src``); None: same origin."""
        return None

    @staticmethod
    def column(uri: str) -> str:
        """What a row keeps for a stored file's URI: the local path of a ``file://`` URI (as rows
        always did), the URI itself for ``s3://``. Raises ValueError for other schemes."""
        return uri if uri.startswith("s3://") else str(MediaStore.path_of(uri))

    @staticmethod
    def uri_of_column(value: str) -> str:
        """The URI of a row's stored file (:meth:`column` reversed)."""
        return value if value.startswith("s3://") else MediaStore.uri(Path(value))

    @contextmanager
    def pinned(self, lecture_id: str):
        """A ``with`` block working on lecture ``lecture_id``'s files; the local folder is the
        store, so nothing is evicted anyway (see :meth:`S3MediaStore.pinned`)."""
        yield

    def lecture_dir(self, lecture_id: str) -> Path:
        d = self.root / "lectures" / lecture_id
        d.mkdir(parents=True, exist_ok=True)
        return d

    def delete_lecture(self, lecture_id: str) -> None:
        shutil.rmtree(self.root / "lectures" / lecture_id, ignore_errors=True)

    def discard(self, uri: str, lecture_id: str) -> None:
        """Deletes the one stored file ``uri`` of lecture ``lecture_id`` (what a stage wrote for a
        lecture deleted meanwhile). Raises :class:`UnsafeMediaURI` as :meth:`resolve` says."""
        self.resolve(uri, lecture_id).unlink(missing_ok=True)

    def resolve(self, uri: str, lecture_id: str) -> Path:
        """The local path a ``file://`` URI of lecture ``lecture_id`` names, after ``..`` and
        symbolic links are resolved; it must lie inside ``root/lectures/<lecture_id>/`` (that
        lecture's own folder, not another lecture's, not anywhere else on the machine).

        Raises :class:`UnsafeMediaURI` for a ``lecture_id`` that is not a UUID, an empty URI, another scheme (``s3://``, ``http://``,
        a bare path), a host part, or a path that resolves outside that folder. Whether the file
        exists is the caller's business.
        """
        if not uri:
            raise UnsafeMediaURI("the URI is empty")
        parsed = urlparse(uri)
        if parsed.scheme != "file":
            raise UnsafeMediaURI(f"only file:// URIs inside the media store are accepted, not {parsed.scheme or 'a bare path'!r}")
        if parsed.netloc not in ("", "localhost") or parsed.query or parsed.fragment:
            raise UnsafeMediaURI("a file:// URI with a host, query or fragment is not accepted")
        lecture_id = lecture_uuid(lecture_id)
        folder = (self.root / "lectures" / lecture_id).resolve()
        path = Path(unquote(parsed.path)).resolve()
        if not path.is_relative_to(folder) or path == folder:
            raise UnsafeMediaURI(f"{path} is not inside the media store folder of lecture {lecture_id}")
        return path

    @staticmethod
    def uri(path: Path) -> str:
        return path.resolve().as_uri()

    @staticmethod
    def path_of(uri: str) -> Path:
        """Local path of a ``file://`` URI (or a plain path) that this system wrote itself (ingest).
        Raises ValueError for other schemes. URIs that come from events go through
        :meth:`resolve` instead."""
        if not uri:
            raise ValueError("empty media URI")
        parsed = urlparse(uri)
        if parsed.scheme in ("", "file"):
            return Path(unquote(parsed.path))
        raise ValueError(f"unsupported media URI scheme: {parsed.scheme!r}")
