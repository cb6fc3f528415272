"""The hand-kept part of docs/settings.md: which settings share a row, and what each row means.

Each row is ``(names, meaning)``. A name is a field of ``lecturecopilot.settings.Settings`` (its
variables and default are read from the class by ``scripts/gen_settings_doc.py``) or a variable read
straight from the environment, listed in ``EXTERNAL`` with its default as text (the generator adds
the modules that read it). ``scripts/gen_settings_doc.py`` fails when a field or a variable the code
reads has no row, or a row names something that does not exist, so the page cannot drift from the code.
"""

from __future__ import annotations

# variables read outside Settings: name -> default, as the page shows it
EXTERNAL = {
    "LC_TEST_NATS": "unset",
    "LC_TEST_PG": "unset",
    "AWS_ENDPOINT_URL": "unset",
    "AWS_ACCESS_KEY_ID": "unset",
    "AWS_SECRET_ACCESS_KEY": "unset",
    "AWS_REGION": "unset",
    "AWS_DEFAULT_REGION": "unset",
    "LC_MODEL_CACHE": "`~/.cache/lecture-copilot`",
    "LC_APT_LOCK_TIMEOUT_S": "600",
    "OTEL_EXPORTER_OTLP_ENDPOINT": "unset",
    "LC_OTEL_CONSOLE": "unset",
    "LC_LOG_FORMAT": "`json`",
}

