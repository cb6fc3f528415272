"""One client that keeps many half-sent requests open, and how long everyone else waits.

    .venv/bin/python -m bench.slow_clients [--connections 20 50 300] [--seconds 20] [--caps 6 0] [--close-rates 60] [--keep-floods 4]

An ephemeral stack is started; for each cap in ``--caps`` a gateway runs beside it with
``LC_MAX_WAITING_PER_CLIENT`` at that value (0: no cap, and no cap on open connections either, as before
the caps existed; otherwise ``LC_MAX_CONNECTIONS_PER_CLIENT`` is its default, 500). For each count
N in ``--connections``, one attacker (loopback address 127.0.0.2, no token) holds N connections
that have each sent a request line and part of a header and then nothing more, reopening each one
the gateway drops (a 429, or the ``LC_HEADER_TIMEOUT_S`` deadline). Meanwhile another client
(127.0.0.1) asks ``GET /healthz`` once every 0.5 s for ``--seconds``; reported per (cap, N): the
median and the slowest of those waits (a request not answered within 60 s counts as 60 s), and how
many connections the attacker had opened in all. A second attack (``--close-rates``): the attacker
sends that many whole ``Connection: close`` requests a second and never reads or closes the
connections (each answer's close used to wait 0.5 s for the client, uncounted). A third
(``--keep-floods``): that many threads open connections as fast as they can, each with one whole
keep-alive request, never read or closed (gunicorn accepts nothing while it holds 1000).

Appends to ``bench/results/slow_clients.json``. Wall-clock on a shared 2-core machine: read the
ratios between caps measured in one run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import requests

from bench.procs import spawn, stop

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "results" / "slow_clients.json"
ATTACKER = "127.0.0.2"
HALF = b"GET /api/courses HTTP/1.1\r\nHost: x\r\nX-Slow: "
WHOLE = b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
GIVE_UP_S = 60.0


def _attack(port: int, n: int, stop_at: threading.Event, opened: list[int]) -> list[threading.Thread]:
    """N threads, each keeping one half-sent request open on ``port`` from ATTACKER until ``stop_at``."""

    def hold():
        while not stop_at.is_set():
            try:
                s = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(ATTACKER, 0))
            except OSError:
                stop_at.wait(0.1)
                continue
            opened[0] += 1
            try:
                s.sendall(HALF)
                s.settimeout(0.5)
                while not stop_at.is_set():  # until the gateway answers (429) or drops it
                    try:
                        if not s.recv(4096):
                            break
                    except socket.timeout:
                        continue
                    except OSError:
                        break
            except OSError:
                pass
            finally:
                s.close()

    threads = [threading.Thread(target=hold, daemon=True) for _ in range(n)]
    for t in threads:
        t.start()
    return threads


def _never_close(port: int, rate: int, stop_at: threading.Event, opened: list[int]) -> list[threading.Thread]:
    """One thread sending ``rate`` whole ``Connection: close`` requests a second from ATTACKER, each on
    a connection it never reads or closes (up to 1000 at once, all closed at ``stop_at``)."""

    def flood():
        socks = []
        while not stop_at.is_set():
            if len(socks) < 1000:
                try:
                    s = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(ATTACKER, 0))
                    s.sendall(WHOLE)
                    socks.append(s)
                    opened[0] += 1
                except OSError:
                    pass
            stop_at.wait(1 / rate)
        for s in socks:
            s.close()

    t = threading.Thread(target=flood, daemon=True)
    t.start()
    return [t]


def _kept(port: int, n: int, stop_at: threading.Event, opened: list[int]) -> list[threading.Thread]:
    """``n`` threads opening connections from ATTACKER as fast as they can, each with one whole
    keep-alive request, never read; each thread keeps its last 1000 open (the attacker and the
    other client share this machine's 28k ephemeral ports: 20k kept sockets left the other client's
    connect nothing to bind) and closes all at ``stop_at``."""
    keep = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"

    def flood():
        socks = []
        while not stop_at.is_set():
            try:
                s = socket.create_connection(("127.0.0.1", port), timeout=2, source_address=(ATTACKER, 0))
                s.sendall(keep)
                socks.append(s)
                opened[0] += 1
            except OSError:
                stop_at.wait(0.01)
            if len(socks) > 1000:  # this machine's ports are the other client's too: keep at most 1000 a thread
                socks.pop(0).close()
        for s in socks:
            s.close()

    threads = [threading.Thread(target=flood, daemon=True) for _ in range(n)]
    for t in threads:
        t.start()
    return threads


ATTACKS = {"headers": _attack, "close": None, "keep": _kept}


def measure(port: int, n: int, seconds: float, attack: str = "headers") -> dict:
    """The other client's /healthz waits (seconds) while one attacker holds ``n`` half-sent requests
    (``attack="headers"``), sends ``n`` closing requests a second it never closes (``"close"``), or
    opens kept connections from ``n`` threads as fast as it can (``"keep"``)."""
    stop_at, opened = threading.Event(), [0]
    threads = (ATTACKS[attack] or _never_close)(port, n, stop_at, opened)
    time.sleep(2.0)  # the attack is in place
    waits, failures = [], []
    t_end = time.monotonic() + seconds
    while time.monotonic() < t_end:
        t0 = time.monotonic()
        try:
            ok = requests.get(f"http://127.0.0.1:{port}/healthz", timeout=GIVE_UP_S).status_code == 200
        except requests.RequestException as e:
            ok = False
            failures.append(f"{type(e).__name__} after {time.monotonic() - t0:.1f} s")
        waits.append(time.monotonic() - t0 if ok else GIVE_UP_S)
        time.sleep(0.5)
    stop_at.set()
    for t in threads:
        t.join(10)
    return {"attack": attack, "connections": n, "healthz_p50_s": round(statistics.median(waits), 3),
            "healthz_max_s": round(max(waits), 3), "healthz_samples": len(waits), "healthz_failed": failures, "attacker_connections": opened[0]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--connections", type=int, nargs="*", default=[20, 50, 300])
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--caps", type=int, nargs="+", default=[6, 0],
                    help="LC_MAX_WAITING_PER_CLIENT values; 0 also sets LC_MAX_CONNECTIONS_PER_CLIENT=0")
    ap.add_argument("--close-rates", type=int, nargs="*", default=[60],
                    help="closing requests a second the attacker sends and never closes (second attack)")
    ap.add_argument("--keep-floods", type=int, nargs="*", default=[4],
                    help="threads opening kept connections as fast as they can (third attack)")
    args = ap.parse_args(argv)
    os.environ.setdefault("LC_TEST_NATS", "embedded")  # never share the machine's NATS
    from lecturecopilot_ops.stack import _free_port, ephemeral, service_env

    rows = []
    with tempfile.TemporaryDirectory(prefix="lc-slow-clients-") as tmp_s, ephemeral(Path(tmp_s) / "stack") as eph:
        base_env = service_env(eph.settings)
        for cap in args.caps:
            port = _free_port()
            env = {**base_env, "LC_GATEWAY_PORT": str(port), "LC_MAX_WAITING_PER_CLIENT": str(cap),
                   **({"LC_MAX_CONNECTIONS_PER_CLIENT": "0"} if cap == 0 else {})}  # 0: as before either cap
            gw = spawn("services.gateway", env, Path(tmp_s) / f"gateway-{port}.log", f"http://127.0.0.1:{port}/readyz")
            try:
                for attack, counts in (("headers", args.connections), ("close", args.close_rates),
                                       ("keep", args.keep_floods)):
                    for n in counts:
                        row = {"max_waiting_per_client": cap, **measure(port, n, args.seconds, attack)}
                        print(json.dumps(row), flush=True)
                        rows.append(row)
            finally:
                stop([gw])
    result = {"date": time.strftime("%Y-%m-%d"), "machine": f"{os.cpu_count()} cores shared, {platform.machine()}",
              "command": "python -m bench.slow_clients " + " ".join(argv if argv is not None else sys.argv[1:]),
              "header_timeout_s": 10.0, "rows": rows}
    runs = json.loads(OUT.read_text()) if OUT.exists() else []
    OUT.write_text(json.dumps([*runs, result], indent=2) + "\n")
    print("| LC_MAX_WAITING_PER_CLIENT | attack | /healthz p50 | slowest |")
    print("|---|---|---|---|")
    for r in rows:
        what = {"headers": f"{r['connections']} half-sent requests",
                "close": f"{r['connections']} closing requests/s never closed",
                "keep": f"kept connections opened by {r['connections']} threads"}[r["attack"]]
        print(f"| {r['max_waiting_per_client'] or 'no cap'} | {what} | {r['healthz_p50_s']:.3f} s "
              f"| {r['healthz_max_s']:.3f} s |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
