"""An OTLP/HTTP trace receiver on 127.0.0.1 for the traces tests: it takes `POST /v1/traces` with
an `ExportTraceServiceRequest` in protobuf (the OTLP/HTTP binary encoding,
https://opentelemetry.io/docs/specs/otlp/#otlphttp), decodes it with the `opentelemetry-proto`
package and keeps every span; a body that is not one is answered 400, as a collector does."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from tests.support.loopback_http import Loopback, Received, RecordingHandler


@dataclass(frozen=True)
class Span:
    trace_id: str
    span_id: str
    parent_span_id: str
    name: str
    kind: int
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    status_code: int
    service: str


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return tuple(_value(v) for v in any_value.array_value.values)
    return getattr(any_value, kind) if kind else None


class OtlpReceiver(Loopback[None]):
    """`with OtlpReceiver() as otlp:` -> `otlp.url` (the OTLP endpoint), `otlp.spans`."""

    thread_name = "otlp-receiver"

    def __init__(self) -> None:
        self._spans: list[Span] = []
        self.refused = 0
        super().__init__()

    @property
    def spans(self) -> list[Span]:
        with self.lock:
            return list(self._spans)

    def answer(self, handler: RecordingHandler, received: Received) -> None:
        if received.method != "POST" or received.path != "/v1/traces" or \
                received.header("content-type") != "application/x-protobuf":
            with self.lock:
                self.refused += 1
            handler.send_whole(404 if received.path != "/v1/traces" else 415, {}, b"")
            return
        request = ExportTraceServiceRequest()
        try:
            request.ParseFromString(received.body)
        except DecodeError:
            with self.lock:
                self.refused += 1
            handler.send_whole(400, {}, b"")
            return
        spans = []
        for resource_spans in request.resource_spans:
            resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    spans.append(Span(
                        trace_id=span.trace_id.hex(), span_id=span.span_id.hex(),
                        parent_span_id=span.parent_span_id.hex(), name=span.name, kind=span.kind,
                        start_ns=span.start_time_unix_nano, end_ns=span.end_time_unix_nano,
                        attributes={a.key: _value(a.value) for a in span.attributes},
                        status_code=span.status.code, service=str(resource.get("service.name", ""))))
        with self.lock:
            self._spans.extend(spans)
        handler.send_whole(200, {"content-type": "application/x-protobuf"},
                           ExportTraceServiceResponse().SerializeToString())

    def wait_for(self, count: int, timeout: float = 30.0) -> list[Span]:
        """The spans once at least `count` arrived (the batch processor exports every few seconds)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if len(spans := self.spans) >= count:
                return spans
            time.sleep(0.2)
        return self.spans
