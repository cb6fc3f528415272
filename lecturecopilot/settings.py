"""One typed settings object, read from the environment (pydantic-settings).

Unset ``DATABASE_URL`` / ``NATS_URL`` mean "embedded": :mod:`lecturecopilot.embedded`
starts an embedded Postgres (with pgvector) and a nats-server with JetStream under
``LC_DATA_DIR``. Unset ``QDRANT_URL`` means the ask service keeps an embedded Qdrant
(qdrant-edge) shard of its own, synced from Postgres.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Settings of every service. Field names map to ``LC_<NAME>`` unless an alias says otherwise."""

    model_config = SettingsConfigDict(env_prefix="LC_", extra="ignore", populate_by_name=True)

    data_dir: Path = Field(default=Path(".lc-data"), description="Embedded stores, media and caches (a relative "
                           "path is taken from the folder the command runs in).")
    database_url: str | None = Field(default=None, validation_alias=AliasChoices("DATABASE_URL", "LC_DATABASE_URL"))
    nats_url: str | None = Field(default=None, validation_alias=AliasChoices("NATS_URL", "LC_NATS_URL"))
    qdrant_url: str | None = Field(default=None, validation_alias=AliasChoices("QDRANT_URL", "LC_QDRANT_URL"))
    qdrant_api_key: str | None = Field(default=None, validation_alias=AliasChoices("QDRANT_API_KEY", "LC_QDRANT_API_KEY"))
    qdrant_collection: str = "lecture_copilot"
    qdrant_replication_factor: int = Field(default=1, description="Replicas of each shard when the collection is created.")
    search_profile: Literal["ram", "disk"] = Field(default="ram", description="Memory layout of ask's embedded "
                                                   "shard (services.ask.shard_config): ram = all in RAM; disk = "
                                                   "int8 vectors in RAM, originals, payload and BM25 index mmapped.")
    embedded_nats_port: int = 4223
    media_url: str | None = Field(default=None, description="Object storage for media: s3://bucket/prefix (any "
                                  "S3-compatible store; endpoint and keys from AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, "
                                  "AWS_SECRET_ACCESS_KEY, AWS_REGION). Unset: the local folder <data_dir>/media.")
    media_public_endpoint: str | None = Field(default=None, description="With object storage: the store's "
                                              "endpoint as viewers' browsers reach it (presigned video URLs are "
                                              "signed for it), when the services use another (an in-cluster "
                                              "MinIO name). Unset: AWS_ENDPOINT_URL.")
    media_path_style: bool = Field(default=False, description="Path-style S3 addressing (MinIO and most "
                                   "self-hosted stores); off: boto3's default.")
    media_cache_s: float = Field(default=86400.0, gt=0, description="With object storage: a lecture's local copies "
                                 "untouched this many seconds are removed when the next object is downloaded.")
    media_cache_bytes: int = Field(default=8 << 30, gt=0, description="With object storage: before a download, "
                                   "the least recently used local lecture copies (not those being worked on) are "
                                   "removed until the copies and the download fit in this many bytes (8 GiB).")
    video_url_s: int = Field(default=600, ge=1, le=7 * 24 * 3600, description="With object storage: how long a "
                             "presigned video URL the player is sent to stays valid (seconds; SigV4 allows 7 days "
                             "at most). Access is checked when a URL is handed out, so after a course turns private "
                             "or a member is removed a URL given out earlier still plays for up to this long; the "
                             "player asks for a fresh one when its URL expires.")

    stream: str = Field(default="LECTURES", description="JetStream stream holding the lecture.* subjects.")
    max_deliver: int = Field(default=5, description="Deliveries of one event before it goes to the dead-letter subject.")
    ack_wait_s: float = Field(default=60.0, description="JetStream ack wait; long stages send in-progress acks.")
    stream_replicas: int = Field(default=1, ge=1, le=5, description="JetStream stream replicas (3 on a 3-node NATS cluster).")
    nats_reconnect_wait_s: float = Field(default=2.0, gt=0, description="Wait between two reconnect attempts to a "
                                         "NATS server; clients reconnect forever, trying each server of NATS_URL.")
    publish_retry_s: float = Field(default=30.0, ge=0, description="A JetStream publish that fails for want of an "
                                   "answer (a cluster electing a stream leader, a reconnect) is retried for this long.")
    graceful_timeout_s: float = Field(default=15.0, description="On SIGTERM a worker waits this long for the message in flight.")
    # messages of one consumer a worker process runs at once (different lectures side by side,
    # so a short lecture does not queue behind a long one's stage); see lecturecopilot/worker.py
    transcribe_concurrency: int = Field(default=2, ge=1, description="Transcriptions at once per transcribe process.")
    slides_concurrency: int = Field(default=2, ge=1, description="Slide readings at once per transcribe process.")
    webcopy_concurrency: int = Field(default=2, ge=1, description="Web copies at once per transcribe process.")
    index_concurrency: int = Field(default=2, ge=1, description="Indexings at once per index process.")

    whisper_model: str = Field(default="base", description="'tiny.en' or 'base' (packaged), or any faster-whisper name/path.")
    whisper_compute_type: str = "int8"
    whisper_threads: int = 2
    whisper_beam_size: int = Field(default=5, ge=1, le=10, description="Whisper's beam width (1: greedy decoding; 5, "
                                   "faster-whisper's and Whisper's own default, hears more slide terms for 1.5-2x "
                                   "the decoding time: evals.slide_terms --beam, bench.pipeline --beams).")
    asr_vocabulary: bool = Field(default=True, description="Prompt speech recognition with the course's vocabulary "
                                 "(its slides and titles, services/transcribe/vocabulary.py).")
    asr_respell: bool = Field(default=True, description="Respell a misheard term as the slide on screen spells it "
                              "(services/transcribe/respell.py).")
    embed_model: str = Field(default="packaged:all-MiniLM-L6-v2", description="sentence-transformers model or path.")

    port_offset: int | None = Field(default=None, ge=0, le=15000, description="Added to every port of the stack "
                                    "that is not set on its own (gateway 8080, ingest 8081, ask 50051, the health "
                                    "ports 8091-8093, the embedded NATS 4223), to run a second stack beside another. "
                                    "`up` keeps it in <data_dir>/port_offset; unset, the one kept there is used, so "
                                    "a command in another shell reaches the running stack (else 0).")
    gateway_host: str = "127.0.0.1"
    gateway_port: int = 8080
    ingest_host: str = "127.0.0.1"
    ingest_port: int = 8081
    ask_host: str = "127.0.0.1"
    ask_port: int = 50051
    ask_target_uri: str | None = Field(default=None, description=(
        "gRPC target naming several ask replicas, balanced per call (round_robin), e.g. "
        "'ipv4:127.0.0.1:50051,127.0.0.1:50052' or 'dns:///ask-headless.ns.svc:50051' (gRPC naming doc)."))
    health_host: str = Field(default="127.0.0.1", description="Where /healthz and /readyz listen (0.0.0.0 in pods).")
    health_port_transcribe: int = 8091
    health_port_index: int = 8092
    health_port_ask: int = 8093

    admin_token: str | None = Field(default=None, description="Accepted as an admin bearer token when set.")
    max_upload_bytes: int = 2 * 1024**3
    max_duration_s: float = 2 * 3600.0
    max_video_pixels: int = Field(default=3840 * 2160, description="Largest video frame accepted (width × height; "
                                  "4K UHD): a tiny file of huge frames would take gigabytes to read slides from. "
                                  "Pixels a second are bounded by this frame at 60 frames a second.")

    # Uploads (services/ingest/resumable.py, the gateway's relays): limits on what waits and what crawls.
    upload_idle_s: float = Field(default=600.0, description="A resumable upload with no chunk for this long "
                                 "expires and its bytes are removed (each chunk restarts the clock).")
    uploads_open_max: int = Field(default=3, description="Resumable uploads one person may have open at once "
                                  "(admins are not limited).")
    upload_disk_reserve_bytes: int = Field(default=2 * 1024**3, description="Free space a new upload must leave "
                                           "in the media store beyond what open uploads still expect.")
    upload_chunk_timeout_s: float = Field(default=300.0, description="Longest a chunk PUT's body may take "
                                          "to arrive; a slower chunk is dropped, its bytes discarded.")
    upload_min_chunk_bytes: int = Field(default=5 * 1024**2, description="With object storage (LC_MEDIA_URL), "
                                        "the smallest chunk of a resumable upload except its last (400 "
                                        "chunk_too_small); 5 MiB is S3's multipart minimum. Bounds the objects "
                                        "(and reads at the finish) of one upload.")
    upload_timeout_s: float = Field(default=3600.0, description="Longest a multipart upload's body may take.")
    upload_stall_s: float = Field(default=30.0, description="An upload body that sends nothing for this long "
                                  "is dropped.")
    upload_relays_max: int = Field(default=6, description="Upload bodies one gateway process relays at once "
                                   "(each holds one of its 16 threads); beyond: 503 with Retry-After.")
    body_timeout_s: float = Field(default=10.0, description="Longest any other request body may take to arrive.")
    header_timeout_s: float = Field(default=10.0, description="Longest a request's line and headers may take to "
                                    "arrive (gateway, ingest): a client trickling headers loses its connection.")
    max_waiting_per_client: int | None = Field(default=None, ge=0, description="Gateway threads one client (an "
                                               "address; an IPv6 /64) may hold at once waiting for its request's "
                                               "line, headers or body; one more is answered 429 at once (0: no cap). "
                                               "Unset: 6 (the connections a browser opens to one host), or no cap "
                                               "behind a proxy (LC_PROXY_HOPS), whose one address stands for every "
                                               "client.")
    max_connections_per_client: int | None = Field(default=None, ge=0, description="Connections one client (an "
                                                   "address; an IPv6 /64) may have open to the gateway at once; "
                                                   "one more is answered 429 at once (0: no cap). Unset: 500 (half "
                                                   "of the 1000 a gateway process holds: a script that opens a "
                                                   "connection per request leaves hundreds closing), or no cap "
                                                   "behind a proxy (LC_PROXY_HOPS).")
    send_timeout_s: float = Field(default=30.0, description="Longest one write of a response (a block of a file, "
                                  "a whole JSON answer) may wait for the client to take it (gateway, ingest): a "
                                  "client that stops reading (a video it never reads) loses its connection and "
                                  "frees its thread (nginx's send_timeout, between two writes, is 60 s).")

    # chosen with one field or course held out at a time (python -m evals.gate_fields; see services/ask/gate.py)
    gate_threshold: float = Field(default=0.82, description="Relevance gate: window cosine + weight x coverage must reach this.")
    gate_coverage_weight: float = Field(default=0.75, description="Relevance gate: weight of the question's topic words said in the top passages.")

    # Cloud answer writers (optional; the product works with none). Tried in writer_order.
    writer_order: str = "groq,gemini,openai"
    writer_timeout_s: float = 10.0
    writer_deadline_s: float = Field(default=20.0, gt=0, description="The longest the cloud writers may take "
                                     "over one answer, every writer and attempt together (wall clock, seconds); "
                                     "then the answer is the extractive one (or what was shown so far).")
    writer_max_chars: int = Field(default=4000, gt=0, description="Characters of text ask reads from one writer "
                                  "stream; more is that writer's failure.")
    writer_max_tokens: int = Field(default=400, gt=0, description="The answer's token cap sent to the writer's API "
                                   "(max_tokens; Gemini's max_output_tokens).")
    writer_streams_max: int = Field(default=6, ge=1, description="Writer streams one ask process keeps open at once; "
                                    "a question beyond them is answered extractively at once (reason writers_busy).")
    rerank_timeout_s: float = Field(default=3.0, gt=0, le=30, description="With a cloud writer configured, the "
                                    "longest the rerank step (services/ask/rerank.py) may take over one question "
                                    "(wall clock, seconds; also its client's connect and per-read time-out); then "
                                    "the search order is used unchanged. At most 30.")
    rerank_model: str | None = Field(default=None, description="The model that reranks the top 12 passages "
                                     "(services/ask/rerank.py), on the first configured writer's provider "
                                     "(writer_order); a small fast one suits it (Groq: llama-3.1-8b-instant). "
                                     "Unset: that writer's own model (groq_model, gemini_model or openai_model).")
    groq_api_key: str | None = Field(default=None, validation_alias=AliasChoices("GROQ_API_KEY", "LC_GROQ_API_KEY"))
    groq_model: str = "llama-3.3-70b-versatile"
    groq_base_url: str | None = None
    gemini_api_key: str | None = Field(default=None, validation_alias=AliasChoices(
        "GEMINI_API_KEY", "GOOGLE_API_KEY", "LC_GEMINI_API_KEY"))
    gemini_model: str = "gemini-2.5-flash"
    gemini_base_url: str | None = None
    openai_base_url: str | None = Field(default=None, description="An OpenAI-compatible server, e.g. Ollama's /v1.")
    openai_api_key: str | None = Field(default=None, validation_alias=AliasChoices("OPENAI_API_KEY", "LC_OPENAI_API_KEY"))
    openai_model: str = "llama3.1"

    # Outgoing mail (lecture ready/failed notices, sign-in links). Off while smtp_host is unset.
    smtp_host: str | None = Field(default=None, description="SMTP server; mail is off while unset.")
    smtp_port: int = 25
    smtp_user: str | None = None
    smtp_password: str | None = None
    smtp_starttls: bool = False
    mail_from: str = "Lecture Copilot <noreply@localhost>"
    operator_email: str | None = Field(default=None, description="Where the contact form sends mail; also gets the "
                                       "ready/failed notices of courses without an owner's address.")
    public_url: str = Field(default="", description="Base URL used in links inside mails; unset: "
                            "http://127.0.0.1:<LC_GATEWAY_PORT>.")

    # Web product: sessions, sign-in links, limits (see services/gateway/). Counts per day/hour are
    # fixed windows counted atomically in Postgres; people are a keyed hash of account or IP.
    secret_key: str | None = Field(default=None, description="Signs session cookies and keys the people hash; "
                                   "unset: a random one kept in <data_dir>/secret_key.")
    cookie_secure: bool | None = Field(default=None, description="Secure cookies; unset: when public_url is https.")
    session_days: float = 14.0
    login_link_minutes: float = 15.0
    admin_emails: str = Field(default="", description="Comma-separated emails that are admins when they sign in.")
    proxy_hops: int = Field(default=0, description="Trusted reverse proxies in front of the gateway (X-Forwarded-For).")
    max_json_bytes: int = Field(default=64 * 1024, description="Largest non-upload request body.")
    max_event_streams: int = Field(default=6, description="Live progress streams (SSE) open at once in one gateway "
                                   "process; each holds one of its 16 threads. Beyond: 429, the page polls.")
    max_event_streams_person: int = Field(default=3, description="Live progress streams one person may hold open.")
    max_video_streams: int = Field(default=6, description="Video bodies one gateway process sends at once (each holds "
                                   "one of its 16 threads until the client has taken it or LC_SEND_TIMEOUT_S passes; "
                                   "beyond: 429 too_many_streams, Retry-After: 2). With LC_MEDIA_URL the store sends them.")
    max_video_streams_person: int = Field(default=3, description="Video bodies sent to one person (account, else "
                                          "address) at once.")
    event_stream_max_s: float = Field(default=120.0, description="A progress stream is closed after this many seconds; "
                                      "the browser reconnects (its slot goes back in the pool meanwhile).")
    ask_limit_visitor: int = Field(default=20, description="Questions a day per course for a visitor (not signed in).")
    ask_limit_user: int = Field(default=200, description="Questions a day per course for a signed-in user.")
    ask_limit_visitor_total: int = Field(default=60, description="Questions a day across all courses, visitor.")
    ask_limit_user_total: int = Field(default=600, description="Questions a day across all courses, signed in.")
    signin_limit: int = Field(default=5, description="Sign-in links an hour per visitor.")
    contact_limit: int = Field(default=3, description="Contact messages a day per visitor.")
    quiz_answer_limit: int = Field(default=300, description="Practice answer submissions an hour per person.")
    quiz_report_limit: int = Field(default=20, description="Practice question reports a day per person.")
    search_limit_visitor: int = Field(default=60, description="Searches a day across all courses for a visitor.")
    search_limit_user: int = Field(default=600, description="Searches a day across all courses for a signed-in user.")
    feedback_limit: int = Field(default=60, description="Answer ratings an hour per person (one rating per answer "
                                "per person is kept; a new one replaces it).")
    note_limit: int = Field(default=300, description="Note writes (add, edit, delete) an hour per person.")
    notes_export_limit: int = Field(default=60, description="Markdown exports of notes an hour per person (an export "
                                    "of the most notes takes seconds of the gateway's time).")
    notes_per_user: int = Field(default=2000, description="Notes one account may keep, across the lectures of the courses it can see.")

    @model_validator(mode="after")
    def _ports_follow_the_offset(self) -> "Settings":
        """``data_dir`` made absolute (from the current folder). Every port not set on its own is its
        default plus the port offset (``LC_PORT_OFFSET``, else the one ``up`` kept in
        ``<data_dir>/port_offset``, else 0); unset ``LC_PUBLIC_URL`` is the gateway on this machine at
        its port (a stack on another port mailed links to 8080)."""
        # absolute from here on: the services a command starts run in the checkout's folder, and must use
        # the same data folder as the command (its embedded stores, its media)
        self.data_dir = self.data_dir.expanduser().absolute()
        if self.port_offset is None:
            self.port_offset = kept_port_offset(self.data_dir)
        for name in PORT_SETTINGS:
            if name not in self.model_fields_set:
                setattr(self, name, getattr(self, name) + self.port_offset)
                if getattr(self, name) > 65535:
                    raise ValueError(f"LC_PORT_OFFSET={self.port_offset} moves {PORT_SETTINGS[name]} past port "
                                     "65535; choose a smaller offset")
        if not self.public_url:
            self.public_url = f"http://127.0.0.1:{self.gateway_port}"
        return self

    @property
    def admin_email_set(self) -> frozenset[str]:
        """``LC_ADMIN_EMAILS`` as a set of lower-case addresses (the gateway's sign-in, the CLI's owner check)."""
        return frozenset(e.strip().lower() for e in self.admin_emails.split(",") if e.strip())

    @property
    def media_dir(self) -> Path:
        """Folder of stored media; with ``media_url`` (object storage) the local working copy and cache."""
        return (self.data_dir / "media").resolve()

    @property
    def ingest_url(self) -> str:
        return f"http://{self.ingest_host}:{self.ingest_port}"

    @property
    def ask_target(self) -> str:
        """The gRPC target the gateway calls: ``ask_target_uri`` when set, else ``ask_host:ask_port``."""
        return self.ask_target_uri or f"{self.ask_host}:{self.ask_port}"


