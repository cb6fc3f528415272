"""The backend of resumable uploads for a media store, picked where both are known: the local
``.part`` files (:mod:`.partfiles`) or one object per chunk (:mod:`.s3parts`, which builds on
:mod:`.partfiles`)."""

from __future__ import annotations

from lecturecopilot.objectstore import S3MediaStore
from lecturecopilot.storage import MediaStore

from .partfiles import LocalParts
from .s3parts import S3Parts


def parts_of(store: MediaStore, records):
    """The backend of ``store``'s resumable uploads: :class:`~.s3parts.S3Parts` for an object
    store (``records``, the :class:`~.store.IngestStore`, holds its locks), else
    :class:`~.partfiles.LocalParts`."""
    if isinstance(store, S3MediaStore):
        return S3Parts(store, records)
    return LocalParts(store)
