"""Memory and CPU of each service on a real run, for sizing Kubernetes requests/limits and the
capacity plan in deploy/k8s/README.md.

Starts a whole stack on free ports (``lecturecopilot_ops.stack.ephemeral``; an embedded NATS, the
machine's Postgres when it answers on 5432, else an embedded one), with whisper ``base``.
Processes the demo lecture (the narrated MIT 6.006 L4 excerpt, 279 s), then asks questions
through the HTTP API, first one at a time, then ``--concurrency`` at a time. Reads each service
process tree's peak and current resident memory (VmHWM, VmRSS in /proc/<pid>/status) and CPU seconds
(utime + stime in /proc/<pid>/stat) around each phase. Writes bench/results/service_resources.json.

    .venv/bin/python -m bench.service_resources [--asks 200] [--concurrency 4]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import date
from pathlib import Path

import requests

SERVICES = ("gateway", "ingest", "ask", "transcribe", "index")
OUT = Path(__file__).resolve().parent / "results" / "service_resources.json"


def _pid(data_dir: Path, name: str) -> int:
    return int((data_dir / "run" / f"{name}.pid").read_text())


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants (gunicorn serves from a worker child of the pid in the pidfile)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        for task in Path(f"/proc/{p}/task").iterdir():
            todo += [int(c) for c in (task / "children").read_text().split()]
    return out


def _mem_mb(pid: int) -> dict:
    """Peak (VmHWM) and current (VmRSS) resident memory of ``pid`` and its children in MB (summed)."""
    total = {"VmHWM": 0, "VmRSS": 0}
    for p in _tree(pid):
        for line in Path(f"/proc/{p}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in total:
                total[key] += int(value.split()[0])
    return {"peak_rss_mb": round(total["VmHWM"] / 1024), "rss_mb": round(total["VmRSS"] / 1024)}


def cpu_s(pid: int) -> float:
    """CPU seconds (user + system) ``pid`` and its live children have used so far."""
    total = 0
    for p in _tree(pid):
        parts = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(parts[11]) + int(parts[12])
    return total / os.sysconf("SC_CLK_TCK")


def _cpu_all(pids: dict) -> dict:
    return {n: cpu_s(p) for n, p in pids.items()}


def _delta(after: dict, before: dict) -> dict:
    return {n: round(after[n] - before[n], 2) for n in after}


def main() -> None:
    """Runs the measurement (see module docstring) and prints/writes the JSON result."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--asks", type=int, default=200)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    os.environ.setdefault("LC_TEST_NATS", "embedded")  # never share the machine's NATS

    from lecturecopilot_ops.demo import DEMO_QUESTIONS, demo_parts
    from lecturecopilot.media import probe
    from lecturecopilot_ops.stack import ephemeral
    from lecturecopilot_ops.synth import synth_lecture

    load_before = round(os.getloadavg()[0], 2)  # other work on the machine skews the timings
    with tempfile.TemporaryDirectory(prefix="lc-resources-") as tmp:
        tmp = Path(tmp)
        video = tmp / "demo.mp4"
        synth_lecture(demo_parts(), video)
        duration = probe(video).duration_s
        with ephemeral(tmp / "data", whisper_model="base") as eph:
            data_dir = eph.settings.data_dir
            pids = {n: _pid(data_dir, n) for n in SERVICES}
            idle = {n: _mem_mb(p) for n, p in pids.items()}
            course = eph.create_course("Resources")
            cpu0, t0 = _cpu_all(pids), time.time()
            with open(video, "rb") as f:
                r = requests.post(f"{eph.base}/api/courses/{course}/lectures", headers=eph.admin,
                                  files={"video": (video.name, f, "video/mp4")},
                                  data={"title": "Hashing", "number": "4"}, timeout=600)
            r.raise_for_status()
            st = eph.wait_ready(r.json()["lecture_id"])
            assert st["status"] == "ready", st
            ready_s = time.time() - t0
            pipeline_cpu = _delta(_cpu_all(pids), cpu0)
            after_pipeline = {n: _mem_mb(p) for n, p in pids.items()}

            def ask(q: str) -> float:
                t = time.perf_counter()
                resp = requests.post(f"{eph.base}/api/courses/{course}/ask", json={"question": q}, timeout=60)
                resp.raise_for_status()
                return (time.perf_counter() - t) * 1000

            questions = [DEMO_QUESTIONS[i % len(DEMO_QUESTIONS)] for i in range(args.asks)]
            cpu1, t1 = _cpu_all(pids), time.perf_counter()
            sequential_ms = [ask(q) for q in questions]
            seq_s = time.perf_counter() - t1
            seq_cpu = _delta(_cpu_all(pids), cpu1)
            cpu2, t2 = _cpu_all(pids), time.perf_counter()
            with ThreadPoolExecutor(args.concurrency) as pool:
                concurrent_ms = list(pool.map(ask, questions))
            conc_s = time.perf_counter() - t2
            conc_cpu = _delta(_cpu_all(pids), cpu2)
            final = {n: _mem_mb(p) for n, p in pids.items()}
            # written before the stack is torn down
            def pct(xs, q):
                xs = sorted(xs)
                return round(xs[min(len(xs) - 1, int(q * len(xs)))], 1)

            result = {
                "date": date.today().isoformat(), "machine": f"{os.cpu_count()} cores, {platform.machine()}, no GPU",
                "command": "python -m bench.service_resources " + f"--asks {args.asks} --concurrency {args.concurrency}",
                "load_avg_1m_before": load_before, "whisper_model": "base", "lecture_s": round(duration, 1), "upload_to_ready_s": round(ready_s, 1),
                "pipeline_cpu_s": pipeline_cpu,
                "memory_mb": {"idle": idle, "after_pipeline": after_pipeline, "final": final},
                "asks": {
                    "count": args.asks,
                    "sequential": {"p50_ms": pct(sequential_ms, 0.5), "p95_ms": pct(sequential_ms, 0.95),
                                   "per_s": round(args.asks / seq_s, 1), "cpu_s": seq_cpu},
                    "concurrent": {"concurrency": args.concurrency, "p50_ms": pct(concurrent_ms, 0.5),
                                   "p95_ms": pct(concurrent_ms, 0.95), "per_s": round(args.asks / conc_s, 1),
                                   "cpu_s": conc_cpu},
                    "ask_cpu_ms_per_question": round(1000 * (seq_cpu["ask"] + conc_cpu["ask"]) / (2 * args.asks), 2),
                    "gateway_cpu_ms_per_question": round(1000 * (seq_cpu["gateway"] + conc_cpu["gateway"]) / (2 * args.asks), 2),
                    "mean_ms": round(statistics.mean(sequential_ms), 1),
                },
            }
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(result, indent=2) + "\n")
            print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
