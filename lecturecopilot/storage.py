"""Media storage: a local folder by default (``<data_dir>/media``), addressed by ``file://`` URIs."""

from __future__ import annotations

import shutil
from pathlib import Path
from urllib.parse import unquote, urlparse

from .settings import Settings


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

    @staticmethod
    def uri(path: Path) -> str:
        return path.resolve().as_uri()

    @staticmethod
    def path_of(uri: str) -> Path:
        """Local path of a ``file://`` URI (or a plain path). Raises ValueError for other schemes."""
        if not uri:
            raise ValueError("empty media URI")
        parsed = urlparse(uri)
        if parsed.scheme in ("", "file"):
            return Path(unquote(parsed.path))
        raise ValueError(f"unsupported media URI scheme: {parsed.scheme!r}")
