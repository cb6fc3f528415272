"""Queue fairness: does a short lecture wait behind a long one's stages?

    .venv/bin/python -m bench.queue_fairness --long-minutes 5 --long-height 2160
    .venv/bin/python -m bench.queue_fairness --long-minutes 5 --long-height 2160 --concurrency 1   # one at a time

A long lecture (a narrated generated lecture, see ``bench/pipeline.py``, scaled to
``--long-height`` pixels at ``--long-fps``: 4K by default, so its slide reading and web copy are
heavy as well as its transcription) is uploaded through the HTTP API into a fresh ephemeral stack.
While it is processed, a short captions-only lecture is uploaded each time the long one enters
a new stage (``transcribing``, ``slides``, ``indexing``), and its upload → ``ready`` time is
compared with the same lecture's time with nothing else running (median of ``--alone`` runs
before the long one is uploaded, after one uncounted run that loads the models). ``--concurrency`` sets every ``LC_*_CONCURRENCY`` of the
workers (default: the settings' defaults; 1 is how the consumers worked before they ran
several messages at once). Appends to ``bench/results/queue_fairness.json`` and prints a table.
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
from pathlib import Path

import requests

from bench.pipeline import lecture_parts
from lecturecopilot_ops.synth import synth_lecture

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "queue_fairness.json"
SHORT_VTT = ("WEBVTT\n\n00:00:01.000 --> 00:00:06.000\nA hash table maps each key to a slot with a hash function.\n\n"
             "00:00:06.000 --> 00:00:12.000\nCollisions are resolved by chaining or by open addressing.\n").encode()
CONCURRENCY_VARS = ("LC_TRANSCRIBE_CONCURRENCY", "LC_SLIDES_CONCURRENCY", "LC_WEBCOPY_CONCURRENCY",
                    "LC_INDEX_CONCURRENCY")


def make_long_video(minutes: float, height: int, fps: int, out: Path) -> float:
    """A narrated lecture of about ``minutes`` minutes at ``height`` pixels and ``fps`` frames per
    second (H.264 + AAC); returns its duration in seconds."""
    base = synth_lecture(lecture_parts(minutes), out.with_name("narrated.mp4"))
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", str(base.path), "-vf",
                    f"fps={fps},scale=-2:{height}:flags=bicubic", "-c:v", "libx264", "-preset", "ultrafast",
                    "-pix_fmt", "yuv420p", "-c:a", "copy", str(out)], check=True)
    return base.duration_s


def _status(eph, lecture_id: str) -> dict:
    st = requests.get(f"{eph.base}/api/lectures/{lecture_id}", timeout=10).json()
    if st["status"] == "failed":
        raise RuntimeError(f"lecture {lecture_id} failed: {st['error']}")
    return st


def short_lecture(eph, course: str, title: str) -> float:
    """Uploads the captions-only lecture and returns its upload → ready time (seconds)."""
    t0 = time.time()
    r = requests.post(f"{eph.base}/api/courses/{course}/lectures", headers=eph.admin, timeout=60,
                      files={"captions": ("short.vtt", SHORT_VTT, "text/vtt")}, data={"title": title})
    r.raise_for_status()
    lecture_id = r.json()["lecture_id"]
    while _status(eph, lecture_id)["status"] != "ready":
        time.sleep(0.1)
    return time.time() - t0


def run(eph, video: Path, alone_runs: int) -> dict:
    """The measurements of the module docstring, on the running stack ``eph``."""
    course = eph.create_course("queue fairness")
    warmup = short_lecture(eph, course, "warm-up")  # the first one loads the embedding model
    alone = [short_lecture(eph, course, f"alone {i + 1}") for i in range(alone_runs)]
    t0 = time.time()
    with open(video, "rb") as f:
        r = requests.post(f"{eph.base}/api/courses/{course}/lectures", headers=eph.admin, timeout=600,
                          files={"video": (video.name, f, "video/mp4")}, data={"title": "long"})
    r.raise_for_status()
    long_id = r.json()["lecture_id"]
    during, probed = [], set()
    while True:
        st = _status(eph, long_id)
        if st["status"] == "ready":
            break
        if st["stage"] in ("transcribing", "slides", "indexing") and st["stage"] not in probed:
            probed.add(st["stage"])
            during.append({"long_stage": st["stage"], "upload_to_ready_s": round(
                short_lecture(eph, course, f"during {st['stage']}"), 2)})
        time.sleep(0.2)
    long_s = time.time() - t0
    median_alone = statistics.median(alone)
    for d in during:
        d["ratio"] = round(d["upload_to_ready_s"] / median_alone, 2)
    return {"warmup_s": round(warmup, 2), "alone_s": [round(a, 2) for a in alone], "alone_median_s": round(median_alone, 2), "during": during,
            "long_upload_to_ready_s": round(long_s, 1),
            "worst_ratio": max((d["ratio"] for d in during), default=None)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--long-minutes", type=float, default=5.0)
    ap.add_argument("--long-height", type=int, default=2160)
    ap.add_argument("--long-fps", type=int, default=10)
    ap.add_argument("--model", default="tiny.en")
    ap.add_argument("--alone", type=int, default=3, help="runs of the short lecture alone (median)")
    ap.add_argument("--concurrency", type=int, default=None, help="every LC_*_CONCURRENCY (default: settings)")
    ap.add_argument("--video", type=Path, default=None,
                    help="keep the generated long lecture here and reuse it when it exists (same options)")
    args = ap.parse_args(argv)

    from lecturecopilot.settings import Settings
    from lecturecopilot_ops.stack import ephemeral

    extra = {k: str(args.concurrency) for k in CONCURRENCY_VARS} if args.concurrency else {}
    defaults = Settings()
    concurrency = args.concurrency or {"transcribe": defaults.transcribe_concurrency,
                                       "slides": defaults.slides_concurrency,
                                       "webcopy": defaults.webcopy_concurrency, "index": defaults.index_concurrency}
    with tempfile.TemporaryDirectory(prefix="lc-fair-") as tmp_s:
        tmp = Path(tmp_s)
        t0 = time.time()
        video = args.video or tmp / "long.mp4"
        if video.exists():
            from lecturecopilot.media import probe

            duration = probe(video).duration_s
        else:
            duration = make_long_video(args.long_minutes, args.long_height, args.long_fps, video)
            print(f"generated a {duration / 60:.1f} min {args.long_height}p lecture in {time.time() - t0:.0f} s")
        with ephemeral(tmp / "stack", whisper_model=args.model, extra_env=extra) as eph:
            result = run(eph, video, args.alone)
    result.update({"long_video_s": round(duration, 1), "long_height": args.long_height, "long_fps": args.long_fps,
                   "model": args.model, "concurrency": concurrency})
    record = {"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "cpus": os.cpu_count(),
              "machine": platform.machine(),
              "command": "python -m bench.queue_fairness " + " ".join(argv if argv is not None else sys.argv[1:]),
              "result": result}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    history = json.loads(RESULTS.read_text()) if RESULTS.exists() else []
    history.append(record)
    RESULTS.write_text(json.dumps(history, indent=1) + "\n")
    print(json.dumps(record, indent=1))
    print(f"\nshort lecture alone: {result['alone_s']} s (median {result['alone_median_s']} s)")
    print("| long lecture's stage at the short one's upload | short upload → ready (s) | × alone |")
    print("|---|---|---|")
    for d in result["during"]:
        print(f"| {d['long_stage']} | {d['upload_to_ready_s']} | {d['ratio']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
