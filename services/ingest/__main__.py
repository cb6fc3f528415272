"""``python -m services.ingest``: the ingest service (HTTP, internal)."""

from lecturecopilot.httpserve import ServerLimits, run_wsgi
from lecturecopilot.settings import get_settings

from .app import create_app

if __name__ == "__main__":
    s = get_settings()
    run_wsgi(create_app, host=s.ingest_host, port=s.ingest_port, limits=ServerLimits(
        threads=16, timeout_s=3600, header_timeout_s=s.header_timeout_s, send_timeout_s=s.send_timeout_s))
