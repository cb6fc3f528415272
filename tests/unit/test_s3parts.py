"""The objects of resumable uploads with object storage (services/ingest/s3parts.py) against moto's
S3 server on loopback: one object per whole chunk, none for a cut-off one, the offset as the run of
chunks from byte 0, the finish's local file in order, orphans and removal. The upload's lock (in
Postgres) is exercised through the stack in tests/integration/test_object_storage.py."""

from __future__ import annotations

import io
import uuid

import pytest

from lecturecopilot.objectstore import S3MediaStore
from services.ingest.errors import IngestError
from services.ingest.s3parts import S3Part, S3Parts


@pytest.fixture()
def parts(s3, tmp_path):
    return S3Parts(S3MediaStore(tmp_path / "media", f"s3://{s3.bucket}/p", client=s3.client()), records=None)


def test_chunks_are_objects_and_the_finish_reads_them_in_order(parts, s3):
    uid = str(uuid.uuid4())
    row = {"id": uid, "size": 25, "state": "receiving"}
    parts.create(uid)
    assert s3.keys(f"p/uploads/{uid}/") == [f"p/uploads/{uid}/open"] and parts.offset(row) == 0
    part = S3Part(parts, uid, parts._chunks(uid))
    assert part.receive(io.BytesIO(b"a" * 10), 0, 10) == 10
    with pytest.raises(IngestError) as cut:  # a body shorter than its range: nothing is kept
        part.receive(io.BytesIO(b"b" * 4), 10, 10)
    assert cut.value.code == "size_mismatch"
    assert parts.offset(row) == 10 and part.size() == 10 and len(s3.keys(f"p/uploads/{uid}/")) == 2
    part.receive(io.BytesIO(b"b" * 10), 10, 10)
    # an object past a gap (never written by ingest) does not move the offset
    s3.client().put_object(Bucket=s3.bucket, Key=f"p/uploads/{uid}/{22:020d}", Body=b"zzz")
    assert parts.offset(row) == 20
    part = S3Part(parts, uid, parts._chunks(uid))
    assert part.local_file() is not None and parts.local_path(uid).read_bytes() == b"a" * 10 + b"b" * 10
    part.receive(io.BytesIO(b"c" * 5), 20, 5)
    assert parts.offset(row) == 25 and part.size() == 25
    assert part.local_file().read_bytes() == b"a" * 10 + b"b" * 10 + b"c" * 5
    assert not list(parts.local_dir().glob("*.chunk"))  # the spooled chunks went
    part.discard_local()
    assert not parts.local_path(uid).exists()


def test_orphans_and_removal(parts, s3):
    kept, orphan = str(uuid.uuid4()), str(uuid.uuid4())
    for uid in (kept, orphan):
        parts.create(uid)
        S3Part(parts, uid, []).receive(io.BytesIO(b"x" * 3), 0, 3)
    found = parts.orphans({kept}, 0.0)
    assert orphan in found and kept not in found
    assert orphan not in parts.orphans(set(), 3600.0)  # young ones are spared
    parts.remove(orphan)
    assert s3.keys(f"p/uploads/{orphan}/") == [] and len(s3.keys(f"p/uploads/{kept}/")) == 2
    # an upload whose objects are gone: 0 while receiving, all of it once it was finishing
    assert parts.offset({"id": orphan, "size": 9, "state": "receiving"}) == 0
    assert parts.offset({"id": orphan, "size": 9, "state": "finishing"}) == 9
    assert parts._chunks(orphan) is None


def test_a_store_or_database_out_of_reach_is_a_503(s3, tmp_path):
    """Review finding 12: the marker PUT, the listing and the lock answer 503 with a code, not 500."""
    from psycopg_pool import ConnectionPool

    from services.ingest.store import IngestStore

    gone = S3Parts(S3MediaStore(tmp_path / "media", "s3://no-such-bucket/p", client=s3.client()), records=None)
    uid = str(uuid.uuid4())
    with pytest.raises(IngestError) as put:
        gone.create(uid)
    assert (put.value.status, put.value.code) == (503, "store_unavailable") and put.value.headers["Retry-After"]
    with pytest.raises(IngestError) as listed:
        gone.offset({"id": uid, "size": 9, "state": "receiving"})
    assert (listed.value.status, listed.value.code) == (503, "store_unavailable")
    # Postgres on a port nothing listens on (1): connection refused, as for a database that is down
    pool = ConnectionPool("postgresql://lc@127.0.0.1:1/lc?connect_timeout=3", open=False)
    parts = S3Parts(S3MediaStore(tmp_path / "media", f"s3://{s3.bucket}/p", client=s3.client()), IngestStore(pool))
    with pytest.raises(IngestError) as locked:
        with parts.locked(uid):
            pass
    assert (locked.value.status, locked.value.code) == (503, "database_unavailable")


def test_a_chunk_under_the_minimum_is_refused_unless_it_is_the_last():
    """Review finding 2: with object storage every chunk but the last has at least the minimum."""
    from werkzeug.http import parse_content_range_header

    from services.ingest.uploadpolicy import check_chunk_size

    def check(rng: str, least: int) -> None:
        check_chunk_size(parse_content_range_header(rng), 100, least)

    with pytest.raises(IngestError) as small:
        check("bytes 0-9/100", 20)
    assert small.value.status == 400 and small.value.code == "chunk_too_small"
    assert "at least 20 bytes" in str(small.value) and "has 10" in str(small.value)
    with pytest.raises(IngestError) as mib:
        check("bytes 0-9/100", 5 * 1024**2)
    assert "(5 MiB)" in str(mib.value)
    check("bytes 0-19/100", 20)  # exactly the minimum
    check("bytes 90-99/100", 20)  # the last chunk may be shorter
    check("bytes 0-0/100", 0)  # no minimum (the local .part path)


def test_the_local_part_of_a_removed_upload_has_no_file(tmp_path):
    """Review finding 13: a .part file removed while its upload is locked (its course deleted
    mid-finish) gives no local file, so the finish answers 410 upload_lost, as before object storage."""
    from lecturecopilot.storage import MediaStore
    from services.ingest.partfiles import LocalParts

    local = LocalParts(MediaStore(tmp_path / "media"))
    uid = str(uuid.uuid4())
    local.create(uid)
    assert local.min_chunk(None) == 0
    with local.locked(uid) as part:
        part.receive(io.BytesIO(b"x" * 7), 0, 7)
        assert part.local_file() is not None and part.local_file().read_bytes() == b"x" * 7
        local.remove(uid)  # what deleting the course does, without the upload's lock
        assert part.local_file() is None
