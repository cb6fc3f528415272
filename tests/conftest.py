"""Shared fixtures. Integration tests run the real stack: the machine's NATS (JetStream) and
Postgres when they answer on 127.0.0.1 (as on CI), else the embedded ones; real ffmpeg,
real faster-whisper (tiny.en from its package), real embeddings, embedded Qdrant. The machine's
Postgres 15 has no pgvector (embeddings in ``real[]`` columns); the embedded Postgres 18 has it
(``vector(384)``), also chosen with ``LC_TEST_PG=embedded`` (and NATS with ``LC_TEST_NATS=embedded``).
``test_pgvector.py`` runs on both servers in one session.

Each test session gets its own Postgres database and its own JetStream stream, both removed
at the end, and its own free ports, so it never touches a running demo.
"""

from __future__ import annotations

from pathlib import Path

import sys

import psycopg
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

ROOT = Path(__file__).resolve().parent.parent


class Stack:
    """The running stack (see ``lecturecopilot_ops.stack.Ephemeral``) plus a DB connection maker."""

    def __init__(self, eph):
        self._eph = eph
        self.settings = eph.settings
        self.base = eph.base
        self.db_url = eph.db_url
        self.nats_url = eph.nats_url
        self.admin = eph.admin
        self.create_course = eph.create_course
        self.wait_ready = eph.wait_ready
        self.mail = None  # the SmtpSink, set by the fixture
        self.otlp = None  # the OtlpCollector, set by the fixture

    def db(self):
        return psycopg.connect(self.db_url, autocommit=True)

    def upload_ready(self, course_id: str, video: Path, *, title: str, number: int, captions_vtt: str | None = None) -> str:
        """Uploads ``video`` (with ``captions_vtt`` text as its captions, if given) to the course through
        the API, waits until it is ``ready`` and returns the lecture id."""
        import requests

        files = {"video": (video.name, open(video, "rb"), "video/mp4")}
        if captions_vtt is not None:
            files["captions"] = ("captions.vtt", captions_vtt.encode(), "text/vtt")
        try:
            r = requests.post(f"{self.base}/api/courses/{course_id}/lectures", headers=self.admin, files=files,
                              data={"title": title, "number": str(number)}, timeout=120)
        finally:
            files["video"][1].close()
        assert r.status_code == 202 and r.json()["status"] == "queued", r.text
        lecture_id = r.json()["lecture_id"]
        st = self.wait_ready(lecture_id)
        assert st["status"] == "ready", st
        return lecture_id

    def course_with_video(self, title: str, video: Path, number: int) -> tuple[str, str]:
        """A new course with ``video`` (lecture "Sorting") uploaded through the API and processed to
        ``ready``: returns (course_id, lecture_id)."""
        course_id = self.create_course(title)
        return course_id, self.upload_ready(course_id, video, title="Sorting", number=number)


@pytest.fixture(scope="session")
def fake_llm():
    """The fake cloud-writer server (tests/fakes/llm_server.py); every provider starts "down",
    so answers come from the extractive writer unless a test switches a provider on."""
    from fakes.llm_server import FakeLLM

    fake = FakeLLM()
    yield fake
    fake.close()


@pytest.fixture
def modes(fake_llm):
    """``modes(groq="ok", ...)`` sets the fake writer's providers for this test (the others "down");
    every provider is "down" again after it."""
    import requests

    def set_modes(**kw):
        requests.post(f"{fake_llm.url}/_mode", json={"groq": "down", "gemini": "down", **kw}, timeout=5)
    yield set_modes
    set_modes()


@pytest.fixture(scope="session")
def smtp_sink():
    """A local SMTP server (aiosmtpd) the stack sends its mail to, keeping every mail it receives:
    ``.messages`` (``email.message.EmailMessage``), ``.port``, ``.wait_for(to or predicate, timeout_s)``."""
    from fakes.smtp_sink import SmtpSink

    sink = SmtpSink()
    yield sink
    sink.close()


