"""OpenTelemetry for every service: traces, metrics and JSON logs that carry the trace id.

Export follows the SDK's standard environment variables:

- ``OTEL_EXPORTER_OTLP_ENDPOINT`` set (e.g. ``http://otel-collector:4318``): traces and metrics
  go there over OTLP/HTTP (protobuf); ``OTEL_BSP_SCHEDULE_DELAY`` and
  ``OTEL_METRIC_EXPORT_INTERVAL`` (milliseconds) tune how often.
- else ``LC_OTEL_CONSOLE=1``: spans and metrics are printed to the service's log.
- else telemetry is off: the API's no-op tracer and meter cost next to nothing.

One request is one trace from the gateway through the gRPC call to ask (the gRPC
instrumentation carries the context in metadata) and its Postgres queries (psycopg
instrumentation). One lecture is one trace from the upload through every pipeline stage: the
ingest service injects the W3C ``traceparent`` into the ``lecture.uploaded`` message headers and
the workers' FastStream ``NatsTelemetryMiddleware`` continues it at each hop.

Logs: one JSON object per line (python-json-logger) with ``otelTraceID``/``otelSpanID`` added by
the OpenTelemetry logging instrumentation; ``LC_LOG_FORMAT=text`` for plain lines.
"""

from __future__ import annotations

import logging
import os

from opentelemetry import metrics, propagate, trace

_configured: dict[str, bool] = {}


def configure_logging(service: str) -> None:
    """Root logging at INFO for ``service``: JSON lines with the trace and span ids (or text when
    ``LC_LOG_FORMAT=text``)."""
    from opentelemetry.instrumentation.logging import LoggingInstrumentor

    LoggingInstrumentor().instrument(set_logging_format=False)
    handler = logging.StreamHandler()
    if os.environ.get("LC_LOG_FORMAT", "json") == "text":
        handler.setFormatter(logging.Formatter(f"%(asctime)s {service} %(levelname)s %(name)s: %(message)s"))
    else:
        from pythonjsonlogger.json import JsonFormatter

        handler.setFormatter(JsonFormatter(
            "%(asctime)s %(levelname)s %(name)s %(message)s %(otelTraceID)s %(otelSpanID)s",
            rename_fields={"asctime": "time", "levelname": "level", "name": "logger", "otelTraceID": "trace_id",
                           "otelSpanID": "span_id"},
            static_fields={"service": service}))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)


def setup(service: str) -> bool:
    """Configures logging, and tracing + metrics export for ``service`` (see module doc).

    Idempotent per process. Returns True when spans are exported (OTLP or console).
    """
    if service in _configured:
        return _configured[service]
    configure_logging(service)
    endpoint = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    console = os.environ.get("LC_OTEL_CONSOLE") == "1"
    if not endpoint and not console:
        _configured[service] = False
        return False
    from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import ConsoleMetricExporter, PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter

    resource = Resource.create({"service.name": f"lecture-copilot-{service}", "service.namespace": "lecture-copilot"})
    provider = TracerProvider(resource=resource)
    if endpoint:
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        reader = PeriodicExportingMetricReader(OTLPMetricExporter())
    else:
        provider.add_span_processor(BatchSpanProcessor(ConsoleSpanExporter()))
        reader = PeriodicExportingMetricReader(ConsoleMetricExporter())
    trace.set_tracer_provider(provider)
    metrics.set_meter_provider(MeterProvider(resource=resource, metric_readers=[reader]))
    PsycopgInstrumentor().instrument(enable_commenter=False)
    _configured[service] = True
    return True


def tracer(name: str = "lecture-copilot") -> trace.Tracer:
    """The tracer for our own spans (a no-op until :func:`setup` configured export)."""
    return trace.get_tracer(name)


def meter(name: str = "lecture-copilot") -> metrics.Meter:
    """The meter for our own metrics (a no-op until :func:`setup` configured export)."""
    return metrics.get_meter(name)


def grpc_metadata() -> list[tuple[str, str]]:
    """The current trace context as gRPC call metadata (``traceparent``; the server's gRPC
    instrumentation continues the trace from it)."""
    return list(inject({}).items())


def inject(headers: dict) -> dict:
    """Adds the current trace context (W3C ``traceparent``) to ``headers``; returns them."""
    propagate.inject(headers)
    return headers
