"""bench/hooks.py: one Codex turn, step by step. The timeline of a turn is read from its own
connection only, and a tiny run through real mitmdumps times every hook, step and callable of the
addon and none of the gateway's in plain mitmdump (no timing assertions; the figures come from
`python -m bench.hooks`)."""

from __future__ import annotations

import pytest

from bench import hooks
from bench.hooks_report import render
from bench.turn_ends import ClientTurn, Seen, codex_request, dechunk


def _record(kind: str, name: str, start: int, end: int, conn: str | None, cpu: int = 0) -> dict[str, object]:
    return {"kind": kind, "name": name, "start": start, "end": end, "conn": conn, "cpu": cpu}


def test_a_turn_is_read_from_its_own_connection_and_the_steps_that_carry_none() -> None:
    ms = 1_000_000
    turn = ClientTurn(start_ns=100 * ms, end_ns=130 * ms, status=200, received=10)
    records = [
        _record("mitm", "DataReceived client", 90 * ms, 91 * ms, "old"),  # the previous turn's connection
        _record("hook", "Gateway.request", 95 * ms, 96 * ms, "old"),
        _record("mitm", "DataReceived client", 101 * ms, 104 * ms, "ours"),  # the request hook starts inside
        _record("hook", "Gateway.requestheaders", 102 * ms, 103 * ms, "ours"),
        _record("hook", "Gateway.request", 103 * ms, 106 * ms, "ours", cpu=2 * ms),
        _record("hook", "Dumper.request", 106 * ms, 107 * ms, "ours"),
        _record("step", "request: translate", 104 * ms, 105 * ms, None, cpu=ms),
        _record("mitm", "DataReceived server", 110 * ms, 120 * ms, "ours", cpu=5 * ms),
        _record("callable", "stream callable", 111 * ms, 112 * ms, None, cpu=ms),
        _record("callable", "stream callable", 113 * ms, 114 * ms, None, cpu=ms),
        _record("hook", "Gateway.response", 121 * ms, 125 * ms, "ours"),
        _record("gc", "gc generation 0", 104 * ms, 104 * ms + ms // 10, None),
        _record("gc", "gc generation 2", 111 * ms, 114 * ms, None),
        _record("mitm", "DataReceived client", 122 * ms, 123 * ms, "control"),  # the timeline request
    ]
    seen = Seen(head_ns=108 * ms, body_ns=109 * ms, written_ns=110 * ms, size=5, connection=1)
    record = hooks.turn_record("addon", "raw", 1, False, turn, 7.0, seen, {"records": records})

    assert record.total_ms == 30.0 and record.cpu_ms == 7.0
    assert record.points_ms["request bytes reach the proxy"] == 1.0
    assert record.points_ms["request hooks start"] == 3.0 and record.points_ms["request hooks end"] == 7.0
    assert record.points_ms["upstream has the request head"] == 8.0
    assert record.points_ms["last answer bytes handled"] == 20.0
    assert record.points_ms["response hooks end"] == 25.0
    assert record.points_ms["client has the whole answer"] == 30.0
    assert record.hooks_ms == {"Gateway.requestheaders": 1.0, "Gateway.request": 3.0, "Dumper.request": 1.0,
                               "Gateway.response": 4.0}
    assert record.hooks_cpu_ms["Gateway.request"] == 2.0
    assert record.steps_ms == {"request: translate": 1.0}
    assert (record.callable_calls, record.callable_ms) == (2, 2.0)
    # 3 + 10 ms of events, less the hooks that ran inside the first (requestheaders, request's first ms)
    assert record.mitm_ms == 11.0
    assert record.mitm_by_event == {"DataReceived client": 1.0, "DataReceived server": 10.0}
    assert record.gc_passes == {"gc generation 0": 1, "gc generation 2": 1} and record.gc_longest_ms == 3.0


def test_the_turn_is_the_largest_codex_request_with_codex_headers() -> None:
    body, headers = codex_request()
    names = {name.lower() for name, _ in headers}
    assert len(body) > 40_000 and body.startswith(b"{")
    assert {"originator", "user-agent", "authorization"} <= names
    assert not names & {"host", "content-length"}  # the client writes its own framing


def test_dechunk_reads_a_chunked_body() -> None:
    raw = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\na;x=1\r\n0123456789\r\n0\r\n\r\n"
    assert dechunk(raw) == b"abc0123456789"


@pytest.mark.timeout(180)
def test_one_turn_per_mode_through_real_mitmdumps_is_timed_hook_by_hook() -> None:
    res = hooks.run(turns=1, sessions=1, clients=("raw",))
    for mode in hooks.MODES:
        assert len(res.of(mode, "raw")) == 1 and len(res.of(mode, "raw", first=True)) == 1
    addon = res.of("addon", "raw")[0]
    assert set(hooks.POINTS) <= set(addon.points_ms)
    assert {"Gateway.requestheaders", "Gateway.request", "Gateway.responseheaders", "Gateway.response"} \
        <= set(addon.hooks_ms)
    assert {"request: translate", "request: state lookup", "response: describe"} <= set(addon.steps_ms)
    # the leg calls the stream hook once per read of the upstream, every HTTP chunk the read
    # brought joined (addon/upstream/client.py `Response.next_chunk`): an unpaced answer is a few
    assert 1 <= addon.callable_calls <= res.answer_events
    for mode in ("plain", "plain-responses"):
        plain = res.of(mode, "raw")[0]
        assert not any(name.startswith("Gateway.") for name in plain.hooks_ms)
        assert plain.callable_calls == 0 and plain.mitm_ms > 0
    assert res.upstream_head.startswith("POST /v1/messages HTTP/1.1")
    assert res.alone_ms["raw -> responses answer"]
    table = render(res)
    assert "client raw" in table and "Gateway.request" in table and "request: translate" in table


@pytest.mark.timeout(180)
def test_the_openai_sdk_parses_the_same_answer_through_the_addon_and_plain_mitmdump() -> None:
    pytest.importorskip("openai")
    res = hooks.run(turns=1, sessions=1, clients=("sdk",))
    events = {mode: res.of(mode, "sdk")[0].client_read for mode in hooks.MODES}
    assert events["addon"] == events["plain-responses"] > 0  # the same Responses events, parsed
    assert res.upstream_requests["addon"] == res.upstream_connections["addon"]  # connection: close
