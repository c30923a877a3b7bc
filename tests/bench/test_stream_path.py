"""bench/stream_path.py: a tiny run through real mitmdumps (plain and this tree's addon) has the
shape the report reads; no timing is asserted (the figures come from `python -m bench.stream_path`)."""

from __future__ import annotations

import asyncio

import pytest

from bench import stream_path
from bench.turn_ends import raw_turn


def test_the_answers_are_the_recordings_one_chunk_per_event() -> None:
    dialect, chunks = stream_path.answer("anthropic")
    assert dialect == "anthropic" and len(chunks) > 100 and all(c.endswith(b"\n\n") for c in chunks)
    dialect, chunks = stream_path.answer("chat")
    assert dialect == "chat" and chunks[-1].strip() == b"data: [DONE]"


def test_the_long_answer_is_161_text_deltas_between_its_head_and_tail() -> None:
    dialect, chunks = stream_path.answer("long")
    kinds = [c.split(b"\n", 1)[0] for c in chunks]
    assert dialect == "anthropic" and kinds.count(b"event: content_block_delta") == 161
    assert kinds[0] == b"event: message_start" and kinds[-1] == b"event: message_stop"


def test_the_paced_server_writes_one_event_per_interval() -> None:
    async def scenario() -> tuple[bytes, list[int]]:
        server = stream_path.PacedServer([b"data: 1\n\n", b"data: 2\n\n"], interval_s=0.01)
        await server.start()
        try:
            turn = await raw_turn(server.port, b"{}", [], None, 10)
        finally:
            await server.stop()
        return turn.body, [turn.status]

    body, status = asyncio.run(scenario())
    assert status == [200] and body.endswith(b"9\r\ndata: 1\n\n\r\n9\r\ndata: 2\n\n\r\n0\r\n\r\n")


@pytest.mark.timeout(180)
def test_a_tiny_run_measures_every_side_paced_and_concurrent() -> None:
    res = stream_path.run(pace_ms=1, turns=1, sessions=1, concurrent=3, rounds=1)
    assert res.sides == ["plain", "here"]
    for side in res.sides:
        assert len(res.paced_cpu_ms[side]) == 1 and res.paced_cpu_ms[side][0] > 0
        assert len(res.concurrent_p50_ms[side]) == 1
    assert res.cpu_ratio("plain") == 1.0 and len(res.p50_ratios("here")) == 1
    assert "here" in stream_path.render(res)


def test_two_trees_are_compared_session_by_session() -> None:
    res = stream_path.StreamPathResult("anthropic", 118, 2.0, 0, ["plain", "base", "new"],
                                       session_ratios={"plain": [1.0, 1.0, 1.0], "base": [1.5, 1.6, 1.4],
                                                       "new": [1.2, 1.7, 1.05]})
    assert [round(r, 3) for r in res.paired("new", "base")] == [0.8, 1.062, 0.75]
    res.paced_cpu_ms = {side: [1.0] for side in res.sides}
    res.concurrent_p50_ms = {side: [] for side in res.sides}
    assert "new / base, per session: median 0.800 (0.75-1.06), 2 of 3 below 1" in stream_path.render(res)
