"""Other users' search and ask latency while answer writers stall (issue 31).

    .venv/bin/python -m bench.writer_stalls [--streams 8] [--samples 40] [--deadline-s 20]

An ephemeral stack is started with the fake of the cloud writers' APIs (``tests/fakes/llm_server.py``)
as its Groq writer (Gemini down) and a course of one captions-only lecture. Another user asks
``POST /search`` and ``POST /ask`` (JSON; the fake answers their questions at once, ``ok``) in turn,
``--samples`` times each: first idle, then while ``--streams`` clients each keep a question open
whose writer stream sends ``"blah "`` every 0.3 s with no sentence end, for ever (``endless``;
each client asks again as soon as its answer comes, ``LC_WRITER_DEADLINE_S`` = ``--deadline-s``
later, or a second after asking when every writer stream slot was taken and the answer came at once). Reported: p50 and p95 of each, their
ratio under load to idle (the issue asks the ask p95 to stay within 2×), and how the pathological
questions ended (their ``reason`` and time).

Appends to ``bench/results/writer_stalls.json``. Wall-clock on a shared 2-core machine: read the
ratios measured in one run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "results" / "writer_stalls.json"
VTT = ("WEBVTT\n\n00:00:01.000 --> 00:00:08.000\nMerge sort is a divide and conquer algorithm.\n\n"
       "00:00:08.000 --> 00:00:16.000\nIt splits the array into two halves and sorts each half recursively.\n\n"
       "00:00:16.000 --> 00:00:26.000\nThen it merges the two sorted halves with two pointers, always taking the "
       "smaller front element.\n\n00:00:26.000 --> 00:00:32.000\nMerge sort runs in order n log n time.\n")
USER_Q = "How does merge sort combine the two sorted halves?"
STALL_Q = "Explain in painful detail how merge sort splits the array into halves."
STALL_WORDS = "painful detail"  # the fake streams endlessly for prompts holding these words


def _course(eph) -> str:
    course = eph.create_course("writer stalls")
    r = requests.post(f"{eph.base}/api/courses/{course}/lectures", headers=eph.admin, timeout=60,
                      files={"captions": ("merge.vtt", VTT.encode(), "text/vtt")}, data={"title": "Merge sort"})
    r.raise_for_status()
    if eph.wait_ready(r.json()["lecture_id"])["status"] != "ready":
        raise RuntimeError("the lecture failed")
    return course


def _timed(url: str, body: dict) -> tuple[float, dict]:
    t0 = time.perf_counter()
    r = requests.post(url, json=body, timeout=120)
    took = time.perf_counter() - t0
    r.raise_for_status()
    return took, r.json()


def _user(eph, course: str, samples: int) -> dict:
    """``samples`` searches and asks of the other user, in turn: their times (seconds) and writers."""
    search, ask, writers = [], [], Counter()
    for _ in range(samples):
        search.append(_timed(f"{eph.base}/api/courses/{course}/search", {"query": "merge two sorted halves"})[0])
        took, ans = _timed(f"{eph.base}/api/courses/{course}/ask", {"question": USER_Q})
        ask.append(took)
        writers[f"{ans['writer']}/{ans['reason'] or '-'}"] += 1
    return {"search": _stats(search), "ask": _stats(ask), "ask_writers": dict(writers)}


def _stats(xs: list[float]) -> dict:
    xs = sorted(xs)
    p95 = xs[min(len(xs) - 1, round(0.95 * (len(xs) - 1)))]
    return {"p50_ms": round(statistics.median(xs) * 1000, 1), "p95_ms": round(p95 * 1000, 1),
            "max_ms": round(xs[-1] * 1000, 1), "n": len(xs)}


def _stallers(eph, course: str, n: int, stop: threading.Event, ended: list) -> list[threading.Thread]:
    """``n`` clients, each asking STALL_Q again as soon as its answer comes, until ``stop``; each
    answer's (reason, seconds) goes to ``ended``."""

    def loop():
        while not stop.is_set():
            took, ans = _timed(f"{eph.base}/api/courses/{course}/ask", {"question": STALL_Q})
            ended.append((ans["reason"] or ans["writer"], took))
            stop.wait(max(0.0, 1.0 - took))  # a client told at once (writers_busy) asks again a second later

    threads = [threading.Thread(target=loop, daemon=True) for _ in range(n)]
    for t in threads:
        t.start()
    return threads


