"""``python -m services.gateway``: the gateway (public HTTP API + web client)."""

from lecturecopilot.httpserve import run_wsgi
from lecturecopilot.settings import get_settings

from .app import create_app

if __name__ == "__main__":
    s = get_settings()
    run_wsgi(create_app, host=s.gateway_host, port=s.gateway_port, threads=16, header_timeout_s=s.header_timeout_s,
             send_timeout_s=s.send_timeout_s)
