"""Upload-to-ready time and real-time factor of the processing pipeline on this machine.

    .venv/bin/python -m bench.pipeline --minutes 10 --models tiny.en base --workers 1 2

A generated lecture (espeak-ng narration of consecutive MIT 6.006 transcript segments, one
rendered slide per segment, see ``lecturecopilot_ops/synth.py``) of about ``--minutes`` minutes is
uploaded ``--lectures`` times at once (default 2) through the HTTP API into a fresh ephemeral
stack (the machine's Postgres and NATS when they answer), per whisper model and per number of
transcribe worker processes (the extra workers are more ``python -m services.transcribe``
processes on the same durable consumers: JetStream spreads the lectures over them).

Reported per configuration: each lecture's upload-to-ready time, its real-time factor
(upload-to-ready / video duration), the stage split in the pipeline's order (queue and slide reading,
then transcription with the slides' vocabulary, then index; seconds), the
makespan for all lectures and the throughput (minutes of lecture made ready per wall minute).
Appends to ``bench/results/pipeline.json`` and prints a markdown table. Timings are wall-clock
on a shared 2-core machine: compare ratios within one run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import psycopg
import requests

from bench.procs import spawn, stop
from lecturecopilot_ops.synth import Part, synth_lecture

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data" / "mit6006"
RESULTS = ROOT / "bench" / "results" / "pipeline.json"


def lecture_parts(minutes: float, words_per_minute: int = 165) -> list[Part]:
    """Consecutive transcript segments of MIT 6.006 lecture 4, enough for ``minutes`` of speech."""
    rows = [json.loads(x) for x in (DATA / "segments.jsonl").read_text().splitlines() if x.strip()]
    rows = sorted((r for r in rows if r["lecture_no"] == 4), key=lambda r: r["segment_index"])
    parts, words = [], 0
    for r in rows * 3:  # repeat the lecture if one pass is too short
        first = r["text"].split(". ")[0]
        parts.append(Part(f"{r['lecture_title']} · part {len(parts) + 1}", r["slide_text"] or first, r["text"]))
        words += len(r["text"].split())
        if words >= minutes * words_per_minute:
            break
    return parts


def _extra_worker(settings, log_path: Path):
    from lecturecopilot_ops.stack import _free_port, service_env

    port = _free_port()
    env = {**service_env(settings), "LC_HEALTH_PORT_TRANSCRIBE": str(port)}
    return spawn("services.transcribe", env, log_path, f"http://127.0.0.1:{port}/readyz", timeout_s=180)


def run_config(eph, video: Path, duration_s: float, lectures: int, workers: int, log_dir: Path) -> dict:
    """Uploads ``lectures`` copies at once with ``workers`` transcribe processes running; returns
    the measurements (see module docstring)."""
    extra = [_extra_worker(eph.settings, log_dir / f"transcribe-extra-{i}.log") for i in range(workers - 1)]
    try:
        course = eph.create_course(f"bench {workers}w")
        ids, t_up = [], {}
        for i in range(lectures):
            t0 = time.time()
            with open(video, "rb") as f:
                r = requests.post(f"{eph.base}/api/courses/{course}/lectures", headers=eph.admin, timeout=600,
                                  files={"video": (video.name, f, "video/mp4")}, data={"title": f"copy {i + 1}"})
            r.raise_for_status()
            ids.append(r.json()["lecture_id"])
            t_up[ids[-1]] = t0
        start = min(t_up.values())
        done: dict[str, float] = {}
        while len(done) < len(ids):
            for lid in ids:
                if lid not in done:
                    st = requests.get(f"{eph.base}/api/lectures/{lid}", timeout=10).json()
                    if st["status"] == "failed":
                        raise RuntimeError(f"lecture {lid} failed: {st['error']}")
                    if st["status"] == "ready":
                        done[lid] = time.time()
            time.sleep(0.5)
        with psycopg.connect(eph.db_url) as conn:
            rows = {str(r[0]): r[1:] for r in conn.execute(
                "SELECT id, extract(epoch FROM created_at), extract(epoch FROM transcribed_at), "
                "extract(epoch FROM slides_read_at), extract(epoch FROM indexed_at) FROM lectures WHERE id = ANY(%s)",
                (ids,)).fetchall()}
        per = []
        for lid in ids:
            created, tr, sl, ix = (float(x) for x in rows[lid])
            wall = done[lid] - t_up[lid]
            # the stages in the pipeline's order: slides read (queue wait included), then transcription, then index
            per.append({"upload_to_ready_s": round(wall, 1), "rtf": round(wall / duration_s, 3),
                        "queued_to_slides_read_s": round(sl - created, 1), "transcribe_s": round(tr - sl, 1),
                        "index_s": round(ix - tr, 1)})
        makespan = max(done.values()) - start
        return {"workers": workers, "lectures": lectures, "lectures_detail": per, "makespan_s": round(makespan, 1),
                "throughput_lecture_min_per_min": round(lectures * duration_s / makespan, 2)}
    finally:
        stop(extra)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--models", nargs="+", default=["tiny.en", "base"])
    ap.add_argument("--workers", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--lectures", type=int, default=2)
    ap.add_argument("--beams", nargs="+", type=int, default=[None],
                    help="whisper beam widths (default: the product's, LC_WHISPER_BEAM_SIZE)")
    args = ap.parse_args(argv)

    from lecturecopilot_ops.stack import ephemeral

    with tempfile.TemporaryDirectory(prefix="lc-bench-") as tmp_s:
        tmp = Path(tmp_s)
        t0 = time.time()
        res = synth_lecture(lecture_parts(args.minutes), tmp / "lecture.mp4")
        print(f"generated {res.duration_s / 60:.1f} min lecture with {len(res.part_starts_s)} slides "
              f"in {time.time() - t0:.0f} s")
        results = []
        for model, beam in ((m, b) for m in args.models for b in args.beams):
            data = tmp / f"stack-{model}-{beam}"
            with ephemeral(data, whisper_model=model, whisper_beam_size=beam) as eph:
                for w in args.workers:
                    r = run_config(eph, res.path, res.duration_s, args.lectures, w, data / "logs")
                    r.update({"model": model, "beam": eph.settings.whisper_beam_size,
                              "video_s": round(res.duration_s, 1)})
                    results.append(r)
                    print(json.dumps(r))
    record = {"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "cpus": os.cpu_count(),
              "machine": platform.machine(), "command": "python -m bench.pipeline " + " ".join(argv or sys.argv[1:]),
              "results": results}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    history = json.loads(RESULTS.read_text()) if RESULTS.exists() else []
    history.append(record)
    RESULTS.write_text(json.dumps(history, indent=1) + "\n")
    print("\n| model | beam | workers | lectures at once | upload→ready per lecture (s) | RTF | makespan (s) | "
          "lecture-min ready per wall-min |")
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        walls = ", ".join(str(x["upload_to_ready_s"]) for x in r["lectures_detail"])
        rtfs = ", ".join(str(x["rtf"]) for x in r["lectures_detail"])
        print(f"| {r['model']} | {r['beam']} | {r['workers']} | {r['lectures']} | {walls} | {rtfs} | "
              f"{r['makespan_s']} | "
              f"{r['throughput_lecture_min_per_min']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
