"""``make demo``: a real lecture through the whole pipeline, then cited answers.

Builds a slide video narrated by a natural voice (Piper's en_US-joe-medium) from the real transcript
of MIT 6.006 Spring 2020 lecture 4
("Hashing", segments on collisions, open addressing and chaining; MIT OpenCourseWare,
CC BY-NC-SA 4.0), starts the stack on embedded defaults, creates a demo course, uploads
the video through the public API, waits for ``ready``, asks questions and prints the URL.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

import requests

from lecturecopilot.media import probe
from lecturecopilot.settings import Settings

from . import stack
from .synth import PIPER_VOICE, Part, synth_lecture

DATA = Path(__file__).resolve().parent.parent / "data" / "mit6006"
DEMO_SEGMENTS = (4, [26, 27, 28, 29, 30])
DEMO_QUESTIONS = [
    "What is chaining?",
    "How does Python resolve collisions?",
    "What happens when two keys hash to the same index?",
    "What is the capital of France?",
]


# The demo's slides, written here for the five segments as a lecturer's slides would put them (a title and
# three bullets each; the OCW transcript has no slide text for them). No clock time on a slide: OCR would read it.
DEMO_SLIDES = {
    26: ("Collisions", ("Different keys a, b with h(a) = h(b)", "Where do we store b?",
                        "A linked list at each index? Slow get_at")),
    27: ("Two ways to resolve collisions", ("Keep O(1) direct access by index", "Open addressing: another free slot",
                                            "Chaining: another structure per slot")),
    28: ("Open addressing", ("Python's dict uses open addressing", "Hard to analyze: not in this class",
                             "Chaining: a pointer to a chain per slot")),
    29: ("Chaining", ("Each slot points to a chain", "A chain: linked list or dynamic array",
                      "Look up k: hash, then linear find in its chain")),
    30: ("Why chaining works", ("Any sequence structure can be a chain", "Choose h so that chains stay short",
                                "Short chains: constant-time operations")),
}


def demo_parts(data_dir: Path = DATA) -> list[Part]:
    """The demo lecture's parts: per transcript segment, its slide (:data:`DEMO_SLIDES`) shown while the
    segment's real transcript is narrated."""
    lecture_no, indexes = DEMO_SEGMENTS
    rows = [json.loads(x) for x in (data_dir / "segments.jsonl").read_text().splitlines() if x.strip()]
    chosen = {r["segment_index"]: r for r in rows if r["lecture_no"] == lecture_no and r["segment_index"] in indexes}
    return [Part(DEMO_SLIDES[i][0], "", chosen[i]["text"], slide_lines=DEMO_SLIDES[i][1]) for i in indexes]


DEMO_COURSE = "MIT 6.006 Introduction to Algorithms (demo)"


def run(settings: Settings) -> None:
    """Runs the demo (see module docstring); leaves the stack running. Raises ``SystemExit`` when
    processing or an answer fails, ``requests.HTTPError`` when the upload is refused."""
    t_all = time.time()
    video = _demo_video(settings)
    token = stack.admin_token(settings)
    print("Starting the stack (embedded Postgres + NATS unless DATABASE_URL / NATS_URL are set)...")
    stack.up(settings)
    base = f"http://{settings.gateway_host}:{settings.gateway_port}"
    auth = {"Authorization": f"Bearer {token}"}
    course = _demo_course(base, auth)
    detail = requests.get(f"{base}/api/courses/{course['id']}", timeout=10).json()
    if not any(l["status"] == "ready" for l in detail["lectures"]):
        _upload_and_wait(settings, base, auth, course["id"], video)
    latencies = _ask_questions(base, auth, course["id"])
    print(f"\nAsk latency through the HTTP API (JSON, {len(latencies)} asks): "
          f"p50 {statistics.median(latencies):.0f} ms")
    print(f"\nOpen {base}/courses/{course['id']} — ask a question, click a chip to jump to the moment.")
    print(f"Admin token (for the API): {token}   Stop everything with: make down")
    print(f"(the demo took {time.time() - t_all:.0f} s)")


