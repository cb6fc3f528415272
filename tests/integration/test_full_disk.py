"""A full disk (issue 31, item 6), against the session's real stack: a plain (multipart) upload keeps
the free-space reserve a resumable one keeps (5 were accepted down to 28 MB free), and the gateway's
``/readyz`` says whether ask answers (it said 200 while every question was a 503). The disk is not
filled: a second ingest is given a reserve larger than the free space (``LC_UPLOAD_DISK_RESERVE_BYTES``),
a second gateway an ask that does not answer. The supervisor that starts an ended service again, and a
log that cannot be written, are in ``test_ops_stack.py``."""

from __future__ import annotations

import shutil

import pytest
import requests

from lecturecopilot.netports import free_port
from web_helpers import VTT, Gateway, upload_captions

pytestmark = pytest.mark.slow


def _error(r: requests.Response, status: int, code: str) -> str:
    assert r.status_code == status, r.text
    assert r.json()["error"]["code"] == code, r.text
    return r.json()["error"]["message"]


def test_a_plain_upload_keeps_the_reserve_a_resumable_one_keeps(stack, synth_video):
    free = shutil.disk_usage(stack.settings.media_dir).free
    reserve = {"LC_UPLOAD_DISK_RESERVE_BYTES": str(free + 50 * 1024**3)}  # more than the disk has free
    ingest = Gateway(stack, reserve, service="ingest")
    gw = Gateway(stack, {**reserve, "LC_INGEST_PORT": str(ingest.port)})
    course = stack.create_course("No room left")
    try:
        # the resumable start refused it already
        start = requests.post(f"{gw.base}/api/courses/{course}/uploads", headers=stack.admin, timeout=10,
                              json={"filename": "lecture.mp4", "size": 1000})
        _error(start, 507, "insufficient_storage")
        # a plain upload through the gateway: refused before its body is relayed
        assert "no room" in _error(upload_captions(gw.base, course, headers=stack.admin), 507, "insufficient_storage")
        res, _ = synth_video
        with open(res.path, "rb") as f:
            video = requests.post(f"{gw.base}/api/courses/{course}/lectures", headers=stack.admin, timeout=120,
                                  files={"video": ("lecture.mp4", f, "video/mp4")}, data={"title": "Sorting"})
        _error(video, 507, "insufficient_storage")
        # and sent to ingest itself, as another client of its API would
        direct = requests.post(f"{ingest.base}/v1/courses/{course}/lectures", timeout=60,
                               files={"captions": ("heaps.vtt", VTT.encode(), "text/vtt")}, data={"title": "Heaps"})
        _error(direct, 507, "insufficient_storage")
        assert requests.get(f"{stack.base}/api/courses/{course}", timeout=10).json()["lectures"] == []
        assert not list((stack.settings.media_dir / "incoming").glob("form-*")), "a refused upload left its bytes"
        # the same upload with the reserve the session's stack keeps is taken
        assert upload_captions(stack.base, course, headers=stack.admin).status_code == 202
    finally:
        gw.close()
        ingest.close()
        requests.delete(f"{stack.base}/api/courses/{course}", headers=stack.admin, timeout=60)


def test_the_gateway_is_not_ready_while_ask_does_not_answer(stack):
    gw = Gateway(stack, {"LC_ASK_TARGET_URI": f"ipv4:127.0.0.1:{free_port()}"})  # nothing answers there
    try:
        assert requests.get(f"{gw.base}/healthz", timeout=10).status_code == 200  # alive: not to be restarted
        ready = requests.get(f"{gw.base}/readyz", timeout=10)
        assert "answering service" in _error(ready, 503, "ask_unavailable")
        assert ready.headers.get("Retry-After") == "5"
    finally:
        gw.close()
    got = requests.get(f"{stack.base}/readyz", timeout=10)  # with its ask: ready, and says which process it is
    assert got.status_code == 200, got.text
    assert got.headers.get("LC-Pid") == (stack.settings.data_dir / "run" / "gateway.pid").read_text()
