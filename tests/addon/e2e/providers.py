"""Recorded streams of the other dialects, cut into the chunks a local upstream sends, what a
client must read from them, and the SigV4 check of a local Bedrock.

Fixtures: `tests/data/{openai_chat,deepseek,gemini,bedrock}` (provenance in SOURCES.md).
Every event (SSE) or frame (event stream) is sent in two pieces, so the translator must join
partial events; Bedrock frames are split inside their 12-byte prelude.
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
import json
import re
from dataclasses import dataclass, field
from typing import Any

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.eventstream import EventStreamBuffer

from tests.addon.e2e.upstream import Received, Reply, json_reply
from tests.data import DATA

FIXTURES = DATA
EVENTSTREAM = "application/vnd.amazon.eventstream"


def _halves(pieces: list[bytes]) -> list[bytes]:
    out = []
    for piece in pieces:
        middle = len(piece) // 2
        out += [piece[:middle], piece[middle:]]
    return out


def sse_chunks(name: str) -> list[bytes]:
    """An `.sse` fixture as recorded (its own line endings), or a `.jsonl` one (one `data:`
    payload a line) framed as its server does: Chat Completions with `\\n\\n` and a closing
    `[DONE]`, Gemini (`alt=sse`) with `\\r\\n\\r\\n`."""
    raw = (FIXTURES / name).read_bytes()
    if name.endswith(".jsonl"):
        gemini = name.startswith("gemini/")
        end = b"\r\n\r\n" if gemini else b"\n\n"
        events = [b"data: " + line + end for line in raw.splitlines() if line.strip()]
        if not gemini:
            events.append(b"data: [DONE]\n\n")
        return _halves(events)
    separator = b"\r\n\r\n" if b"\r\n\r\n" in raw else b"\n\n"
    events = [block + separator for block in raw.split(separator) if block.strip()]
    return _halves(events)


def eventstream_frames(name: str) -> list[bytes]:
    """The frames of a binary `.eventstream` fixture (each starts with its total length)."""
    raw, frames = (FIXTURES / name).read_bytes(), []
    while raw:
        length = int.from_bytes(raw[:4], "big")
        frames.append(raw[:length])
        raw = raw[length:]
    return frames


def eventstream_chunks(name: str) -> list[bytes]:
    """Each frame in two pieces, the first ending inside the prelude (after 5 bytes)."""
    return [piece for frame in eventstream_frames(name) for piece in (frame[:5], frame[5:])]


def sse_payloads(name: str) -> list[dict[str, Any]]:
    out = []
    for chunk in b"".join(sse_chunks(name)).replace(b"\r\n", b"\n").split(b"\n"):
        if chunk.startswith(b"data:") and chunk[5:].strip() != b"[DONE]":
            out.append(json.loads(chunk[5:]))
    return out


@dataclass
class ChatAnswer:
    """What a Chat Completions stream says: text, reasoning, calls (name -> arguments)."""

    text: str = ""
    reasoning: str = ""
    calls: list[tuple[str, str]] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)


def chat_answer(name: str) -> ChatAnswer:
    answer, arguments = ChatAnswer(), {}
    for chunk in sse_payloads(name):
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            answer.text += delta.get("content") or ""
            answer.reasoning += delta.get("reasoning_content") or ""
            for call in delta.get("tool_calls") or []:
                function = call.get("function") or {}
                if function.get("name"):
                    answer.calls.append((function["name"], ""))
                index = call["index"]
                arguments[index] = arguments.get(index, "") + (function.get("arguments") or "")
        if chunk.get("usage"):
            answer.usage = chunk["usage"]
    answer.calls = [(call_name, arguments[i]) for i, (call_name, _) in enumerate(answer.calls)]
    return answer


def gemini_parts(name: str) -> list[dict[str, Any]]:
    return [part for chunk in sse_payloads(name) for candidate in chunk.get("candidates") or []
            for part in (candidate.get("content") or {}).get("parts") or []]


def gemini_text(name: str) -> str:
    return "".join(p.get("text", "") for p in gemini_parts(name) if not p.get("thought"))


def bedrock_events(name: str) -> list[tuple[str, dict[str, Any]]]:
    """(event type, payload) of a recorded ConverseStream, decoded by botocore."""
    buffer = EventStreamBuffer()
    buffer.add_data((FIXTURES / name).read_bytes())
    return [(message.headers[":event-type"], json.loads(message.payload)) for message in buffer]


def bedrock_text(name: str) -> str:
    return "".join(payload["delta"].get("text", "") for kind, payload in bedrock_events(name)
                   if kind == "contentBlockDelta")


_SIGV4 = re.compile(r"AWS4-HMAC-SHA256 Credential=(?P<key>[^/]+)/(?P<date>\d{8})/(?P<region>[^/]+)/"
                    r"(?P<service>[^/]+)/aws4_request, ?SignedHeaders=(?P<signed>[^,]+), ?"
                    r"Signature=(?P<signature>[0-9a-f]{64})$")


@dataclass
class Bedrock:
    """A local Bedrock's door: it knows one key pair (SigV4, region and service fixed) and one
    API key (Bearer), and turns anything else away with Bedrock's 403. The SigV4 signature is
    recomputed with botocore from the request exactly as it arrived: method, raw path and
    query, the headers named in SignedHeaders with their received values, the body bytes."""

    access_key: str
    secret_key: str
    region: str
    api_key: str
    service: str = "bedrock"
    accepted: list[str] = field(default_factory=list)
    """`sigv4` or `bearer`, per request let in."""
    rejected: list[str] = field(default_factory=list)
    """Why each turned-away request was."""

    def __call__(self, received: Received) -> Reply | None:
        reason, kind = self.check(received)
        if reason is None:
            self.accepted.append(kind)
            return None
        self.rejected.append(reason)
        return json_reply({"message": reason}, status=403,
                          headers={"x-amzn-errortype": "InvalidSignatureException"})

    def check(self, received: Received) -> tuple[str | None, str]:
        authorization = received.headers.get("authorization", "")
        if authorization.startswith("Bearer "):
            ok = hmac.compare_digest(authorization.removeprefix("Bearer "), self.api_key)
            return (None if ok else "unknown Bedrock API key"), "bearer"
        return self._check_sigv4(received, authorization), "sigv4"

    def _check_sigv4(self, received: Received, authorization: str) -> str | None:
        match = _SIGV4.match(authorization)
        if match is None:
            return f"not a SigV4 authorization: {authorization[:60]!r}"
        if match["key"] != self.access_key:
            return f"unknown access key {match['key']!r}"
        if (match["region"], match["service"]) != (self.region, self.service):
            return (f"credential scope {match['region']}/{match['service']}, "
                    f"expected {self.region}/{self.service}")
        stamp = received.headers.get("x-amz-date", "")
        if not stamp.startswith(match["date"]):
            return f"x-amz-date {stamp!r} is not the credential scope's date"
        signed_at = datetime.datetime.strptime(stamp, "%Y%m%dT%H%M%SZ").replace(tzinfo=datetime.UTC)
        if abs((datetime.datetime.now(datetime.UTC) - signed_at).total_seconds()) > 300:
            return "signature expired"
        names = match["signed"].split(";")
        if "host" not in names:
            return "host is not signed"
        if missing := [name for name in names if name not in received.headers]:
            return f"signed headers missing from the request: {missing}"
        declared = received.headers.get("x-amz-content-sha256")
        if declared is not None and declared != hashlib.sha256(received.body).hexdigest():
            return "x-amz-content-sha256 is not the body's"
        request = AWSRequest(method=received.method, url=f"http://{received.headers['host']}{received.path}",
                             data=received.body, headers={name: received.headers[name] for name in names})
        request.context["timestamp"] = stamp
        signer = SigV4Auth(Credentials(self.access_key, self.secret_key), self.service, self.region)
        if signer.signed_headers(signer.headers_to_sign(request)) != match["signed"]:
            return f"SignedHeaders {match['signed']!r} cannot be reproduced"
        to_sign = signer.string_to_sign(request, signer.canonical_request(request))
        expected = signer.signature(to_sign, request)
        if not hmac.compare_digest(expected, match["signature"]):
            return "the request signature does not match (something changed after signing)"
        return None
