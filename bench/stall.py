"""How long one heavy request holds up the other streams of the same proxy (docs/design.md "Limits").

Real mitmdump with the addon, in front of the local upstream (bench/loopback.py): a steady stream
(Anthropic text deltas 5 ms apart, each stamped by the upstream) runs alone for a while, then a
heavy request arrives on another connection, and the stream goes on a little after it. The heavy
requests:
- a 100k-item Responses request, 9.9 MB: read, translated and written by a worker process
  (addon/work/workers.py); on its way from its first byte to its answer's status line;
- a turn answered with one 16 MB text event: parsed once and written five times (the delta and the
  done events that repeat it) inside the stream callable, on mitmproxy's event loop; on its way
  from its first byte to the end of its 80 MB answer (read by curl, in a process of its own).

Measured on the steady stream, in one run: the longest wait of an event inside the proxy (client
read time minus the upstream's stamp) while the heavy request was on its way, against the longest
wait before it, with nothing else to do. The
ratio is the figure (the milliseconds move with the machine, docs in bench/README.md "Stalls");
the share is the longest wait over the heavy request's whole time in the proxy: near 0 when the
proxy's event loop stays free, near 1 when the loop does the work itself.

tests/addon/e2e/test_limits.py checks the same cases by counting (the stream is never held for
hundreds of its events); the milliseconds are measured here, not asserted there.
"""

from __future__ import annotations

import asyncio
import gc
import json
import tempfile
import time
from dataclasses import asdict, dataclass

from bench.growth import one_event
from bench.loopback import Turn, Upstream, turn
from bench.proxy import MITMDUMP, Mitmdump, _addon_args
from bench.workloads import small_request

INTERVAL_S = 0.005
LEAD_S = 1.0
"""The steady stream alone, before the heavy request: its quiet waits."""
TAIL_S = 0.5
"""The steady stream after the heavy request's answer began, then it is left."""
LONGEST_S = 600.0
"""The steady stream is planned this long; it is left once the case is over."""


@dataclass(frozen=True, slots=True)
class StallRow:
    case: str
    heavy_mb: float
    """The heavy request's body, or its answer's one event."""
    quiet_ms: float
    """The longest wait of a steady event in the proxy before the heavy request."""
    stall_ms: float
    """The longest wait of a steady event while the heavy request was on its way."""
    work_ms: float
    """The heavy request's time in the proxy: first byte sent to its answer's status line."""

    @property
    def ratio(self) -> float:
        return self.stall_ms / self.quiet_ms

    @property
    def share(self) -> float:
        return self.stall_ms / self.work_ms

    def as_dict(self) -> dict[str, object]:
        return {**asdict(self), "ratio": self.ratio, "share": self.share}


def many_items(count: int) -> bytes:
    """A streamed Responses request of `count` short messages, alternating user and assistant
    (streamed: its answer's status line comes as soon as the upstream starts answering)."""
    items = [{"type": "message", "role": "user" if i % 2 == 0 else "assistant",
              "content": [{"type": "input_text" if i % 2 == 0 else "output_text", "text": f"item {i}"}]}
             for i in range(count)]
    return json.dumps({"model": "gpt-5.5", "input": items, "stream": True}).encode()


EVENT_MARKER = b"bench-heavy-event"


def event_turn(size: int) -> tuple[bytes, tuple[bytes, list[bytes]]]:
    """A streamed turn the upstream answers with one text event of `size` bytes (16 KB chunks)."""
    body = json.dumps({"model": "gpt-5.5", "input": EVENT_MARKER.decode(), "stream": True}).encode()
    return body, (EVENT_MARKER, one_event(size))