@pytest.fixture(scope="session")
def otlp():
    """A local OTLP/HTTP receiver the stack exports its traces and metrics to (tests/fakes/otlp_collector.py)."""
    from fakes.otlp_collector import OtlpCollector

    collector = OtlpCollector()
    yield collector
    collector.close()


@pytest.fixture(scope="session")
def stack(tmp_path_factory, fake_llm, smtp_sink, otlp):
    from lecturecopilot_ops.stack import ephemeral

    writers = {"GROQ_API_KEY": "gsk_test", "LC_GROQ_BASE_URL": fake_llm.url, "GEMINI_API_KEY": "gm_test",
               "LC_GEMINI_BASE_URL": fake_llm.url, "LC_WRITER_TIMEOUT_S": "1.5", "LC_WRITER_ORDER": "groq,gemini",
               # the writers' bound over one answer, short so that its tests (test_writer_bounds.py) are quick
               "LC_WRITER_DEADLINE_S": "4",
               # the rerank step's cap (services/ask/rerank.py), short so that test_rerank.py's slow model is quick
               "LC_RERANK_TIMEOUT_S": "1.5"}
    mail = {"LC_SMTP_HOST": "127.0.0.1", "LC_SMTP_PORT": str(smtp_sink.port), "LC_OPERATOR_EMAIL": "operator@example.edu",
            "LC_ADMIN_EMAILS": "admin@example.edu"}
    telemetry = {"OTEL_EXPORTER_OTLP_ENDPOINT": otlp.endpoint, "OTEL_BSP_SCHEDULE_DELAY": "300",
                 "OTEL_METRIC_EXPORT_INTERVAL": "1000"}
    with ephemeral(tmp_path_factory.mktemp("lc-data"), extra_env={**writers, **mail, **telemetry}) as eph:
        st = Stack(eph)
        st.mail = smtp_sink
        st.otlp = otlp
        yield st


@pytest.fixture(autouse=True)
def _stack_services_run(request):
    """Fails a test that uses the session's stack at once when one of its services has ended
    (:func:`lecturecopilot_ops.stack.ended_services`), naming it with the end of its log, instead of
    letting the test wait out its time-outs against a dead service."""
    if "stack" in request.fixturenames:
        from lecturecopilot_ops.stack import log_tail, ended_services

        st = request.getfixturevalue("stack")
        ended = ended_services(st.settings)
        if ended:
            logs = st.settings.data_dir / "logs"
            pytest.fail("the stack's services ended: " + "; ".join(
                f"{name} {how}, its log ends:\n{log_tail(logs / (name + '.log'), 15)}" for name, how in ended.items()))
    yield


COUNTING = ("Counting sort is a linear time sorting algorithm for small integer keys. "
            "It counts how many times each key appears, using an array of counters. "
            "Then it walks through the counters in order and writes the keys back out. "
            "Its running time is order n plus u, where u is the size of the key range.")
MERGING = ("Merge sort is a divide and conquer algorithm. "
           "It splits the array into two halves and sorts each half recursively. "
           "Then it merges the two sorted halves with two pointers, always taking the smaller front element. "
           "Merge sort runs in order n log n time.")


@pytest.fixture(scope="session")
def synth_video(tmp_path_factory):
    """A two-part narrated slide video (espeak-ng + Pillow + ffmpeg, see synth.py):
    part 0 explains counting sort, part 1 merge sort. Returns (SynthResult, parts)."""
    from lecturecopilot_ops.synth import Part, synth_lecture

    parts = [Part("Counting sort", "Linear time for small integer keys", COUNTING),
             Part("Merge sort", "Divide and conquer", MERGING)]
    out = tmp_path_factory.mktemp("video") / "lecture.mp4"
    return synth_lecture(parts, out), parts


@pytest.fixture(scope="module")
def s3():
    """moto's S3 server on a free loopback port for one test module (``fakes/s3_server.py``: its
    bucket, a boto3 client, the ``AWS_*`` environment that points at it)."""
    from fakes.s3_server import S3Server

    server = S3Server()
    yield server
    server.close()
