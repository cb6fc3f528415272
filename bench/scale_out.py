"""Horizontal scale on one machine: ask replicas behind one gateway, and pipeline workers sharing
one JetStream stream.

    .venv/bin/python -m bench.scale_out --asks 200 --concurrency 4 --replicas 1 2
    .venv/bin/python -m bench.scale_out --skip-ask --workers 1 2 4 --lectures 4 --minutes 2

**Ask.** The MIT 6.006 dev lectures are loaded through the captions import into an ephemeral
stack. For each replica count R, R ask processes run (the stack's own plus R-1 more on free
ports, each with its own embedded search shard synced from Postgres) and a second gateway is
started with ``LC_ASK_TARGET_URI=ipv4:<all R addresses>`` (gRPC round_robin: every call goes to
the next replica). ``--asks`` dev questions go through that gateway's HTTP API,
``--concurrency`` at a time; reported: questions/s, p50/p95 latency, and the CPU seconds each
ask process spent (from /proc), which shows whether the calls were spread.

**Workers.** A generated lecture (espeak-ng narration of MIT 6.006 transcript text with slides)
is uploaded ``--lectures`` times at once with W transcribe and W index processes (the extra
ones consume the same durable consumers). Reported per W: makespan, lectures per hour, which
transcribe process handled each lecture (from each process's log), and whether any lecture was
processed twice (``transcript_words``/``segments`` rows duplicated, more than one
``lecture.indexed`` processed by the notice consumer).

Appends to ``bench/results/scale_out.json``. Wall-clock on a shared 2-core machine: more
processes than cores cannot add throughput for CPU-bound work; read the ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
import requests

from bench.procs import spawn, stop
from bench.service_resources import cpu_s

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "results" / "scale_out.json"


def bench_ask(eph, replicas: list[int], asks: int, concurrency: int, logs: Path) -> list[dict]:
    """Questions/s and latency through a gateway in front of R ask replicas (see module doc)."""
    from evals.retrieval import load_dev_set, upload_course
    from lecturecopilot_ops.stack import _free_port, service_env

    by_lecture, titles, questions = load_dev_set()
    course_id, _ = upload_course(eph, "MIT 6.006 (scale-out bench)", by_lecture, titles)
    texts = [q["question"] for q in questions]
    base_env = service_env(eph.settings)
    own_ask = int((eph.settings.data_dir / "run" / "ask.pid").read_text())
    out = []
    for r in replicas:
        extra: list[subprocess.Popen] = []
        addrs = [f"127.0.0.1:{eph.settings.ask_port}"]
        pids = [own_ask]
        try:
            for i in range(r - 1):
                port, health = _free_port(), _free_port()
                env = {**base_env, "LC_ASK_PORT": str(port), "LC_HEALTH_PORT_ASK": str(health)}
                extra.append(spawn("services.ask", env, logs / f"ask-extra-{port}.log",
                                    f"http://127.0.0.1:{health}/healthz"))
                addrs.append(f"127.0.0.1:{port}")
                pids.append(extra[-1].pid)
            gw_port = _free_port()
            env = {**base_env, "LC_GATEWAY_PORT": str(gw_port), "LC_ASK_TARGET_URI": "ipv4:" + ",".join(addrs)}
            extra.append(spawn("services.gateway", env, logs / f"gateway-bench-{gw_port}.log",
                                f"http://127.0.0.1:{gw_port}/readyz"))
            base = f"http://127.0.0.1:{gw_port}"

            def ask(q: str) -> float:
                t = time.perf_counter()
                resp = requests.post(f"{base}/api/courses/{course_id}/ask", json={"question": q}, timeout=60)
                resp.raise_for_status()
                return (time.perf_counter() - t) * 1000

            for q in texts[:8]:  # warm every replica's shard and caches
                ask(q)
            cpu0 = [cpu_s(p) for p in pids]
            batch = [texts[i % len(texts)] for i in range(asks)]
            t0 = time.perf_counter()
            with ThreadPoolExecutor(concurrency) as ex:
                lat = sorted(ex.map(ask, batch))
            wall = time.perf_counter() - t0
            cpu = [round(cpu_s(p) - c, 1) for p, c in zip(pids, cpu0)]
            row = {"replicas": r, "asks": asks, "concurrency": concurrency, "qps": round(asks / wall, 1),
                   "p50_ms": round(statistics.median(lat), 1), "p95_ms": round(lat[int(0.95 * (len(lat) - 1))], 1),
                   "cpu_s_per_replica": cpu}
            print(json.dumps(row), flush=True)
            out.append(row)
        finally:
            stop(extra)
    return out


def bench_workers(eph, workers: list[int], lectures: int, minutes: float, logs: Path, tmp: Path) -> list[dict]:
    """Makespan and spread of ``lectures`` uploaded at once over W transcribe + W index processes."""
    from bench.pipeline import lecture_parts
    from lecturecopilot_ops.stack import _free_port, service_env
    from lecturecopilot_ops.synth import synth_lecture

    video = synth_lecture(lecture_parts(minutes), tmp / "scale-lecture.mp4")
    base_env = service_env(eph.settings)
    out = []
    for w in workers:
        extra, tlogs = [], [eph.settings.data_dir / "logs" / "transcribe.log"]
        try:
            for i in range(w - 1):
                hp = _free_port()
                tlog = logs / f"transcribe-w{w}-{i}.log"
                extra.append(spawn("services.transcribe", {**base_env, "LC_HEALTH_PORT_TRANSCRIBE": str(hp)}, tlog,
                                    f"http://127.0.0.1:{hp}/readyz"))
                tlogs.append(tlog)
                hp = _free_port()
                extra.append(spawn("services.index", {**base_env, "LC_HEALTH_PORT_INDEX": str(hp)},
                                    logs / f"index-w{w}-{i}.log", f"http://127.0.0.1:{hp}/readyz"))
            marks = [p.stat().st_size if p.exists() else 0 for p in tlogs]
            course = eph.create_course(f"scale {w} workers")
            ids = []
            t0 = time.time()
            for i in range(lectures):
                with open(video.path, "rb") as f:
                    r = requests.post(f"{eph.base}/api/courses/{course}/lectures", headers=eph.admin, timeout=600,
                                      files={"video": ("l.mp4", f, "video/mp4")}, data={"title": f"copy {i}"})
                r.raise_for_status()
                ids.append(r.json()["lecture_id"])
            for lid in ids:
                st = eph.wait_ready(lid, timeout_s=3600)
                if st["status"] != "ready":
                    raise RuntimeError(f"{lid} failed: {st['error']}")
            makespan = time.time() - t0
            handled = {}
            for n, (path, mark) in enumerate(zip(tlogs, marks)):
                with open(path, "rb") as f:
                    f.seek(mark)
                    text = f.read().decode(errors="replace")
                for lid in ids:
                    handled.setdefault(lid, []).extend([n] * len(re.findall(rf"transcribed {lid}", text)))
            with psycopg.connect(eph.db_url) as conn:
                dup = conn.execute(
                    "SELECT count(*) FROM (SELECT lecture_id, idx FROM segments WHERE lecture_id = ANY(%s) "
                    "GROUP BY lecture_id, idx HAVING count(*) > 1) d", (ids,)).fetchone()[0]
                indexed = conn.execute("SELECT count(*) FROM processed_events WHERE consumer='index' AND "
                                       "msg_id LIKE ANY(%s)", ([f"%{lid}%" for lid in ids],)).fetchone()[0]
            row = {"workers": w, "lectures": lectures, "video_s": round(video.duration_s, 1),
                   "makespan_s": round(makespan, 1), "lectures_per_hour": round(lectures * 3600 / makespan, 1),
                   "transcribed_by_process": {lid[:8]: handled[lid] for lid in ids},
                   "processes_used": len({n for v in handled.values() for n in v}),
                   "duplicate_segment_rows": dup, "index_runs": indexed}
            print(json.dumps(row), flush=True)
            out.append(row)
        finally:
            stop(extra)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--replicas", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--asks", type=int, default=200)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--workers", nargs="+", type=int, default=[1, 2, 4])
    ap.add_argument("--lectures", type=int, default=4)
    ap.add_argument("--minutes", type=float, default=2.0)
    ap.add_argument("--skip-ask", action="store_true")
    ap.add_argument("--skip-workers", action="store_true")
    args = ap.parse_args(argv)

    from lecturecopilot_ops.stack import ephemeral

    record = {"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "cpus": os.cpu_count(),
              "machine": platform.machine(), "command": "python -m bench.scale_out " + " ".join(argv or sys.argv[1:]),
              "whisper_threads": int(os.environ.get("LC_WHISPER_THREADS", "2"))}
    with tempfile.TemporaryDirectory(prefix="lc-scale-") as tmp_s:
        tmp = Path(tmp_s)
        with ephemeral(tmp / "stack", whisper_model="tiny.en") as eph:
            logs = eph.settings.data_dir / "logs"
            if not args.skip_ask:
                record["ask"] = bench_ask(eph, args.replicas, args.asks, args.concurrency, logs)
            if not args.skip_workers:
                record["workers"] = bench_workers(eph, args.workers, args.lectures, args.minutes, logs, tmp)
    history = json.loads(OUT.read_text()) if OUT.exists() else []
    history.append(record)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(history, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
