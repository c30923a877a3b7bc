"""Stream translation: upstream stream bytes (one chunk per event) -> Responses SSE bytes.

Per stream: a fresh `stream_translator`, `feed` per chunk, `close`, against the floor
(`json.loads` + `json.dumps` of every event's payload) in the same rounds; per dialect the sums.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

import orjson

from bench.fixtures import Stream, long_answer, recorded
from bench.peer_litellm import LitellmPeer, Prepared
from bench.timing import interleaved
from bench.workloads import TARGET_MODELS, small_request
from translators import Translation, stream_translator, translate_request

_TERMINAL = re.compile(rb"event: (response\.(?:completed|failed|incomplete))\n")


@dataclass(frozen=True, slots=True)
class StreamRow:
    dialect: str
    stream: str
    files: int
    events: int
    bytes: int
    ours_ns: float
    """Median wall time for the whole stream(s)."""
    floor_ns: float
    ours_cpu_ns: float
    floor_cpu_ns: float
    orjson_floor_ns: float
    """The same floor with orjson, the parser the gateway uses."""
    terminal: str
    """The last Responses event we wrote (response.completed unless the recording ends badly)."""
    peer_ns: float | None = None
    peer_cpu_ns: float | None = None
    peer_events: int | None = None
    """Upstream events of the streams the peer ran (its times are compared on those only)."""
    ours_ns_peer_set: float | None = None
    ours_cpu_ns_peer_set: float | None = None

    @property
    def ours_us_per_event(self) -> float:
        return self.ours_ns / self.events / 1e3

    @property
    def floor_us_per_event(self) -> float:
        return self.floor_ns / self.events / 1e3

    @property
    def ratio(self) -> float:
        return self.ours_ns / self.floor_ns

    @property
    def ratio_cpu(self) -> float:
        return self.ours_cpu_ns / self.floor_cpu_ns

    @property
    def ratio_orjson(self) -> float:
        return self.ours_ns / self.orjson_floor_ns

    @property
    def ours_ms_per_mb(self) -> float:
        return self.ours_ns / 1e6 / (self.bytes / 1e6)

    @property
    def peer_us_per_event(self) -> float | None:
        return self.peer_ns / self.peer_events / 1e3 if self.peer_ns and self.peer_events else None

    @property
    def speedup(self) -> float | None:
        return self.peer_ns / self.ours_ns_peer_set if self.peer_ns and self.ours_ns_peer_set else None

    @property
    def speedup_cpu(self) -> float | None:
        if self.peer_cpu_ns and self.ours_cpu_ns_peer_set:
            return self.peer_cpu_ns / self.ours_cpu_ns_peer_set
        return None

    def as_dict(self) -> dict[str, object]:
        return {"dialect": self.dialect, "stream": self.stream, "files": self.files, "events": self.events,
                "bytes": self.bytes, "ours_us_per_event": self.ours_us_per_event,
                "floor_us_per_event": self.floor_us_per_event, "ratio": self.ratio,
                "ours_cpu_us_per_event": self.ours_cpu_ns / self.events / 1e3,
                "floor_cpu_us_per_event": self.floor_cpu_ns / self.events / 1e3, "ratio_cpu": self.ratio_cpu,
                "ratio_orjson": self.ratio_orjson, "ours_ms_per_mb": self.ours_ms_per_mb,
                "terminal": self.terminal,
                "peer_us_per_event": self.peer_us_per_event, "speedup": self.speedup,
                "speedup_cpu": self.speedup_cpu}


def translate(dialect: str, translation: Translation, chunks: Sequence[bytes]) -> bytes:
    translator = stream_translator(dialect, translation)
    out = [translator.feed(chunk) for chunk in chunks]
    out.append(translator.close())
    return b"".join(out)


def floor(payloads: Sequence[bytes]) -> None:
    for payload in payloads:
        json.dumps(json.loads(payload), ensure_ascii=False).encode()


def orjson_floor(payloads: Sequence[bytes]) -> None:
    for payload in payloads:
        orjson.dumps(orjson.loads(payload))


def terminal(out: bytes) -> str:
    found = _TERMINAL.findall(out)
    return found[-1].decode() if found else "none"


def check_peer(peer: LitellmPeer, prepared: Prepared, stream: Stream, ours_out: bytes) -> None:
    """The peer must really do the work: a completed Responses stream about as big as ours."""
    out = peer.stream(prepared, stream.chunks)
    if b"response.completed" not in out or len(out) < 0.3 * len(ours_out):
        raise AssertionError(f"litellm produced an implausible stream for {stream.name}: {len(out)} bytes "
                             f"(ours: {len(ours_out)} bytes)")


def run(dialects: list[str], samples: int, peer: LitellmPeer | None, peer_samples: int,
        long_deltas: int) -> tuple[list[StreamRow], list[StreamRow], list[str]]:
    """Per-dialect rows (recorded streams summed, plus the synthetic long answer), per-file rows, notes."""
    rows: list[StreamRow] = []
    detail: list[StreamRow] = []
    notes: list[str] = []
    prepared = peer.prepare(small_request()) if peer is not None else None
    for dialect in dialects:
        translation = translate_request(json.loads(small_request()), dialect, TARGET_MODELS[dialect])
        streams, found = recorded(dialect)
        notes += found
        groups = [(f"recorded ({len(streams)})", streams)] if streams else []
        if dialect == "anthropic":
            groups.append(("synthetic long answer", [long_answer(long_deltas)]))
        for label, group in groups:
            per_file = [_one(dialect, translation, s, samples, peer, prepared, peer_samples, notes)
                        for s in group]
            detail += per_file
            rows.append(_sum(dialect, label, per_file))
    return rows, detail, notes


def _one(dialect: str, translation: Translation, stream: Stream, samples: int, peer: LitellmPeer | None,
         prepared: Prepared | None, peer_samples: int, notes: list[str]) -> StreamRow:
    out = translate(dialect, translation, stream.chunks)
    n = max(3, min(samples, samples * 40 // max(stream.events, 1)))
    contenders = {"ours": lambda: translate(dialect, translation, stream.chunks),
                  "floor": lambda: floor(stream.payloads), "orjson": lambda: orjson_floor(stream.payloads)}
    counts = dict.fromkeys(contenders, n)
    if peer is not None and prepared is not None and dialect == "anthropic":
        try:
            check_peer(peer, prepared, stream, out)
        except Exception as exc:
            notes.append(f"peer stream {stream.name} failed: {exc!r}"[:300])
        else:
            contenders["peer"] = lambda: peer.stream(prepared, stream.chunks)
            counts["peer"] = max(1, min(peer_samples, peer_samples * 40 // max(stream.events, 1)))
    timings = interleaved(contenders, counts, warmup=1)
    ours, floor_t, peer_t = timings["ours"], timings["floor"], timings.get("peer")
    return StreamRow(dialect=dialect, stream=stream.name, files=1, events=stream.events, bytes=stream.size,
                     ours_ns=ours.median_ns, floor_ns=floor_t.median_ns, ours_cpu_ns=ours.cpu_median_ns,
                     floor_cpu_ns=floor_t.cpu_median_ns, orjson_floor_ns=timings["orjson"].median_ns,
                     terminal=terminal(out),
                     peer_ns=peer_t.median_ns if peer_t else None,
                     peer_cpu_ns=peer_t.cpu_median_ns if peer_t else None,
                     peer_events=stream.events if peer_t else None,
                     ours_ns_peer_set=ours.median_ns if peer_t else None,
                     ours_cpu_ns_peer_set=ours.cpu_median_ns if peer_t else None)


def _sum(dialect: str, label: str, rows: list[StreamRow]) -> StreamRow:
    peered = [r for r in rows if r.peer_ns is not None]

    def total(field: str, among: list[StreamRow]) -> float:
        return sum(getattr(r, field) or 0.0 for r in among)

    return StreamRow(dialect=dialect, stream=label, files=len(rows), events=sum(r.events for r in rows),
                     bytes=sum(r.bytes for r in rows), ours_ns=total("ours_ns", rows),
                     floor_ns=total("floor_ns", rows), ours_cpu_ns=total("ours_cpu_ns", rows),
                     floor_cpu_ns=total("floor_cpu_ns", rows), orjson_floor_ns=total("orjson_floor_ns", rows),
                     terminal="/".join(sorted({r.terminal for r in rows})),
                     peer_ns=total("peer_ns", peered) if peered else None,
                     peer_cpu_ns=total("peer_cpu_ns", peered) if peered else None,
                     peer_events=sum(r.events for r in peered) if peered else None,
                     ours_ns_peer_set=total("ours_ns", peered) if peered else None,
                     ours_cpu_ns_peer_set=total("ours_cpu_ns", peered) if peered else None)
