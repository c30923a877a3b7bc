"""Load: 50 concurrent streamed turns through one mitmdump, every dialect at once.

Each turn's upstream answer carries a text and a tool call id made from a token in its own
request, and is sent in small chunks with pauses so the 50 streams interleave inside the proxy.
What holds: every stream completes, each client gets exactly its own text, call id and
arguments (nothing mixed across flows), and mitmdump's resident memory after more rounds stays
within a generous margin of what it was after the warm-up rounds, with no finished flow still alive.
Memory is read through `memory_probe.py`, which runs a full collection in the proxy first (see
its docstring for why). Bounded: 6 rounds of 50 turns; the time limits below only stop a hang
(a loaded machine is slower, not wrong).
"""

from __future__ import annotations

import json
import re
import secrets
import time
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.reliability.conftest import DIALECTS as EVERY_DIALECT
from tests.reliability.conftest import MEMORY_PROBE, free_port, routes_toml, sdk, start_gateway
from tests.reliability.fault_upstream import dialect_of
from tests.reliability.memory_probe import PATH as PROBE_PATH
from tests.support.fake_upstream import SSE_HEADERS, FakeUpstream, Reply, anthropic_tool_use
from tests.support.mitmdump import MitmDump
from tests.support.wait import until
from tests.translators.bedrock.frames import event as bedrock_event
from translators.dialect import BUILTIN

TURNS = 50
ROUNDS = 6
WARM_UP = 3
"""Rounds that bring the proxy to its working size, then three more measured against the largest
of them. What a round leaves resident after a full collection grows over the first rounds, with
no flow alive after any: the heap's high-water mark (the allocator keeps freed pages it cannot
return) follows how many of the 50 answers the proxy held at once, and bounded structures fill.
One run read 178, 205, 238, 250 and 245 MB: one warm-up round was no baseline."""
HANG = 300
"""Seconds a round may take before it counts as hung."""
FREED_WITHIN = 60
"""Seconds for the finished flows of a round to be freed; a flow the proxy keeps never is."""
pytestmark = pytest.mark.timeout(ROUNDS * (HANG + FREED_WITHIN))
PADDING = 100_000
"""Characters of text per answer, so that keeping finished flows would show in the memory."""
RSS_MARGIN_MB = 50
TOKEN = re.compile(r"turn-[a-z]+-\d+-[0-9a-f]{8}")
TOOL = {
    "type": "function",
    "name": "exec_command",
    "description": "Run a command.",
    "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}},
}


def answer_text(token: str) -> str:
    return f"answer for {token} " + "." * PADDING


def call_id(dialect: str, token: str) -> str:
    return f"toolu_{token}" if dialect in ("anthropic", "bedrock") else f"call_{token}"


