"""Request translation: Codex request bytes -> upstream request bytes, per target dialect.

Timed as the addon does it per request (`wirejson.loads`, `translate_request`, `wirejson.dumps` of
the body), against the floor of issue 8: `json.loads` + `json.dumps` of the same bytes, in the same
rounds; and, to show what is left once JSON itself is fast, against the orjson floor: the same two
calls with orjson, the parser the gateway uses.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import partial

import orjson

from bench.peer_litellm import LitellmPeer
from bench.timing import interleaved
from bench.workloads import TARGET_MODELS, describe, long_request, small_request
from translators import dialect as dialects
from translators import translate_request
from translators.wire import wirejson


@dataclass(frozen=True, slots=True)
class RequestRow:
    workload: str
    target: str
    bytes: int
    items: int
    tools: int
    out_bytes: int
    ours_us: float
    floor_us: float
    ours_cpu_us: float
    floor_cpu_us: float
    orjson_floor_us: float
    orjson_floor_cpu_us: float
    peer_us: float | None = None
    peer_cpu_us: float | None = None
    peer_out_bytes: int | None = None

    @property
    def ratio(self) -> float:
        """ours / floor"""
        return self.ours_us / self.floor_us

    @property
    def ratio_cpu(self) -> float:
        return self.ours_cpu_us / self.floor_cpu_us

    @property
    def ratio_orjson(self) -> float:
        """ours / orjson floor"""
        return self.ours_us / self.orjson_floor_us

    @property
    def speedup(self) -> float | None:
        """peer / ours"""
        return self.peer_us / self.ours_us if self.peer_us is not None else None

    @property
    def speedup_cpu(self) -> float | None:
        return self.peer_cpu_us / self.ours_cpu_us if self.peer_cpu_us is not None else None

    def as_dict(self) -> dict[str, object]:
        return {**asdict(self), "ratio": self.ratio, "ratio_cpu": self.ratio_cpu,
                "ratio_orjson": self.ratio_orjson, "speedup": self.speedup, "speedup_cpu": self.speedup_cpu}


def ours(raw: bytes, target: str) -> bytes:
    """What the addon does per request (addon/serve/pipeline.py `_take`, `retarget`)."""
    translation = translate_request(wirejson.loads(raw), target, TARGET_MODELS[target])
    return wirejson.dumps(translation.body)


def floor(raw: bytes) -> bytes:
    return json.dumps(json.loads(raw), ensure_ascii=False).encode()


def orjson_floor(raw: bytes) -> bytes:
    return orjson.dumps(orjson.loads(raw))


def available_targets() -> tuple[list[str], list[str]]:
    """The registry's translated dialects that translate the small request; notes for the rest
    (a dialect without a model in `TARGET_MODELS` is named in the report, never left out silently)."""
    targets, notes = [], []
    for target in dialects.names():
        if dialects.get(target).passthrough is not None:
            continue  # the client's own dialect: nothing is translated
        if target not in TARGET_MODELS:
            notes.append(f"{target}: no upstream model in bench/workloads.py TARGET_MODELS, not measured")
            continue
        try:
            ours(small_request(), target)
        except Exception as exc:
            notes.append(f"request translation to {target} skipped: {exc!r}"[:300])
        else:
            targets.append(target)
    return targets, notes


def check_peer(peer: LitellmPeer, raw: bytes, ours_out: bytes) -> bytes:
    """The peer must really do the work: an Anthropic body about as big as ours."""
    out = peer.request(raw)
    body = json.loads(out)
    if not body.get("messages") or len(out) < 0.5 * len(ours_out):
        raise AssertionError(f"litellm produced an implausible body: {len(out)} bytes, "
                             f"{len(body.get('messages') or [])} messages (ours: {len(ours_out)} bytes)")
    return out


def run(targets: list[str], samples: dict[str, int], peer: LitellmPeer | None,
        peer_samples: dict[str, int]) -> tuple[list[RequestRow], list[str]]:
    rows: list[RequestRow] = []
    notes: list[str] = []
    for workload, raw in (("small", small_request()), ("long", long_request())):
        shape = describe(raw)
        for target in targets:
            out = ours(raw, target)
            contenders: dict[str, Callable[[], object]] = {"ours": partial(ours, raw, target),
                                                           "floor": partial(floor, raw),
                                                           "orjson": partial(orjson_floor, raw)}
            counts = dict.fromkeys(contenders, samples[workload])
            peer_out = None
            if peer is not None and target == "anthropic":
                try:
                    peer_out = check_peer(peer, raw, out)
                except Exception as exc:
                    notes.append(f"peer request ({workload}) failed: {exc!r}"[:300])
                else:
                    contenders["peer"] = partial(peer.request, raw)
                    counts["peer"] = peer_samples[workload]
            timings = interleaved(contenders, counts)
            ours_t, floor_t, peer_t = timings["ours"], timings["floor"], timings.get("peer")
            rows.append(RequestRow(
                workload=workload, target=target, bytes=shape["bytes"], items=shape["items"],
                tools=shape["tools"], out_bytes=len(out), ours_us=ours_t.median_us,
                floor_us=floor_t.median_us, ours_cpu_us=ours_t.cpu_median_us,
                floor_cpu_us=floor_t.cpu_median_us, orjson_floor_us=timings["orjson"].median_us,
                orjson_floor_cpu_us=timings["orjson"].cpu_median_us,
                peer_us=peer_t.median_us if peer_t else None,
                peer_cpu_us=peer_t.cpu_median_us if peer_t else None,
                peer_out_bytes=len(peer_out) if peer_out is not None else None))
    return rows, notes
