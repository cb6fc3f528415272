"""The numbers behind deploy/k8s/README.md's capacity plan, from one command.

    .venv/bin/python -m bench.capacity [--models tiny.en base] [--asks 100] [--search-points N ...]

**Transcribe.** The demo lecture (the narrated MIT 6.006 L4 excerpt, ``lecturecopilot_ops.demo``,
≈ 279 s) is uploaded into a fresh ephemeral stack per whisper model (one transcribe process). A
transcribe replica runs the slides and transcribe stages (slides first: their vocabulary prompts the
speech recognition; the web copy beside them), so its seconds per lecture are the later of
``slides_read_at`` and ``transcribed_at`` less ``created_at`` (Postgres); their ratio to the video's
length is the replica's real-time factor (RTF), and ``1 / RTF`` one-hour lectures per hour is one
replica's throughput (RTF is taken as constant in the lecture's length). The transcribe process's
CPU seconds (``/proc``) are reported beside it.

**Ask.** On the last model's stack, ``--asks`` demo questions go through the HTTP API one at a
time, then 4 at a time; the ask process's CPU seconds per question give the questions per second
one ask replica serves on one full core (``1000 / cpu_ms``), and the measured rates are reported
beside it (gateway, ask and Postgres share this machine's cores).

**Search memory.** Points one ask replica holds per GB of its RSS, and the 1k…1M curve, per shard
profile, from ``bench/results/search_scale.json`` (``python -m bench.search_scale``; with
``--search-points`` those sizes are measured first, ``--profile`` as there).

Writes bench/results/capacity.json and prints a markdown table. Wall-clock and CPU on a shared
2-core machine without GPU: other work skews the timings (``load_avg_1m_before`` is recorded).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
import requests

from bench.service_resources import cpu_s

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "results" / "capacity.json"
SEARCH = ROOT / "bench" / "results" / "search_scale.json"


def _pid(data_dir: Path, name: str) -> int:
    return int((data_dir / "run" / f"{name}.pid").read_text())


def _upload_ready(eph, course: str, video: Path, number: int) -> str:
    """Uploads ``video`` as lecture ``number`` of ``course``, waits until it is ready; its id.
    Raises RuntimeError when the lecture fails."""
    with open(video, "rb") as f:
        r = requests.post(f"{eph.base}/api/courses/{course}/lectures", headers=eph.admin, timeout=600,
                          files={"video": (video.name, f, "video/mp4")}, data={"title": "Hashing", "number": str(number)})
    r.raise_for_status()
    lid = r.json()["lecture_id"]
    st = eph.wait_ready(lid, timeout_s=900)
    if st["status"] != "ready":
        raise RuntimeError(f"lecture {lid}: {st}")
    return lid


def transcribe_rate(eph, video: Path, duration_s: float) -> dict:
    """Uploads ``video`` (``duration_s`` long) twice, one after the other, and measures the second (the
    first loads the models into the fresh workers); returns the transcribe replica's seconds on it, its
    RTF, one-hour lectures per hour, and its CPU seconds. Raises RuntimeError when a lecture fails."""
    pid = _pid(eph.settings.data_dir, "transcribe")
    course = eph.create_course("Capacity")
    _upload_ready(eph, course, video, 1)
    cpu0 = cpu_s(pid)
    lid = _upload_ready(eph, course, video, 2)
    with psycopg.connect(eph.db_url) as conn:
        created, transcribed, slides = (float(x) for x in conn.execute(
            "SELECT extract(epoch FROM created_at), extract(epoch FROM transcribed_at), "
            "extract(epoch FROM slides_read_at) FROM lectures WHERE id = %s", (lid,)).fetchone())
    replica_s = max(slides, transcribed) - created  # slides are read first, then speech with their vocabulary
    rtf = replica_s / duration_s
    return {"course": course, "video_s": round(duration_s, 1), "slides_read_s": round(slides - created, 1),
            "transcribed_s": round(transcribed - created, 1), "replica_s": round(replica_s, 1), "rtf": round(rtf, 3),
            "transcribe_cpu_s": round(cpu_s(pid) - cpu0, 1), "lecture_hours_per_hour": round(1 / rtf, 1)}


def ask_rate(eph, course: str, n: int, concurrency: int = 4) -> dict:
    """Asks ``n`` demo questions in ``course`` one at a time, then ``concurrency`` at a time, through
    the HTTP API; returns latencies (ms), rates (questions/s) and the ask process's CPU per question."""
    from lecturecopilot_ops.demo import DEMO_QUESTIONS

    pid = _pid(eph.settings.data_dir, "ask")
    questions = [DEMO_QUESTIONS[i % len(DEMO_QUESTIONS)] for i in range(n)]

    def ask(question: str) -> float:
        t = time.perf_counter()
        resp = requests.post(f"{eph.base}/api/courses/{course}/ask", json={"question": question}, timeout=60)
        resp.raise_for_status()
        return (time.perf_counter() - t) * 1000

    ask(questions[0])  # the course's first ask syncs it into the replica's shard
    cpu0, t0 = cpu_s(pid), time.perf_counter()
    seq = [ask(x) for x in questions]
    t1 = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        conc = list(pool.map(ask, questions))
    t2 = time.perf_counter()
    cpu_ms = 1000 * (cpu_s(pid) - cpu0) / (2 * n)
    seq.sort()
    return {"asks": n, "p50_ms": round(statistics.median(seq), 1), "p95_ms": round(seq[int(0.95 * (n - 1))], 1),
            "sequential_per_s": round(n / (t1 - t0), 1), "concurrent_per_s": round(n / (t2 - t1), 1),
            "concurrency": concurrency, "ask_cpu_ms_per_question": round(cpu_ms, 2),
            "per_s_per_core": round(1000 / cpu_ms, 1)}


