"""One worker process runs the same stage of different lectures side by side, so a short lecture
does not queue behind a long one's slide reading (issue #12, item 20). Real NATS JetStream,
Postgres, ffmpeg and RapidOCR; the test stack runs one transcribe process."""

from __future__ import annotations

import subprocess
import time

import pytest
import requests

pytestmark = pytest.mark.slow

VTT = (b"WEBVTT\n\n00:01.000 --> 00:08.000\nCounting sort is a linear time sorting algorithm for small integer keys.\n\n"
       b"00:20.000 --> 00:28.000\nMerge sort splits the array into two halves and sorts each half.\n")


def test_two_lectures_slide_steps_run_at_the_same_time_in_one_worker(stack, synth_video, tmp_path):
    """Two lectures with captions (transcription is instant) and a video six times the synthetic
    lecture's length (slide reading takes seconds): both are seen at stage ``slides`` at once.
    With one message at a time per consumer the second waits at ``transcribing`` until the first
    one's slides are read, so this never happens."""
    res, _ = synth_video
    long = tmp_path / "long.mp4"
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-stream_loop", "5", "-i", str(res.path),
                    "-c", "copy", str(long)], check=True)
    pids = list((stack.settings.data_dir / "run").glob("transcribe*.pid"))
    assert len(pids) == 1, pids  # one worker process does both
    course = stack.create_course("Side by side")
    ids = []
    for i in range(2):
        with open(long, "rb") as f:
            r = requests.post(f"{stack.base}/api/courses/{course}/lectures", headers=stack.admin, timeout=120,
                              files={"video": ("long.mp4", f, "video/mp4"), "captions": ("c.vtt", VTT, "text/vtt")},
                              data={"title": f"Long {i + 1}"})
        assert r.status_code == 202, r.text
        ids.append(r.json()["lecture_id"])
    together, stages = False, {i: set() for i in ids}
    deadline = time.time() + 240
    while time.time() < deadline:
        with stack.db() as conn:
            rows = dict(conn.execute("SELECT id::text, stage FROM lectures WHERE id = ANY(%s::uuid[])",
                                     (ids,)).fetchall())
        for lid, stage in rows.items():
            stages[lid].add(stage)
        together = together or all(stage == "slides" for stage in rows.values())
        if all(stage in ("ready", "failed") for stage in rows.values()):
            break
        time.sleep(0.05)
    assert all(rows[i] == "ready" for i in ids), rows
    assert all("slides" in s for s in stages.values()), stages
    assert together, f"the two lectures' slide steps never ran at the same time: {stages}"
    with stack.db() as conn:
        n = conn.execute("SELECT count(*) FROM slides WHERE lecture_id = ANY(%s::uuid[])", (ids,)).fetchone()[0]
    assert n >= 2  # both really read their slides
