"""The bus's client options: the server list of ``NATS_URL``, bounded publish retries, and the
drift between a durable's live config and the desired one (the cluster behaviour itself is in
tests/integration/test_nats_cluster.py)."""

from __future__ import annotations

import asyncio
import time

import nats.errors
import nats.js.errors
import pytest
from nats.js.api import AckPolicy, ConsumerConfig

from lecturecopilot import bus
from lecturecopilot.settings import Settings


def test_nats_url_lists_servers():
    assert bus.servers("nats://a:4222") == ["nats://a:4222"]
    assert bus.servers(" nats://a:4222, nats://b:4223 ,,") == ["nats://a:4222", "nats://b:4223"]
    with pytest.raises(ValueError):
        bus.servers(" , ")


def test_clients_reconnect_forever_with_the_configured_wait():
    opts = bus.connect_options(Settings(_env_file=None, nats_reconnect_wait_s=0.5))
    assert opts["max_reconnect_attempts"] == -1 and opts["allow_reconnect"] is True
    assert opts["reconnect_time_wait"] == 0.5


def test_a_publish_without_an_answer_is_retried_until_it_goes_through():
    calls = []

    async def publish():
        calls.append(time.monotonic())
        if len(calls) < 3:
            raise nats.errors.TimeoutError  # no stream leader yet
        return "ack"

    assert asyncio.run(bus.publish_retrying(publish, retry_s=10)) == "ack"
    assert len(calls) == 3 and calls[1] - calls[0] >= 0.15  # with a wait in between


def test_retries_are_bounded_and_refusals_are_not_retried():
    calls = []

    async def never():
        calls.append(1)
        raise nats.js.errors.NoStreamResponseError

    t0 = time.monotonic()
    with pytest.raises(nats.js.errors.NoStreamResponseError):
        asyncio.run(bus.publish_retrying(never, retry_s=1.0))
    assert 1.0 <= time.monotonic() - t0 < 4.0 and len(calls) >= 2
    calls.clear()

    async def refused():
        calls.append(1)
        raise nats.js.errors.BadRequestError(code=400, description="wrong stream")

    with pytest.raises(nats.js.errors.BadRequestError):
        asyncio.run(bus.publish_retrying(refused, retry_s=10))
    assert len(calls) == 1


def test_consumer_drift_names_the_fields_that_differ():
    desired = ConsumerConfig(durable_name="transcribe", ack_wait=60.0, max_deliver=6, filter_subject=bus.UPLOADED)
    live = ConsumerConfig(durable_name="transcribe", ack_wait=30.0, max_deliver=6, filter_subject=bus.UPLOADED,
                          ack_policy=AckPolicy.NONE, max_ack_pending=1000)
    assert bus.consumer_drift(live, desired) == {"ack_wait": (30.0, 60.0),
                                                 "ack_policy": (AckPolicy.NONE, AckPolicy.EXPLICIT)}
    assert bus.consumer_drift(desired.evolve(ack_wait=60.0000001, max_ack_pending=1000), desired) == {}