async def _heavy(port: int, body: bytes, whole: bool) -> None:
    """POSTs `body` and waits for the status line of its answer, or with `whole` for all of it,
    read by curl in its own process: 80 MB read here would hold up this process's reading of the
    steady stream, and count as the proxy's stall."""
    if whole:
        with tempfile.NamedTemporaryFile(suffix=".json") as file:
            file.write(body)
            file.flush()
            curl = await asyncio.create_subprocess_exec(
                "curl", "-sS", "-N", "-o", "/dev/null", "-w", "%{http_code}", "-H",
                "content-type: application/json", "-H", "authorization: Bearer sk-bench",
                "--data-binary", f"@{file.name}", f"http://127.0.0.1:{port}/v1/responses",
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
            out, err = await curl.communicate()
        if out != b"200":
            raise RuntimeError(f"the heavy request was answered {out!r} {err!r}")
        return
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"POST /v1/responses HTTP/1.1\r\nhost: api.openai.com\r\ncontent-type: application/json\r\n"
                 b"authorization: Bearer sk-bench\r\nconnection: close\r\ncontent-length: %d\r\n\r\n"
                 % len(body) + body)
    await writer.drain()
    status = await reader.readline()
    writer.close()
    if not status.startswith(b"HTTP/1.1 200"):
        raise RuntimeError(f"the heavy request was answered {status!r}")


def _longest(steady: Turn, start_ns: int, end_ns: int) -> tuple[float, float]:
    """The longest wait (ms) of the events stamped in the quiet lead, and of those stamped while
    the heavy request was on its way (an event held by a busy loop was stamped before its end)."""
    warm = LEAD_S / 5 * 1e9  # the stream's own first events pay for a fresh connection
    quiet = [lat for stamp, lat in zip(steady.stamps_ns, steady.latencies_ns, strict=True)
             if steady.stamps_ns[0] + warm <= stamp < start_ns]
    busy = [lat for stamp, lat in zip(steady.stamps_ns, steady.latencies_ns, strict=True)
            if start_ns <= stamp < end_ns]
    if not quiet or not busy:
        raise RuntimeError(f"the steady stream did not cover the case ({len(quiet)} quiet, {len(busy)} busy)")
    return max(quiet) / 1e6, max(busy) / 1e6


async def _case(name: str, body: bytes, heavy: tuple[bytes, list[bytes]] | None = None) -> StallRow:
    upstream = Upstream(deltas=int(LONGEST_S / INTERVAL_S), interval_s=INTERVAL_S, heavy=heavy)
    await upstream.start()
    with tempfile.TemporaryDirectory(prefix="bench-stall-") as tmp:
        proxy = Mitmdump(_addon_args(upstream.port), f"{tmp}/addon")
        gc.disable()  # this process reads the stream: its collector's pauses are not the proxy's
        try:
            done = asyncio.Event()
            steady = asyncio.create_task(turn(proxy.port, small_request(), LONGEST_S, stop=done))
            await asyncio.sleep(LEAD_S)
            start = time.perf_counter_ns()
            await _heavy(proxy.port, body, whole=heavy is not None)
            end = time.perf_counter_ns()
            await asyncio.sleep(TAIL_S)
            done.set()
            result = await steady
        finally:
            gc.enable()
            proxy.stop()
            await upstream.stop()
    if result.status != 200:
        raise RuntimeError(f"the steady stream was answered {result.status}: {result.body[:300]!r}")
    quiet_ms, stall_ms = _longest(result, start, end)
    size = sum(map(len, heavy[1])) if heavy is not None else len(body)
    return StallRow(name, size / 1e6, quiet_ms, stall_ms, (end - start) / 1e6)


def run(items: int = 100_000, event_mb: int = 16) -> list[StallRow]:
    """`items`: the heavy request's size; `event_mb`: the heavy answer's one event (0: left out)."""
    if not MITMDUMP.exists():
        raise RuntimeError(f"mitmdump not found at {MITMDUMP}")
    rows = [asyncio.run(_case(f"{items // 1000}k-item request", many_items(items)))]
    if event_mb:
        # under the event bound, translators/wire/sse.py
        body, heavy = event_turn(event_mb * 1024 * 1024 - 200)
        rows.append(asyncio.run(_case(f"{event_mb} MB event", body, heavy)))
    return rows