def search_memory(rows: list[dict]) -> dict:
    """Per profile: the 1k…1M curve (points, replica RSS MB, p95 ms, dense recall@30) and points per
    GB of replica RSS at the largest size measured in a replica of its own (rows without
    ``replica_rss_mb`` — older runs whose one process built and served — show their peak RSS and count
    only when a profile has no other row)."""
    out: dict[str, dict] = {}
    for r in sorted(rows, key=lambda r: r["points"]):
        rss = r.get("replica_rss_mb", r.get("peak_rss_mb"))
        prof = out.setdefault(r.get("profile", "ram"), {"curve": []})
        prof["curve"].append({"points": r["points"], "replica_rss_mb": rss, "p95_ms": r["p95_ms"],
                              "rss_of": "replica" if "replica_rss_mb" in r else "builder and replica in one process",
                              "dense_recall_30": r.get("dense_recall_30"), "build_s": r["build_s"],
                              "command": r["command"]})
    for prof in out.values():
        replica = [c for c in prof["curve"] if c["dense_recall_30"] is not None] or prof["curve"]
        top = replica[-1]
        prof["points_per_gb"] = round(top["points"] / (top["replica_rss_mb"] / 1024))
        prof["at_points"] = top["points"]
    return out


def _table(result: dict) -> str:
    lines = ["| unit | figure |", "|---|---|"]
    for model, t in result["transcribe"].items():
        lines.append(f"| transcribe replica, whisper {model} | {t['replica_s']} s for the {t['video_s']} s demo "
                     f"(RTF {t['rtf']}, {t['transcribe_cpu_s']} CPU-s) ⇒ **{t['lecture_hours_per_hour']} "
                     f"one-hour lectures per hour** |")
    a = result["ask"]
    lines.append(f"| ask replica | {a['ask_cpu_ms_per_question']} ms CPU per question ⇒ **{a['per_s_per_core']} "
                 f"questions/s per core**; measured {a['sequential_per_s']}/s one at a time (p50 {a['p50_ms']} ms, "
                 f"p95 {a['p95_ms']} ms), {a['concurrent_per_s']}/s {a['concurrency']} at a time |")
    for name, p in result["search"].items():
        curve = ", ".join(f"{c['points']:,}: {c['replica_rss_mb']} MB / p95 {c['p95_ms']} ms"
                          + ("" if c["rss_of"] == "replica" else " (builder's RSS)") for c in p["curve"])
        lines.append(f"| search shard, profile {name} | **{p['points_per_gb']:,} points per GB** of replica RSS at "
                     f"{p['at_points']:,} points; curve {curve} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+", default=["tiny.en", "base"])
    ap.add_argument("--asks", type=int, default=100)
    ap.add_argument("--search-points", type=int, nargs="*", default=[])
    ap.add_argument("--profile", default="disk")
    args = ap.parse_args(argv)
    os.environ.setdefault("LC_TEST_NATS", "embedded")  # never share the machine's NATS
    if args.search_points:
        subprocess.run([sys.executable, "-m", "bench.search_scale", "--points", *map(str, args.search_points),
                        "--profile", args.profile], check=True, cwd=ROOT)
    from lecturecopilot_ops.demo import demo_parts
    from lecturecopilot.media import probe
    from lecturecopilot_ops.stack import ephemeral
    from lecturecopilot_ops.synth import synth_lecture

    load_before = round(os.getloadavg()[0], 2)
    transcribe, ask = {}, {}
    with tempfile.TemporaryDirectory(prefix="lc-capacity-") as tmp_s:
        tmp = Path(tmp_s)
        video = synth_lecture(demo_parts(), tmp / "demo.mp4").path
        duration = probe(video).duration_s
        for model in args.models:
            with ephemeral(tmp / f"stack-{model}", whisper_model=model) as eph:
                transcribe[model] = transcribe_rate(eph, video, duration)
                print(model, json.dumps(transcribe[model]), flush=True)
                if model == args.models[-1]:
                    ask = ask_rate(eph, transcribe[model].pop("course"), args.asks)
                else:
                    transcribe[model].pop("course")
    result = {"date": time.strftime("%Y-%m-%d"), "machine": f"{os.cpu_count()} cores shared, {platform.machine()}, "
              "no GPU", "load_avg_1m_before": load_before,
              "command": "python -m bench.capacity " + " ".join(argv if argv is not None else sys.argv[1:]),
              "transcribe": transcribe, "ask": {**ask, "whisper_model": args.models[-1]},
              "search": search_memory(json.loads(SEARCH.read_text()))}
    OUT.write_text(json.dumps(result, indent=2) + "\n")
    print(_table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
