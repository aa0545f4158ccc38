"""Send logs with the OpenTelemetry Python SDK to an OTLP/HTTP logs endpoint.

Usage: otlp_logs.py URL N [--json]

URL is the full logs endpoint (spate: http://HOST:PORT/insert/opentelemetry/v1/logs).
N records are emitted through the SDK's Logger with fixed timestamps,
attributes of every kind, a trace context and a resource; they leave
through the SDK's OTLP/HTTP exporter (protobuf), or, with --json, are
encoded by the same SDK encoder and posted in the OTLP/HTTP JSON encoding
(the Python exporter has no JSON mode): ids as hex, as the spec says.
Prints one JSON object: {"records": N, "result": "..."}.
"""
import argparse
import base64
import json
import urllib.request

from google.protobuf import json_format
from opentelemetry import trace
from opentelemetry._logs import SeverityNumber
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

T0 = 1795600000 * 10**9  # 2026-11-25T09:46:40Z


def emit_all(provider, n):
    logger = provider.get_logger("shop.orders", "1.2.0")
    levels = [(SeverityNumber.INFO, "INFO"), (SeverityNumber.WARN, "WARN"), (SeverityNumber.ERROR, "ERROR")]
    for i in range(n):
        sc = SpanContext(trace_id=0x5B8EFFF798038103D269B633813FC60C + i, span_id=0xEEE19B7EC3C1B174 + i,
                         is_remote=False, trace_flags=TraceFlags(1))
        ctx = trace.set_span_in_context(NonRecordingSpan(sc))
        num, text = levels[i % 3]
        logger.emit(
            timestamp=T0 + i * 1_000_000,
            observed_timestamp=T0 + i * 1_000_000 + 5,
            context=ctx,
            severity_number=num,
            severity_text=text if i % 2 == 0 else None,
            body="order %d placed" % i,
            attributes={
                "order.id": i,
                "amount": i * 1.25,
                "paid": i % 2 == 0,
                "items": ["book", "pen"][: 1 + i % 2],
                "customer": "c%d" % (i % 7),
            },
        )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("n", type=int)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    resource = Resource.create({"service.name": "checkout", "deployment.environment": "test", "host.name": "web-1", "service.instance.id": "i-1"})
    provider = LoggerProvider(resource=resource)
    if not a.json:
        provider.add_log_record_processor(SimpleLogRecordProcessor(OTLPLogExporter(endpoint=a.url, timeout=30)))
        emit_all(provider, a.n)
        provider.shutdown()
        print(json.dumps({"records": a.n, "result": "exported"}))
        return
    mem = InMemoryLogRecordExporter()
    provider.add_log_record_processor(SimpleLogRecordProcessor(mem))
    emit_all(provider, a.n)
    provider.shutdown()
    req = json_format.MessageToDict(encode_logs(mem.get_finished_logs()))
    # protobuf's JSON mapping writes bytes in base64; OTLP/JSON wants the
    # trace and span ids in hex.
    for rl in req.get("resourceLogs", []):
        for sl in rl.get("scopeLogs", []):
            for r in sl.get("logRecords", []):
                for k in ("traceId", "spanId"):
                    if k in r:
                        r[k] = base64.b64decode(r[k]).hex()
    body = json.dumps(req).encode()
    httpreq = urllib.request.Request(a.url, data=body, method="POST", headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(httpreq, timeout=30) as resp:
        print(json.dumps({"records": a.n, "result": resp.read().decode(), "status": resp.status}))


if __name__ == "__main__":
    main()