def run(eph, fake, streams: int, samples: int) -> dict:
    """The measurements of the module docstring, on the running stack ``eph`` and writer fake ``fake``."""
    course = _course(eph)
    requests.post(f"{fake.url}/_mode", json={"groq": "ok", "gemini": "down", "when": {STALL_WORDS: "endless"}},
                  timeout=5).raise_for_status()
    _user(eph, course, 3)  # warm-up: models and caches
    idle = _user(eph, course, samples)
    stop, ended = threading.Event(), []
    threads = _stallers(eph, course, streams, stop, ended)
    end = time.monotonic() + 30
    while fake.streams_open < min(streams, 6) and time.monotonic() < end:
        time.sleep(0.05)
    opened = fake.streams_open
    loaded = _user(eph, course, samples)
    loaded["writer_streams_open_at_start"] = opened
    stop.set()
    for t in threads:
        t.join(180)
    return {"idle": idle, "with_stalls": loaded,
            "ratio": {k: round(loaded[k]["p95_ms"] / idle[k]["p95_ms"], 2) for k in ("search", "ask")},
            "stalled_questions": {reason: {"n": len(ts), "max_s": round(max(ts), 1)} for reason, ts in
                                  _by_reason(ended).items()}}


def _by_reason(ended: list[tuple[str, float]]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for reason, took in ended:
        out.setdefault(reason, []).append(took)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--streams", type=int, default=8, help="clients keeping an endless writer stream open")
    ap.add_argument("--samples", type=int, default=40, help="searches and asks of the other user, per phase")
    ap.add_argument("--deadline-s", type=float, default=20.0, help="LC_WRITER_DEADLINE_S")
    args = ap.parse_args(argv)

    sys.path.insert(0, str(ROOT / "tests"))
    from fakes.llm_server import FakeLLM

    from lecturecopilot_ops.stack import ephemeral

    fake = FakeLLM()
    env = {"GROQ_API_KEY": "gsk_bench", "LC_GROQ_BASE_URL": fake.url, "GEMINI_API_KEY": "gm_bench",
           "LC_GEMINI_BASE_URL": fake.url, "LC_WRITER_ORDER": "groq,gemini",
           "LC_WRITER_DEADLINE_S": str(args.deadline_s)}
    try:
        with tempfile.TemporaryDirectory(prefix="lc-stalls-") as tmp:
            with ephemeral(Path(tmp) / "stack", extra_env=env) as eph:
                result = run(eph, fake, args.streams, args.samples)
    finally:
        fake.close()
    record = {"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "cpus": os.cpu_count(),
              "machine": platform.machine(),
              "command": "python -m bench.writer_stalls " + " ".join(argv if argv is not None else sys.argv[1:]),
              "streams": args.streams, "deadline_s": args.deadline_s, "result": result}
    OUT.parent.mkdir(parents=True, exist_ok=True)
    history = json.loads(OUT.read_text()) if OUT.exists() else []
    history.append(record)
    OUT.write_text(json.dumps(history, indent=1) + "\n")
    print(json.dumps(record, indent=1))
    print("| other user | idle p50 / p95 (ms) | with stalls p50 / p95 (ms) | p95 × idle |")
    print("|---|---|---|---|")
    for k in ("search", "ask"):
        i, w = result["idle"][k], result["with_stalls"][k]
        print(f"| {k} | {i['p50_ms']} / {i['p95_ms']} | {w['p50_ms']} / {w['p95_ms']} | {result['ratio'][k]} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
