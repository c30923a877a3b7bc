"""A mitmdump script loaded after the gateway: writes every answer the client got (the body the
gateway's `response` hook left in the flow: what the client received) to `$CLIENT_ANSWERS_DIR`, one
file per flow, so a test can validate it event by event, and beside it the flow's report (the
gateway's `flow.metadata["gateway"]`: dropped, cosmetic, notes)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from mitmproxy import http


def response(flow: http.HTTPFlow) -> None:
    if flow.response is None or "gateway" not in flow.metadata:
        return
    folder = Path(os.environ["CLIENT_ANSWERS_DIR"])
    folder.mkdir(parents=True, exist_ok=True)
    kind = "sse" if "event-stream" in flow.response.headers.get("content-type", "") else "json"
    (folder / f"{flow.id}.{flow.response.status_code}.{kind}").write_bytes(flow.response.content or b"")
    (folder / f"{flow.id}.report").write_text(json.dumps(flow.metadata["gateway"], default=str))
