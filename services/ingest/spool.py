"""Where a plain (multipart) upload's files land while the form is read, and the disk reserve they keep.

Werkzeug spools a form's file parts to the system's temporary folder; this one (the request's
``_get_file_stream``, :class:`~.web.StrictFormRequest`) spools them to ``<media>/incoming/``, on the media
store's file system, so that

- the reserve a resumable upload keeps (``LC_UPLOAD_DISK_RESERVE_BYTES``, :mod:`.uploadpolicy`) is kept
  here too: every :data:`CHECK_BYTES` written the free space is looked at, and an upload that would eat
  into the reserve is refused (507 ``insufficient_storage``) and its bytes removed; a disk that fills
  anyway (ENOSPC) is the same 507, not a 500;
- the spooled file becomes the lecture's file by a hard link (:attr:`GuardedSpool.path`), not a second
  copy of up to 2 GB.

A spool is removed when its request ends; one left by a killed process is removed by the sweeper
(:func:`remove_stale`).
"""

from __future__ import annotations

import errno
import shutil
import tempfile
import time
from pathlib import Path

from .errors import IngestError

CHECK_BYTES = 8 * 1024 * 1024  # free space is looked at after every this many bytes spooled
PREFIX = "form-"


def no_room() -> IngestError:
    """The error for a media store that ran out of space, or whose reserve an upload would eat (507)."""
    return IngestError("The server ran out of room for uploads; try again later or tell the operator.",
                       status=507, code="insufficient_storage")


def incoming_dir(root: Path) -> Path:
    """``root/incoming`` (created if missing): where form files are spooled."""
    d = root / "incoming"
    d.mkdir(parents=True, exist_ok=True)
    return d


class GuardedSpool:
    """A named temporary file in ``root/incoming`` that refuses (:func:`no_room`) a write leaving less
    than ``reserve`` bytes free on ``root``'s file system (checked every :data:`CHECK_BYTES`), or
    failing with ENOSPC. Everything else is the file's."""

    def __init__(self, root: Path, reserve: int):
        self._root = root
        self._reserve = reserve
        self._since = 0
        self.file = tempfile.NamedTemporaryFile(prefix=PREFIX, dir=incoming_dir(root))

    def write(self, data) -> int:
        self._since += len(data)
        if self._since >= CHECK_BYTES:
            self._since = 0
            if shutil.disk_usage(self._root).free - len(data) < self._reserve:
                self.close()
                raise no_room()
        try:
            return self.file.write(data)
        except OSError as e:
            if e.errno == errno.ENOSPC:
                self.close()
                raise no_room() from None
            raise

    @property
    def path(self) -> Path:
        """The spooled file, all of it written (to be linked into the lecture's folder)."""
        self.file.flush()
        return Path(self.file.name)

    def __getattr__(self, name):
        return getattr(self.file, name)

    def __iter__(self):
        return iter(self.file)


def remove_stale(root: Path, older_than_s: float) -> int:
    """Removes spooled files untouched for ``older_than_s`` seconds (a process killed mid-upload
    leaves its spool); returns how many."""
    d = root / "incoming"
    removed = 0
    now = time.time()
    for f in d.glob(f"{PREFIX}*") if d.is_dir() else ():
        try:
            if now - f.stat().st_mtime > older_than_s:
                f.unlink()
                removed += 1
        except OSError:
            pass
    return removed