def _chat(token: str) -> list[bytes]:
    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
        body = {
            "id": f"chatcmpl-{token}",
            "object": "chat.completion.chunk",
            "model": "deepseek-chat",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            **extra,
        }
        return f"data: {json.dumps(body)}\n\n".encode()

    text = answer_text(token)
    arguments = json.dumps({"cmd": f"echo {token}"})
    call = {
        "index": 0,
        "id": call_id("chat", token),
        "type": "function",
        "function": {"name": "exec_command", "arguments": ""},
    }
    return [
        chunk({"role": "assistant", "content": text[: len(text) // 2]}),
        chunk({"content": text[len(text) // 2 :]}),
        chunk({"tool_calls": [call]}),
        *(
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": arguments[i : i + 7]}}]})
            for i in range(0, len(arguments), 7)
        ),
        chunk({}, "tool_calls", usage={"prompt_tokens": 9, "completion_tokens": 5, "total_tokens": 14}),
        b"data: [DONE]\n\n",
    ]


def _gemini(token: str) -> list[bytes]:
    text = answer_text(token)
    first = {
        "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "index": 0}],
        "responseId": f"r-{token}",
    }
    call = {
        "functionCall": {
            "id": call_id("gemini", token),
            "name": "exec_command",
            "args": {"cmd": f"echo {token}"},
        }
    }
    last = {
        "candidates": [{"content": {"role": "model", "parts": [call]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 9, "candidatesTokenCount": 5, "totalTokenCount": 14},
        "responseId": f"r-{token}",
    }
    return [f"data: {json.dumps(first)}\r\n\r\n".encode(), f"data: {json.dumps(last)}\r\n\r\n".encode()]


def _bedrock(token: str) -> list[bytes]:
    text = answer_text(token)
    arguments = json.dumps({"cmd": f"echo {token}"})
    return [
        bedrock_event("messageStart", {"role": "assistant"}),
        bedrock_event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": text[:50_000]}}),
        bedrock_event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": text[50_000:]}}),
        bedrock_event("contentBlockStop", {"contentBlockIndex": 0}),
        bedrock_event(
            "contentBlockStart",
            {
                "contentBlockIndex": 1,
                "start": {"toolUse": {"toolUseId": call_id("bedrock", token), "name": "exec_command"}},
            },
        ),
        bedrock_event(
            "contentBlockDelta", {"contentBlockIndex": 1, "delta": {"toolUse": {"input": arguments}}}
        ),
        bedrock_event("contentBlockStop", {"contentBlockIndex": 1}),
        bedrock_event("messageStop", {"stopReason": "tool_use"}),
        bedrock_event(
            "metadata",
            {"usage": {"inputTokens": 9, "outputTokens": 5, "totalTokens": 14}, "metrics": {"latencyMs": 1}},
        ),
    ]


DIALECTS = tuple(name for name in EVERY_DIALECT if name in BUILTIN)
"""The registry's shipped dialects: each turn is a tool-call round trip, which the toy dialect
(tests/support/toy_dialect.py, text only) cannot make; `answer` below fails loudly for a shipped
dialect it does not know."""


def _paced(chunks: list[bytes]) -> Iterator[bytes]:
    """Small pieces with pauses, so 50 streams really interleave in the proxy."""
    for chunk in chunks:
        for i in range(0, len(chunk), 16_384):
            yield chunk[i : i + 16_384]
            time.sleep(0.002)


def answer(body: Any, headers: Mapping[str, str], path: str) -> Reply:
    token = TOKEN.search(json.dumps(body))
    assert token is not None, "a request without its token"
    dialect = dialect_of(path)
    if dialect == "anthropic":
        _, _, chunks = anthropic_tool_use(
            "exec_command",
            {"cmd": f"echo {token[0]}"},
            call_id(dialect, token[0]),
            text_before=answer_text(token[0]),
        )
        return 200, SSE_HEADERS, _paced(list(chunks))  # type: ignore[arg-type]
    if dialect == "bedrock":
        return 200, {"content-type": "application/vnd.amazon.eventstream"}, _paced(_bedrock(token[0]))
    if dialect in ("chat", "gemini"):
        return 200, SSE_HEADERS, _paced(_chat(token[0]) if dialect == "chat" else _gemini(token[0]))
    raise AssertionError(f"the load upstream cannot answer the {dialect} dialect")


def one_turn(proxy: MitmDump, dialect: str, n: int) -> str | None:
    """Runs one streamed turn; returns what was wrong with it, or None."""
    token = f"turn-{dialect}-{n}-{secrets.token_hex(4)}"
    events = list(
        sdk(proxy).responses.create(
            model=f"{dialect}-load", input=f"please run {token}", tools=[TOOL], stream=True
        )
    )
    kinds = [e.type for e in events]
    if (
        kinds[-1] != "response.completed"
        or sum(
            k.startswith("response.")
            and k in ("response.completed", "response.failed", "response.incomplete")
            for k in kinds
        )
        != 1
    ):
        return f"{token}: ended with {kinds[-3:]}"
    if [e.sequence_number for e in events] != list(range(len(events))):
        return f"{token}: sequence numbers are not 0..n"
    final = events[-1].response
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    calls = [item for item in final.output if item.type == "function_call"]
    if text != answer_text(token) or final.output_text != answer_text(token):
        return f"{token}: got someone else's text: {text[:60]!r}"
    if [(c.call_id, c.name, json.loads(c.arguments)) for c in calls] != [
        (call_id(dialect, token), "exec_command", {"cmd": f"echo {token}"})
    ]:
        return f"{token}: got calls {[(c.call_id, c.arguments) for c in calls]}"
    if {t for e in events for t in TOKEN.findall(e.model_dump_json())} != {token}:
        return f"{token}: another turn's token is in this stream"
    return None


def memory(proxy: MitmDump) -> dict[str, float]:
    """Flows alive and VmRSS (MB) of mitmdump after a full collection, and VmRSS before it;
    the probe's RSS is checked against /proc/<pid>/status read from here."""
    response = httpx.get(f"{proxy.url}{PROBE_PATH}", timeout=FREED_WITHIN)
    status = Path(f"/proc/{proxy.pid}/status").read_text()
    outside = int(re.search(r"VmRSS:\s+(\d+) kB", status)[1]) / 1024  # type: ignore[index]
    probe = response.json()
    assert abs(probe["rss_mb"] - outside) < 20, (probe, outside)
    return probe  # type: ignore[no-any-return]


# alone (tests/support/turns.py): how many of the 50 answers the proxy holds at once, and so the
# heap's high-water mark, depends on how fast this process's clients drain them, which a
# neighbour's load slows
@pytest.mark.alone
def test_50_concurrent_streams_complete_unmixed_and_memory_returns_to_baseline(tmp_path: Path) -> None:
    with FakeUpstream(answer) as upstream:  # its listen backlog takes 50 connections at once
        routes = tmp_path / "routes.toml"
        dead = f"http://127.0.0.1:{free_port()}"
        routes.write_text(routes_toml(upstream.url, refused_url=dead, garbage_url=dead, plain_http_url=dead))
        with (
            start_gateway(tmp_path / "conf", routes, scripts=(MEMORY_PROBE,)) as proxy,
            ThreadPoolExecutor(TURNS) as pool,
        ):
            rounds = []
            for round_ in range(ROUNDS):
                futures = [pool.submit(one_turn, proxy, DIALECTS[n % len(DIALECTS)], n) for n in range(TURNS)]
                problems = [f.result(timeout=HANG) for f in futures]  # a bound on a hang, not a speed
                assert [p for p in problems if p] == [], f"round {round_}"
                # the last flows are freed once their connections close, a moment after the turns end
                rounds.append(until(lambda: (m := memory(proxy))["flows"] == 0 and m,
                                    "the finished flows to be freed", timeout=FREED_WITHIN))
            assert not upstream.errors
            assert len(upstream.requests) == TURNS * ROUNDS
            assert "offline-guard blocked" not in proxy.log
            print(f"mitmdump memory after each round of {TURNS} turns: {rounds}")
            baseline = max(r["rss_mb"] for r in rounds[:WARM_UP])
            assert max(r["rss_mb"] for r in rounds[WARM_UP:]) < baseline + RSS_MARGIN_MB, rounds
