"""The error every ingest use case raises for an upload it cannot accept (the routes turn it into
``{"error": {"code", "message", ...}}`` with its status)."""

from __future__ import annotations


class IngestError(Exception):
    """An upload that cannot be accepted. ``status`` is the HTTP status, ``code`` a stable error
    code, ``headers`` any the answer needs (``Retry-After``), ``extra`` more fields of the answer's
    ``error`` object (``offset`` of a ``wrong_offset``)."""

    def __init__(self, message: str, *, status: int = 400, code: str = "invalid_upload",
                 headers: dict | None = None, extra: dict | None = None):
        super().__init__(message)
        self.status = status
        self.code = code
        self.headers = headers or {}
        self.extra = extra or {}
