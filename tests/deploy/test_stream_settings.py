"""The settings the Kubernetes manifests rely on: stream replicas and the workers' graceful timeout."""

from __future__ import annotations

import asyncio

from nats.js.errors import NotFoundError

from lecturecopilot import bus
from lecturecopilot.settings import Settings


class FakeJetStream:
    """Records the stream configs it is asked to create or update."""

    def __init__(self, exists: bool):
        self.exists = exists
        self.added, self.updated = [], []

    async def stream_info(self, name):
        if not self.exists:
            raise NotFoundError()
        return object()

    async def add_stream(self, cfg):
        self.added.append(cfg)

    async def update_stream(self, cfg):
        self.updated.append(cfg)


def test_new_stream_gets_the_configured_replicas():
    js = FakeJetStream(exists=False)
    asyncio.run(bus.ensure_stream(js, "LECTURES", replicas=3))
    assert [c.num_replicas for c in js.added] == [3]
    assert js.added[0].subjects == bus.STREAM_SUBJECTS


def test_existing_stream_is_updated_to_the_configured_replicas():
    js = FakeJetStream(exists=True)
    asyncio.run(bus.ensure_stream(js, "LECTURES", replicas=3))
    assert [c.num_replicas for c in js.updated] == [3]


def test_replicas_and_graceful_timeout_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("LC_STREAM_REPLICAS", "3")
    monkeypatch.setenv("LC_GRACEFUL_TIMEOUT_S", "585")
    s = Settings()
    assert (s.stream_replicas, s.graceful_timeout_s) == (3, 585.0)
    monkeypatch.delenv("LC_STREAM_REPLICAS")
    monkeypatch.delenv("LC_GRACEFUL_TIMEOUT_S")
    assert (Settings().stream_replicas, Settings().graceful_timeout_s) == (1, 15.0)


def test_workers_wait_the_configured_graceful_timeout():
    from lecturecopilot.worker import build_app

    _, broker = build_app(Settings(graceful_timeout_s=42), None, "nats://127.0.0.1:1", [])
    assert broker.config.graceful_timeout == 42.0
