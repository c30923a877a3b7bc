"""How the translators' cost grows with one value's size (docs/design.md "Limits"): an Anthropic
tool input of 100 KB and of 800 KB (streamed as `input_json_delta` pieces of 64 bytes), and one
text event of 1 MB and of 8 MB (arriving in 16 KB network chunks, a TLS record each). Linear cost
shows as about 8 times the time for 8 times the size; a quadratic accumulation as about 64.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from bench.streams import translate
from bench.timing import interleaved
from bench.workloads import TARGET_MODELS, small_request
from translators import translate_request

KB = 1024
CASES = (("tool input", 100 * KB, 800 * KB), ("one event", 1024 * KB, 8192 * KB))


@dataclass(frozen=True, slots=True)
class GrowthRow:
    case: str
    small_bytes: int
    large_bytes: int
    small_ms: float
    large_ms: float

    @property
    def ratio(self) -> float:
        return self.large_ms / self.small_ms

    def as_dict(self) -> dict[str, object]:
        return {**asdict(self), "ratio": self.ratio}


def _event(payload: dict) -> bytes:
    return f"event: {payload['type']}\ndata: {json.dumps(payload)}\n\n".encode()


_HEAD = _event({"type": "message_start", "message": {"id": "msg_1", "model": "claude-sonnet-4-6",
                                                      "usage": {"input_tokens": 1, "output_tokens": 0}}})
_END = [_event({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                "usage": {"output_tokens": 9}}),
        _event({"type": "message_stop"})]


def tool_input(size: int) -> list[bytes]:
    """A tool call whose input (one string field) is `size` bytes, in 64-byte deltas."""
    value = json.dumps({"patch": "p" * size})
    deltas = [_event({"type": "content_block_delta", "index": 0,
                      "delta": {"type": "input_json_delta", "partial_json": value[i:i + 64]}})
              for i in range(0, len(value), 64)]
    block = {"type": "tool_use", "id": "toolu_1", "name": "apply_patch", "input": {}}
    start = _event({"type": "content_block_start", "index": 0, "content_block": block})
    return [_HEAD, start, *deltas, _event({"type": "content_block_stop", "index": 0}), *_END]


def one_event(size: int) -> list[bytes]:
    """One text delta of `size` bytes, in 16 KB chunks as the network hands it over."""
    start = _event({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
    giant = _event({"type": "content_block_delta", "index": 0,
                    "delta": {"type": "text_delta", "text": "g" * size}})
    pieces = [giant[i:i + 16384] for i in range(0, len(giant), 16384)]
    return [_HEAD, start, *pieces, _event({"type": "content_block_stop", "index": 0}), *_END]


_BUILD = {"tool input": tool_input, "one event": one_event}


def run(samples: int) -> list[GrowthRow]:
    translation = translate_request(json.loads(small_request()), "anthropic", TARGET_MODELS["anthropic"])
    rows = []
    for case, small, large in CASES:
        streams = {"small": _BUILD[case](small), "large": _BUILD[case](large)}
        runs = {k: (lambda c=c: translate("anthropic", translation, c)) for k, c in streams.items()}
        timings = interleaved(runs, dict.fromkeys(streams, samples), warmup=1)
        rows.append(GrowthRow(case, small, large, timings["small"].median_ns / 1e6,
                              timings["large"].median_ns / 1e6))
    return rows
