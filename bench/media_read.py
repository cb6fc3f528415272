"""How a worker should read a lecture in object storage: download it once and run ffmpeg on the
local file (what :class:`lecturecopilot.objectstore.S3MediaStore` does), or hand ffmpeg a
presigned URL for each read.

    .venv/bin/python -m bench.media_read --minutes 10 --height 720

A generated H.264/AAC video (ffmpeg ``testsrc2`` + a sine tone, ``--minutes`` long at
``--height`` pixels, index at the end as cameras write it) is put in moto's S3 server on
loopback. Each way then runs the reads the pipeline makes of a source (ffprobe, the
completeness check near the end, audio to 16 kHz WAV, the web copy's stream copy), ``--runs``
times; the local way includes its download (one streamed GET, as the store makes it; boto3's
default ranged, threaded download is timed beside it). Appends to ``bench/results/media_read.json`` and
prints the medians. Loopback has no network latency or bandwidth limit, so the URL way's cost
here is a lower bound.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "media_read.json"
URL_GUARD = ["-protocol_whitelist", "http,tcp", "-f", "mov"]  # what ffmpeg would need for a presigned URL
FILE_GUARD = ["-protocol_whitelist", "file", "-f", "mov"]  # lecturecopilot.media's guard


def make_video(path: Path, minutes: float, height: int) -> None:
    """An H.264/AAC MP4 of ``minutes`` minutes at ``height`` pixels (30 fps), index at the end."""
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i",
                    f"testsrc2=size={height * 16 // 9}x{height}:rate=30", "-f", "lavfi", "-i", "sine=frequency=440",
                    "-t", str(minutes * 60), "-c:v", "libx264", "-preset", "ultrafast", "-crf", "28",
                    "-c:a", "aac", "-b:a", "96k", str(path)], check=True)


def reads(src: str, guard: list[str], work: Path, duration_s: float) -> None:
    """The pipeline's reads of a source: probe, decode near the end, audio to WAV, stream copy."""
    run = lambda *a: subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", *a], check=True)  # noqa: E731
    subprocess.run(["ffprobe", "-v", "error", *guard, "-show_format", "-show_streams", "-of", "json", src],
                   check=True, capture_output=True)
    run("-ss", f"{max(0.0, duration_s - 3):.3f}", *guard, "-i", src, "-t", "2", "-f", "null", "-")
    run(*guard, "-i", src, "-map", "0:a:0", "-vn", "-ac", "1", "-ar", "16000", "-c:a", "pcm_s16le",
        str(work / "audio.wav"))
    run(*guard, "-i", src, "-c", "copy", "-movflags", "+faststart", str(work / "web.mp4"))


def download_ranged_s(client, bucket: str, key: str, dst: Path) -> float:
    """Seconds boto3's default download takes (ranged GETs of 8 MiB, 10 threads), for comparison
    with the one streamed GET that :meth:`S3MediaStore.resolve` makes."""
    t0 = time.perf_counter()
    client.download_file(bucket, key, str(dst))
    return time.perf_counter() - t0


def measure(minutes: float, height: int, runs: int) -> dict:
    """Medians in seconds of both ways over ``runs`` runs, with the video's size; and of the local
    way's download alone, as the store makes it and as boto3's default ranged download."""
    import sys

    sys.path.insert(0, str(ROOT / "tests"))
    from fakes.s3_server import S3Server
    from lecturecopilot.objectstore import S3MediaStore

    s3 = S3Server()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            store = S3MediaStore(tmp / "media", f"s3://{s3.bucket}/bench", client=s3.client())
            lid = "00000000-0000-4000-8000-000000000001"
            video = store.lecture_dir(lid) / "source.mp4"
            make_video(video, minutes, height)
            size = video.stat().st_size
            uri = store.keep(video, lid, move=True)
            local_s, url_s, get_s, ranged_s = [], [], [], []
            for _ in range(runs):
                t0 = time.perf_counter()
                path = store.resolve(uri, lid)
                get_s.append(time.perf_counter() - t0)
                reads(str(path), FILE_GUARD, tmp, minutes * 60)
                local_s.append(time.perf_counter() - t0)
                path.unlink()  # drop the local copy (the object stays)
                ranged_s.append(download_ranged_s(store.client, s3.bucket, uri.split("/", 3)[3], tmp / "ranged.mp4"))
                t0 = time.perf_counter()
                reads(store.video_url(uri), URL_GUARD, tmp, minutes * 60)
                url_s.append(time.perf_counter() - t0)
    finally:
        s3.close()
    med = lambda xs: round(statistics.median(xs), 2)  # noqa: E731
    return {"bytes": size, "local_copy_s": med(local_s), "presigned_url_s": med(url_s), "download_one_get_s": med(get_s),
            "download_ranged_s": med(ranged_s), "runs": runs}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--height", type=int, default=720)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    result = {"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "machine": platform.machine(),
              "minutes": args.minutes, "height": args.height, **measure(args.minutes, args.height, args.runs)}
    runs = json.loads(RESULTS.read_text()) if RESULTS.exists() else []
    RESULTS.write_text(json.dumps([*runs, result], indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
