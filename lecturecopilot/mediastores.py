"""The media store the settings select, made where both backends are known: the local folder
(:class:`~lecturecopilot.storage.MediaStore`) or an S3-compatible store
(:class:`~lecturecopilot.objectstore.S3MediaStore`, a subclass of it). The base class does not
build its subclass: this module imports both, and neither imports it.
"""

from __future__ import annotations

from .objectstore import CacheLimits, S3MediaStore
from .settings import Settings
from .storage import MediaStore


def media_store(settings: Settings) -> MediaStore:
    """The store ``settings`` select: :class:`S3MediaStore` when ``media_url`` is an ``s3://`` URL
    (``LC_MEDIA_URL``; its cache ``media_cache_s`` seconds / ``media_cache_bytes``, presigned video
    URLs valid ``video_url_s`` seconds), else the local folder ``media_dir``. Raises ValueError for a
    ``media_url`` of another scheme."""
    if settings.media_url:
        return S3MediaStore(settings.media_dir, settings.media_url, path_style=settings.media_path_style,
                            cache=CacheLimits(settings.media_cache_s, settings.media_cache_bytes),
                            public_endpoint=settings.media_public_endpoint, video_url_s=settings.video_url_s)
    return MediaStore(settings.media_dir)
