"""Shared fixtures. Integration tests run the real stack: the machine's NATS (JetStream) and
Postgres when they answer on 127.0.0.1 (as on CI), else the embedded ones; real ffmpeg,
real faster-whisper (tiny.en from its package), real embeddings, embedded Qdrant.

Each test session gets its own Postgres database and its own JetStream stream, both removed
at the end, and its own free ports, so it never touches a running demo.
"""

from __future__ import annotations

import asyncio
import os
import socket
import time
import uuid
from pathlib import Path

import psycopg
import pytest
import requests

ROOT = Path(__file__).resolve().parent.parent
ADMIN = "test-admin-" + uuid.uuid4().hex[:8]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _reachable(host: str, port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex((host, port)) == 0


async def _drop_stream(url: str, name: str) -> None:
    import nats

    nc = await nats.connect(url)
    try:
        js = nc.jetstream()
        for info in await js.streams_info():
            subjects = info.config.subjects or []
            if info.config.name == name or any(s.startswith("lecture.") for s in subjects):
                await js.delete_stream(info.config.name)
    finally:
        await nc.close()


class Stack:
    """Handles to a running stack: base URL, admin headers, settings, a DB connection maker."""

    def __init__(self, settings, base: str, db_url: str, nats_url: str):
        self.settings = settings
        self.base = base
        self.db_url = db_url
        self.nats_url = nats_url
        self.admin = {"Authorization": f"Bearer {ADMIN}"}

    def db(self):
        return psycopg.connect(self.db_url, autocommit=True)

    def create_course(self, title: str) -> str:
        r = requests.post(f"{self.base}/api/courses", json={"title": title}, headers=self.admin, timeout=10)
        assert r.status_code == 201, r.text
        return r.json()["id"]

    def wait_ready(self, lecture_id: str, timeout_s: float = 300) -> dict:
        deadline = time.time() + timeout_s
        while time.time() < deadline:
            st = requests.get(f"{self.base}/api/lectures/{lecture_id}", timeout=10).json()
            if st["status"] in ("ready", "failed"):
                return st
            time.sleep(0.5)
        raise AssertionError(f"lecture {lecture_id} not ready after {timeout_s} s: {st}")


@pytest.fixture(scope="session")
def stack(tmp_path_factory):
    from lecturecopilot import stack as stack_mod
    from lecturecopilot.settings import Settings

    data_dir = tmp_path_factory.mktemp("lc-data")
    dbname = f"lc_test_{uuid.uuid4().hex[:10]}"
    admin_url = None
    if _reachable("127.0.0.1", 5432):
        admin_url = "postgresql://postgres@127.0.0.1:5432/postgres"
        with psycopg.connect(admin_url, autocommit=True) as c:
            c.execute(f'CREATE DATABASE "{dbname}"')
        db_url = f"postgresql://postgres@127.0.0.1:5432/{dbname}"
    else:
        db_url = None  # embedded
    nats_url = "nats://127.0.0.1:4222" if _reachable("127.0.0.1", 4222) else None
    stream = "LC_TEST"
    env = {
        "LC_DATA_DIR": str(data_dir), "LC_STREAM": stream, "LC_WHISPER_MODEL": "tiny.en",
        "LC_ADMIN_TOKEN": ADMIN, "LC_GATEWAY_PORT": str(_free_port()), "LC_INGEST_PORT": str(_free_port()),
        "LC_ASK_PORT": str(_free_port()), "LC_HEALTH_PORT_TRANSCRIBE": str(_free_port()),
        "LC_HEALTH_PORT_INDEX": str(_free_port()), "LC_HEALTH_PORT_ASK": str(_free_port()),
        "LC_EMBEDDED_NATS_PORT": str(_free_port()), "LC_ACK_WAIT_S": "20", "LC_MAX_DELIVER": "3",
    }
    if db_url:
        env["DATABASE_URL"] = db_url
    if nats_url:
        env["NATS_URL"] = nats_url
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    settings = Settings()
    settings.data_dir = settings.data_dir.resolve()
    from lecturecopilot import embedded

    resolved_nats = embedded.nats_url(settings)
    asyncio.run(_drop_stream(resolved_nats, stream))
    try:
        stack_mod.up(settings, quiet=True, timeout_s=240)
        yield Stack(settings, f"http://127.0.0.1:{settings.gateway_port}", embedded.database_url(settings),
                    resolved_nats)
    finally:
        stack_mod.down(settings)
        asyncio.run(_drop_stream(resolved_nats, stream))
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        if admin_url:
            with psycopg.connect(admin_url, autocommit=True) as c:
                c.execute(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')


COUNTING = ("Counting sort is a linear time sorting algorithm for small integer keys. "
            "It counts how many times each key appears, using an array of counters. "
            "Then it walks through the counters in order and writes the keys back out. "
            "Its running time is order n plus u, where u is the size of the key range.")
MERGING = ("Merge sort is a divide and conquer algorithm. "
           "It splits the array into two halves and sorts each half recursively. "
           "Then it merges the two sorted halves with two pointers, always taking the smaller front element. "
           "Merge sort runs in order n log n time.")


@pytest.fixture(scope="session")
def synth_video(tmp_path_factory):
    """A two-part narrated slide video (espeak-ng + Pillow + ffmpeg, see synth.py):
    part 0 explains counting sort, part 1 merge sort. Returns (SynthResult, parts)."""
    from lecturecopilot.synth import Part, synth_lecture

    parts = [Part("Counting sort", "Linear time for small integer keys", COUNTING),
             Part("Merge sort", "Divide and conquer", MERGING)]
    out = tmp_path_factory.mktemp("video") / "lecture.mp4"
    return synth_lecture(parts, out), parts
