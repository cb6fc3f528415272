"""``python -m services.gateway``: the gateway (public HTTP API + web client)."""

from lecturecopilot.httpserve import ServerLimits, run_wsgi
from lecturecopilot.settings import get_settings

from .app import create_app

if __name__ == "__main__":
    s = get_settings()
    waiting = s.max_waiting_per_client if s.max_waiting_per_client is not None else 0 if s.proxy_hops else 6
    conns = s.max_connections_per_client if s.max_connections_per_client is not None else 0 if s.proxy_hops else 500
    run_wsgi(create_app, host=s.gateway_host, port=s.gateway_port, limits=ServerLimits(
        threads=16, header_timeout_s=s.header_timeout_s, send_timeout_s=s.send_timeout_s,
        waiting_per_client=waiting, connections_per_client=conns))
