"""A local OTLP/HTTP receiver: decodes the protobuf export requests the services send to
``/v1/traces`` and ``/v1/metrics`` (opentelemetry-proto) and keeps the spans and metric names."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest, ExportMetricsServiceResponse)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest, ExportTraceServiceResponse)


@dataclass(frozen=True)
class Span:
    trace_id: str
    span_id: str
    parent_id: str
    name: str
    service: str
    attributes: dict


class OtlpCollector:
    """Listens on 127.0.0.1 at a free port; ``endpoint`` is the base URL to export to."""

    def __init__(self):
        self.spans: list[Span] = []
        self.metric_names: set[str] = set()
        self._lock = threading.Lock()
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server naming
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path == "/v1/traces":
                    collector._take_traces(ExportTraceServiceRequest.FromString(body))
                    out = ExportTraceServiceResponse().SerializeToString()
                elif self.path == "/v1/metrics":
                    collector._take_metrics(ExportMetricsServiceRequest.FromString(body))
                    out = ExportMetricsServiceResponse().SerializeToString()
                else:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def log_message(self, *args):
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def _take_traces(self, req: ExportTraceServiceRequest) -> None:
        with self._lock:
            for rs in req.resource_spans:
                service = next((a.value.string_value for a in rs.resource.attributes if a.key == "service.name"), "")
                for ss in rs.scope_spans:
                    for s in ss.spans:
                        attrs = {a.key: (a.value.string_value or a.value.int_value or a.value.bool_value)
                                 for a in s.attributes}
                        self.spans.append(Span(s.trace_id.hex(), s.span_id.hex(), s.parent_span_id.hex(), s.name,
                                               service, attrs))

    def _take_metrics(self, req: ExportMetricsServiceRequest) -> None:
        with self._lock:
            for rm in req.resource_metrics:
                for sm in rm.scope_metrics:
                    for m in sm.metrics:
                        self.metric_names.add(m.name)

    def wait_for(self, predicate, timeout_s: float = 30.0):
        """Polls ``predicate(spans)`` until it returns something truthy; returns it or raises TimeoutError."""
        deadline = time.time() + timeout_s
        while time.time() < deadline:
            with self._lock:
                got = predicate(list(self.spans))
            if got:
                return got
            time.sleep(0.3)
        raise TimeoutError(f"condition not met; span names seen: {sorted({s.name for s in self.spans})[:60]}")

    def close(self) -> None:
        self._server.shutdown()