# the port settings LC_PORT_OFFSET moves, with the variable that sets each on its own
PORT_SETTINGS = {"gateway_port": "LC_GATEWAY_PORT", "ingest_port": "LC_INGEST_PORT", "ask_port": "LC_ASK_PORT",
                 "health_port_transcribe": "LC_HEALTH_PORT_TRANSCRIBE", "health_port_index": "LC_HEALTH_PORT_INDEX",
                 "health_port_ask": "LC_HEALTH_PORT_ASK", "embedded_nats_port": "LC_EMBEDDED_NATS_PORT"}
PORT_OFFSET_FILE = "port_offset"


def kept_port_offset(data_dir: Path) -> int:
    """The port offset ``up`` kept in ``data_dir`` (:func:`keep_port_offset`); 0 when none is kept."""
    try:
        return max(0, int((data_dir / PORT_OFFSET_FILE).read_text().strip()))
    except (OSError, ValueError):
        return 0


def keep_port_offset(settings: Settings) -> None:
    """Keeps ``settings.port_offset`` in the data folder, where the settings of any later command
    with this data folder (another shell, no ``LC_PORT_OFFSET``) find it."""
    path = settings.data_dir / PORT_OFFSET_FILE
    if kept_port_offset(settings.data_dir) != settings.port_offset or not path.exists():
        path.write_text(f"{settings.port_offset}\n")


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings (read once from the environment)."""
    s = Settings()
    s.data_dir = s.data_dir.resolve()
    s.data_dir.mkdir(parents=True, exist_ok=True)
    return s
