"""Media storage: a local folder by default (``<data_dir>/media``), addressed by ``file://`` URIs.

Object storage (``s3://``) is not implemented: an event naming one is refused like any URI
outside the store (see :meth:`MediaStore.resolve`).
"""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path
from urllib.parse import unquote, urlparse

from .settings import Settings


class UnsafeMediaURI(ValueError):
    """A media or captions URI that does not name a file inside the lecture's own folder of the
    store; ``str(err)`` says why (fit for logs and the dead-letter reason, it holds no file
    contents)."""


class MediaStore:
    """Stores lecture media under ``root/lectures/<lecture_id>/``."""

    def __init__(self, root: Path):
        self.root = root
        self.root.mkdir(parents=True, exist_ok=True)

    @classmethod
    def from_settings(cls, settings: Settings) -> "MediaStore":
        return cls(settings.media_dir)

    def lecture_dir(self, lecture_id: str) -> Path:
        d = self.root / "lectures" / lecture_id
        d.mkdir(parents=True, exist_ok=True)
        return d

    def delete_lecture(self, lecture_id: str) -> None:
        shutil.rmtree(self.root / "lectures" / lecture_id, ignore_errors=True)

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
        try:
            lecture_id = str(uuid.UUID(lecture_id))
        except (ValueError, TypeError, AttributeError):
            raise UnsafeMediaURI(f"lecture id {lecture_id!r} is not a UUID") from None
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
