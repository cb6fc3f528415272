"""What keeping a resumable upload's chunks in object storage costs ingest, against ``.part``
files on a folder: the chunks' writes and the finish's one local file.

    .venv/bin/python -m bench.resumable_parts --mib 512 --chunk-mib 32

``--mib`` of random bytes are received in ``--chunk-mib`` chunks by each backend of
:mod:`services.ingest.partfiles` (the local ``.part`` file; :class:`services.ingest.s3parts.S3Parts`
against moto's S3 server on loopback: each chunk spooled to a local file, then put as an object),
then the finish's local file is made (the ``.part`` file itself; the objects streamed into one
file, in order). Postgres locks are left out (one ``pg_try_advisory_lock`` per request). Appends
to ``bench/results/resumable_parts.json`` and prints the medians of ``--runs``. Loopback has no
network latency or bandwidth limit: a real store adds its upload time per chunk.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import statistics
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "resumable_parts.json"


def _local(root: Path, data: bytes, chunk: int) -> tuple[float, float]:
    from lecturecopilot.storage import MediaStore
    from services.ingest.partfiles import LocalParts

    parts, uid = LocalParts(MediaStore(root)), str(uuid.uuid4())
    parts.create(uid)
    t0 = time.perf_counter()
    with parts.locked(uid) as part:
        for at in range(0, len(data), chunk):
            part.receive(io.BytesIO(data[at:at + chunk]), at, len(data[at:at + chunk]))
        t1 = time.perf_counter()
        assert part.local_file().stat().st_size == len(data)
    t2 = time.perf_counter()
    parts.remove(uid)
    return t1 - t0, t2 - t1


def _s3(root: Path, s3, data: bytes, chunk: int) -> tuple[float, float]:
    from lecturecopilot.objectstore import S3MediaStore
    from services.ingest.s3parts import S3Part, S3Parts

    parts, uid = S3Parts(S3MediaStore(root, f"s3://{s3.bucket}/bench", client=s3.client()), None), str(uuid.uuid4())
    parts.create(uid)
    part = S3Part(parts, uid, [])
    t0 = time.perf_counter()
    for at in range(0, len(data), chunk):
        part.receive(io.BytesIO(data[at:at + chunk]), at, len(data[at:at + chunk]))
    t1 = time.perf_counter()
    assert S3Part(parts, uid, parts._chunks(uid)).local_file().stat().st_size == len(data)
    t2 = time.perf_counter()
    parts.remove(uid)
    return t1 - t0, t2 - t1


def main() -> None:
    """Runs the comparison and appends the medians to :data:`RESULTS`."""
    import sys

    sys.path.insert(0, str(ROOT / "tests"))
    from fakes.s3_server import S3Server

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mib", type=int, default=512)
    ap.add_argument("--chunk-mib", type=int, default=32)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    data, chunk = os.urandom(args.mib << 20), args.chunk_mib << 20
    s3 = S3Server()
    runs: dict[str, list[tuple[float, float]]] = {"local": [], "s3": []}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for _ in range(args.runs):
                runs["local"].append(_local(Path(tmp) / "local", data, chunk))
                runs["s3"].append(_s3(Path(tmp) / "s3", s3, data, chunk))
    finally:
        s3.close()
    med = {k: {"chunks_s": round(statistics.median(r[0] for r in v), 3),
               "finish_file_s": round(statistics.median(r[1] for r in v), 3)} for k, v in runs.items()}
    result = {"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "mib": args.mib,
              "chunk_mib": args.chunk_mib, "runs": args.runs, "machine": platform.machine(),
              "cpus": os.cpu_count(), "median": med}
    old = json.loads(RESULTS.read_text()) if RESULTS.exists() else []
    RESULTS.write_text(json.dumps(old + [result], indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
