"""A service whose output cannot be written (a full disk) keeps running: ``print`` to a full device
ended the process, silently, before ``lecturecopilot.logsafe.install`` (issue 31, item 6)."""

import os
import subprocess
import sys
from pathlib import Path

from lecturecopilot.logsafe import DroppingStream

ROOT = Path(__file__).resolve().parents[2]


def test_a_service_printing_to_a_full_device_keeps_running(tmp_path):
    done = tmp_path / "done"
    code = ("import logging, sys; from lecturecopilot import logsafe; logsafe.install(); "
            "logging.basicConfig(); print('x' * 100000); logging.error('an error'); sys.stderr.buffer.write(b'raw'); "
            "print('again', flush=True); sys.stdout.flush(); "
            f"open({str(done)!r}, 'w').write(str(sys.stderr.lost))")
    with open("/dev/full", "wb") as full:
        r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, stdout=full, stderr=full, timeout=60)
    assert r.returncode == 0 and int(done.read_text()) > 0


def test_what_was_lost_is_said_once_writing_works_again():
    full = os.open("/dev/full", os.O_WRONLY)
    read, write = os.pipe()
    try:
        s = DroppingStream(full)
        assert s.write("lost line\n") == 10 and s.lost == 10 and "space" in s.reason.lower()
        s._fd = write  # the disk has room again
        s.write("next line\n")
        os.close(write)
        out = os.read(read, 4096).decode()
        assert out.startswith("[10 bytes of this service's output could not be written") and out.endswith("next line\n")
        assert s.lost == 0
    finally:
        os.close(full)
        os.close(read)