ROWS: list[tuple[tuple[str, ...], str]] = [
    (("database_url",), "Postgres URL (unset: embedded)"),
    (("nats_url",), "NATS URL (JetStream on; unset: embedded); several servers of one cluster comma-separated "
     "(`nats://a:4222,nats://b:4222`): every client gets the list and moves to another server when its own goes away"),
    (("embedded_nats_port", "stream"), "the embedded nats-server's port; the JetStream stream of the `lecture.*` subjects"),
    (("LC_TEST_NATS",), "tests only: `embedded` makes a test session start its own nats-server instead of using the "
     "machine's on 4222"),
    (("LC_TEST_PG",), "tests only: `embedded` makes a test session's stack use the embedded Postgres 18 with pgvector "
     "(under its data dir) instead of the machine's Postgres 15 on 5432 (with other pytest sessions starting beside "
     "it, give `--basetemp` outside `/tmp/pytest-of-root`: each new session makes that folder root-only again, and "
     "the embedded Postgres runs as the `pgserver` user)"),
    (("data_dir",), "media, embedded stores, logs, pid files (a relative path is from the folder a command runs in)"),
    (("media_url", "media_path_style", "media_cache_s", "media_cache_bytes"),
     "object storage for media, `s3://bucket/prefix` (unset: the folder `<LC_DATA_DIR>/media`); path-style "
     "addressing (MinIO); with object storage, local copies untouched this long (seconds) are removed, and the least "
     "recently used ones past this many bytes (see [Deployment](deployment.md#object-storage))"),
    (("video_url_s",), "with object storage, how long the presigned video URL `/video` redirects to stays valid "
     "(seconds): the window in which a URL handed out before a course turned private or a member was removed still "
     "plays; the player asks for a fresh one when its own expires"),
    (("media_public_endpoint",), "with object storage, the store's endpoint as viewers' browsers reach it (unset: "
     "`AWS_ENDPOINT_URL`): presigned video URLs and the CSP origin use it when the services reach the store under "
     "another name (an in-cluster MinIO)"),
    (("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "AWS_DEFAULT_REGION"),
     "with `LC_MEDIA_URL`: the S3-compatible store and its keys, read by boto3; unset endpoint = AWS S3"),
    (("whisper_model",), "`base`, `tiny.en` (packaged) or any faster-whisper model name/path"),
    (("whisper_threads", "whisper_compute_type"), "CPU threads of one transcribe worker (1 when several workers share "
     "the cores, see [Measurements](measurements.md)); CTranslate2 compute type"),
    (("whisper_beam_size",), "the decoder's beam width: 5 (faster-whisper's default) hears more of the slides' terms "
     "than 1 (greedy) for 1.5–2× the decoding time; 1 when speed matters more (see "
     "[Measurements](measurements.md#processing-a-lecture))"),
    (("asr_vocabulary",), "prompt speech recognition, window by window, with the course's own spelling (slides on "
     "screen, titles, other lectures' slide terms; see [How it works](how-it-works.md#speech-recognition))"),
    (("asr_respell",), "respell a misheard term as the slide on screen spells it (\"phylocoid\" → \"thylakoid\" while "
     "a slide says \"thylakoid\"; `services/transcribe/respell.py`)"),
    (("embed_model",), "the packaged MiniLM, or any sentence-transformers model path"),
    (("LC_MODEL_CACHE",), "where the packaged whisper `base` is joined once"),
    (("LC_APT_LOCK_TIMEOUT_S",), "how long apt waits for another apt/dpkg's lock before the set-up fails"),
    (("admin_token",), "accepted as an admin bearer token (unset: `make demo` writes `.lc-data/admin_token`)"),
    (("max_upload_bytes", "max_duration_s"), "largest upload (2 GiB) and longest lecture (video or captions) accepted"),
    (("max_video_pixels",), "largest video frame (width × height; 3840×2160) accepted; a small file of huge frames is "
     "refused at upload (reading its slides would take gigabytes), and so is a video of more pixels a second than this "
     "frame at 60 frames a second (slide reading decodes every frame)"),
    (("header_timeout_s",), "the gateway and ingest drop a connection whose request line and headers have not all "
     "arrived in this many seconds (a client trickling headers held a thread each: 16 of them stopped the gateway)"),
    (("max_waiting_per_client",), "gateway threads one client (an address; an IPv6 /64) may hold at once waiting for "
     "its bytes (a request's line, headers or body, its close); one more connection is answered 429 at once (one "
     "client's half-sent requests held all 16 threads before); unset: 6, or no cap behind `LC_PROXY_HOPS`; 0: no cap"),
    (("max_connections_per_client",), "connections one client (an address; an IPv6 /64) may have open to a gateway "
     "process at once; one more is answered 429 at once (gunicorn accepts nothing while a process holds 1000, and one "
     "client opening and keeping hundreds a second stalled everyone); unset: 500, or no cap behind `LC_PROXY_HOPS`; "
     "0: no cap"),
    (("send_timeout_s",), "the gateway and ingest drop a connection whose client does not take one write of its "
     "response (a block of a video, a whole JSON answer) within this many seconds (16 clients that never read a public "
     "video held every thread, and `/healthz` went unanswered); a connection that ends waits at most 0.5 s, in its own "
     "thread, for the client's close"),
    (("smtp_host", "smtp_port", "mail_from", "public_url"), "mail for sign-in links and ready/failed notices (off "
     "while the host is unset); links point at the public URL (unset: `http://127.0.0.1:` + `LC_GATEWAY_PORT`)"),
    (("smtp_user", "smtp_password", "smtp_starttls"), "SMTP login and STARTTLS for a real relay"),
    (("admin_emails", "operator_email"), "admins by email; where the contact form writes and where notices of courses "
     "without an owner go"),
    (("secret_key",), "signs session cookies, keys the people hash of the rate limits (unset: random, kept in "
     "`.lc-data/secret_key`)"),
    (("cookie_secure", "session_days", "login_link_minutes"), "the session cookie's Secure flag (unset: "
     "`LC_PUBLIC_URL` is https); how long a session lasts (days); how long a mailed sign-in link works (minutes)"),
    (("ask_limit_visitor", "ask_limit_user", "ask_limit_visitor_total", "ask_limit_user_total", "signin_limit",
      "contact_limit"), "rate limits (see [Limits and security](limits-and-security.md))"),
    (("quiz_answer_limit", "quiz_report_limit"), "practice submissions an hour and question reports a day per person"),
    (("search_limit_visitor", "search_limit_user"), "searches a day per person across all courses, visitor / signed "
     "in (admins: unlimited)"),
    (("feedback_limit",), "answer ratings an hour per person (one rating per person per answer is kept)"),
    (("note_limit", "notes_per_user", "notes_export_limit"), "note writes (add, edit, delete) an hour per person "
     "(admins: unlimited); notes one account may keep on the courses it can see (beyond: 409 `too_many_notes`); "
     "Markdown exports of notes an hour per person (admins: unlimited)"),
    (("proxy_hops", "max_json_bytes"), "trusted reverse proxies in front of the gateway (`X-Forwarded-For`, `-Proto`, "
     "`-Host`); largest non-upload request body"),
    (("max_event_streams", "max_event_streams_person", "event_stream_max_s"), "live progress streams (SSE) open at "
     "once per gateway process and per person, and how long one stays open (see [HTTP API](http-api.md))"),
    (("max_video_streams", "max_video_streams_person"), "video bodies one gateway process sends at once, and to one "
     "person (account, else address; an IPv6 address counts as its /64); signed-out people together get at most half "
     "of them; beyond: 429 `too_many_streams`, `Retry-After: 2` (waves of clients that never read a video held every "
     "thread for 30 s each; with `LC_MEDIA_URL` the store sends videos)"),
    (("gateway_port", "ingest_port", "ask_port"), "service ports"),
    (("port_offset",), "added to every port not set on its own (the three above, the health ports, "
     "`LC_EMBEDDED_NATS_PORT`): one setting moves a whole stack; `make up` keeps it in `<data_dir>/port_offset`, which "
     "later commands with that data folder read when it is unset (else 0; see "
     "[Running the stack](usage.md#running-the-stack))"),
    (("gateway_host", "ingest_host", "ask_host"), "where each listens (and where the others reach ingest and ask)"),
    (("health_host", "health_port_transcribe", "health_port_index", "health_port_ask"), "`/healthz` and `/readyz` of "
     "the workers and ask (0.0.0.0 in pods); gateway and ingest answer them on their own ports (the gateway's "
     "`/readyz` is 503 `ask_unavailable` while ask does not answer a call within 0.8 s, as well as "
     "`database_unavailable` without Postgres); every answer names the process in `LC-Pid`"),
    (("gate_threshold", "gate_coverage_weight"), "relevance gate: window cosine + weight × the share of the question's "
     "topic words the top 3 passages say (IDF over the course and 10 passages of general English) (see "
     "`services/ask/gate.py`)"),
    (("upload_idle_s", "uploads_open_max", "upload_disk_reserve_bytes"), "resumable uploads: idle expiry (also the age "
     "past which ingest's sweeper takes unfinished multipart uploads, spool files and objects of no lecture for "
     "leftovers, see [Deployment](deployment.md#object-storage)), open uploads per person (admins not capped), free "
     "space a new upload must leave beyond what open ones expect (see [Resumable upload](usage.md#resumable-upload))"),
    (("upload_min_chunk_bytes",), "with `LC_MEDIA_URL` (object storage), the smallest chunk of a resumable upload but "
     "its last (400 `chunk_too_small` below); 5 MiB is S3's multipart minimum"),
    (("upload_chunk_timeout_s", "upload_timeout_s", "upload_stall_s"), "longest a chunk PUT's body / a multipart "
     "upload's body may take to arrive, longest pause in either (408 beyond, nothing of it kept)"),
    (("upload_relays_max", "body_timeout_s"), "upload bodies one gateway process streams to ingest at once (503 "
     "`uploads_busy` with `Retry-After` beyond); longest any other request body may take"),
    (("max_deliver", "ack_wait_s"), "deliveries before dead-letter; ack wait (in-progress acks extend it)"),
    (("transcribe_concurrency", "slides_concurrency", "webcopy_concurrency", "index_concurrency"), "lectures one "
     "worker process runs at once in that stage (each its own message, in-progress acks, idempotency key)"),
    (("stream_replicas", "graceful_timeout_s"), "JetStream stream replicas (3 on a NATS cluster); on SIGTERM a worker "
     "waits this long for the message in flight"),
    (("nats_reconnect_wait_s", "publish_retry_s"), "clients reconnect forever, waiting this long between attempts; a "
     "publish that gets no answer (a cluster electing a stream leader) is retried this long (the `Nats-Msg-Id` keeps "
     "it from being stored twice)"),
    (("groq_api_key", "gemini_api_key", "openai_base_url"), "optional cloud / local answer writers (`GOOGLE_API_KEY` "
     "works for Gemini too)"),
    (("groq_model", "gemini_model", "openai_model"), "the writers' models"),
    (("groq_base_url", "gemini_base_url", "openai_api_key"), "other endpoints for the Groq and Gemini clients (e.g. a "
     "proxy); a key for the OpenAI-compatible server if it needs one"),
    (("writer_order", "writer_timeout_s"), "fallback order; a writer's connect and per-read timeout (seconds)"),
    (("writer_deadline_s", "writer_max_chars", "writer_max_tokens"), "bounds on the cloud writers: the longest they "
     "may take over one answer, all writers and attempts together (wall clock, seconds; then the extractive answer, or "
     "what was shown so far, with `reason` `writer_took_too_long`); the characters ask reads from one stream (more is "
     "that writer's failure; `writer_answer_too_long`); the token cap sent to the API (`max_tokens`, Gemini's "
     "`max_output_tokens`)"),
    (("writer_streams_max",), "writer streams one ask process keeps open at once; a question beyond them gets the "
     "extractive answer at once (`reason` `writers_busy`); ask's gRPC server has 8 threads besides, so searches and "
     "other calls never wait behind writer streams"),
    (("rerank_timeout_s", "rerank_model"), "with a cloud writer configured, the top 12 passages go to a model "
     "(the first configured writer's provider; unset model: that writer's own) that keeps the 6 most likely to answer, "
     "best first; the step's cap (wall clock, seconds, > 0 and ≤ 30; on a time-out, an error, an over-quota answer or "
     "a reply that does not parse, the search order is used unchanged). No key: no rerank, no cost"),
    (("qdrant_url", "qdrant_api_key", "qdrant_collection", "qdrant_replication_factor"), "a Qdrant server for the "
     "search points, written by index (and ingest's deletes), read by ask (qdrant-client; BM25 IDF kept per course); "
     "unset = each ask process's embedded qdrant-edge shard"),
    (("search_profile",), "memory layout of ask's embedded shard (`lecturecopilot/shard_config.py`): `ram` is "
     "qdrant-edge's defaults (float32 vectors cached in memory, a global HNSW graph, the BM25 index in RAM); `disk` "
     "keeps int8-quantized vectors in RAM (rescored with the originals) and memory-maps the original vectors, payload "
     "and BM25 index, for replicas holding many courses (see [Measurements](measurements.md#search-index-at-scale)); "
     "ignored with `QDRANT_URL` (no embedded shard)"),
    (("ask_target_uri",), "several ask replicas for the gateway, balanced per call (`ipv4:127.0.0.1:50051,127.0.0.1:50052`, "
     "`dns:///ask-headless:50051`)"),
    (("OTEL_EXPORTER_OTLP_ENDPOINT", "LC_OTEL_CONSOLE", "LC_LOG_FORMAT"), "OTLP/HTTP export, or `1` to print spans to "
     "the log, else off; `text` for plain log lines (see [How it works](how-it-works.md#telemetry)); the SDK's own "
     "`OTEL_*` variables (`OTEL_BSP_SCHEDULE_DELAY`, `OTEL_METRIC_EXPORT_INTERVAL`, ms) apply"),
]
