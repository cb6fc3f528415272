"""A plain upload's files spool in the media store and keep the disk reserve while they arrive
(``services/ingest/spool.py``, issue 31, item 6)."""

import errno
import os
import time
from collections import namedtuple

import pytest

from services.ingest import spool
from services.ingest.errors import IngestError

Usage = namedtuple("Usage", "total used free")


def test_a_spool_that_would_eat_into_the_reserve_is_refused_and_removed(tmp_path, monkeypatch):
    free = [10 * spool.CHECK_BYTES]
    monkeypatch.setattr(spool.shutil, "disk_usage", lambda _: Usage(0, 0, free[0]))
    f = spool.GuardedSpool(tmp_path, reserve=2 * spool.CHECK_BYTES)
    name = f.path
    assert name.parent == tmp_path / "incoming" and name.exists()
    block = b"x" * (1024 * 1024)
    for _ in range(2 * spool.CHECK_BYTES // len(block)):  # checked, and room left
        f.write(block)
    free[0] = 2 * spool.CHECK_BYTES  # something else filled the disk meanwhile
    with pytest.raises(IngestError) as e:
        for _ in range(spool.CHECK_BYTES // len(block)):
            f.write(block)
    assert e.value.status == 507 and e.value.code == "insufficient_storage"
    assert not name.exists()


def test_a_full_disk_while_spooling_is_a_507(tmp_path):
    f = spool.GuardedSpool(tmp_path, reserve=0)

    class Full:
        def write(self, data):
            raise OSError(errno.ENOSPC, "No space left on device")

        def close(self):
            pass

    f.file = Full()
    with pytest.raises(IngestError) as e:
        f.write(b"x")
    assert e.value.status == 507


def test_stale_spools_are_removed(tmp_path):
    d = spool.incoming_dir(tmp_path)
    old, young = d / "form-old", d / "form-young"
    old.write_bytes(b"x")
    young.write_bytes(b"x")
    os.utime(old, (time.time() - 7200, time.time() - 7200))
    assert spool.remove_stale(tmp_path, 3600) == 1
    assert not old.exists() and young.exists()