def _demo_video(settings: Settings) -> Path:
    """The demo video under ``<data_dir>/demo/``, made (Piper voice + slides) when it is not there yet."""
    video = settings.data_dir / "demo" / "mit6006-l4-hashing-demo-piper-slides.mp4"
    if not video.exists():
        print("Making the demo video (MIT 6.006 L4 narrated by Piper's neural voice + rendered slides)...")
        res = synth_lecture(demo_parts(), video, voice=PIPER_VOICE)
        print(f"  {video} ({res.duration_s:.0f} s)")
    return video


def _demo_course(base: str, auth: dict) -> dict:
    """The course titled :data:`DEMO_COURSE` (``{"id", ...}``), created when there is none."""
    courses = requests.get(f"{base}/api/courses", timeout=10).json()["courses"]
    course = next((c for c in courses if c["title"] == DEMO_COURSE), None)
    if course is None:
        course = requests.post(f"{base}/api/courses", json={"title": DEMO_COURSE}, headers=auth, timeout=10).json()
    return course


def _upload_and_wait(settings: Settings, base: str, auth: dict, course_id: str, video: Path) -> None:
    """Uploads ``video`` as lecture 4 of the course through the public API, prints its progress
    until it is ready, then the upload-to-ready time. Raises ``SystemExit`` when processing fails."""
    duration = probe(video).duration_s
    t0 = time.time()
    with open(video, "rb") as f:
        r = requests.post(f"{base}/api/courses/{course_id}/lectures", headers=auth,
                          files={"video": (video.name, f, "video/mp4")},
                          data={"title": "Hashing (narrated excerpt)", "number": "4"}, timeout=600)
    r.raise_for_status()
    lecture_id = r.json()["lecture_id"]
    print(f"Uploaded lecture {lecture_id}; processing with whisper '{settings.whisper_model}'...")
    last = None
    while True:
        st = requests.get(f"{base}/api/lectures/{lecture_id}", timeout=10).json()
        line = f"  {st['status']:<10} {st['stage']:<12} {st['progress'] * 100:5.1f}%"
        if line != last:
            print(line, flush=True)
            last = line
        if st["status"] in ("ready", "failed"):
            break
        time.sleep(1)
    if st["status"] == "failed":
        raise SystemExit(f"Processing failed: {st['error']}")
    took = time.time() - t0
    print(f"Ready: {duration:.0f} s of video in {took:.1f} s upload-to-ready "
          f"(real-time factor {took / duration:.3f})")


def _ask_questions(base: str, auth: dict, course_id: str) -> list[float]:
    """Asks :data:`DEMO_QUESTIONS` (printing the cited answers), then the first one ten times more;
    returns each ask's latency in milliseconds. Raises ``SystemExit`` when an answer fails."""
    latencies = []
    for q in DEMO_QUESTIONS:
        t0 = time.perf_counter()
        # asked as the operator (not rate-limited), so the demo leaves a visitor's daily questions alone
        r = requests.post(f"{base}/api/courses/{course_id}/ask", json={"question": q}, headers=auth, timeout=60)
        latencies.append((time.perf_counter() - t0) * 1000)
        if r.status_code != 200:
            raise SystemExit(f"Asking failed ({r.status_code}): {r.text[:300]}")
        ans = r.json()
        print(f"\nQ: {q}")
        if ans["declined"]:
            print(f"A: {ans['answer']}  (declined, no citations)")
        for s in ans["sentences"] if not ans["declined"] else []:
            print(f"A: {s['text']}  [{', '.join(c['label'] for c in s['citations'])}]")
    for _ in range(10):
        t0 = time.perf_counter()
        requests.post(f"{base}/api/courses/{course_id}/ask", json={"question": DEMO_QUESTIONS[0]}, headers=auth,
                      timeout=60).raise_for_status()
        latencies.append((time.perf_counter() - t0) * 1000)
    return latencies
