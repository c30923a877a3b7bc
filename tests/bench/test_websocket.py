"""bench/websocket.py with three turns: both sessions complete through real mitmdump, the socket's
uploads stay flat while HTTP's grow with the history (bytes only: no timing assertions; the CPU
figures come from `python -m bench.websocket`)."""

from __future__ import annotations

import asyncio

from bench import websocket


def test_three_turns_over_http_and_over_one_socket() -> None:
    sides = asyncio.run(websocket._main(3, []))
    http, ws = sides["http"], sides["websocket"]
    assert len(http.uploaded) == len(ws.uploaded) == len(http.cpu_ms) == len(ws.cpu_ms) == 3
    assert http.uploaded[0] < http.uploaded[1] < http.uploaded[2]  # the whole history each turn
    assert ws.uploaded[1] == ws.uploaded[2]  # the new item and the request's fields only
    assert ws.uploaded[2] < http.uploaded[2]
    report = websocket.report(sides)
    assert report["uploaded_bytes_total"]["ratio"] > 1
    assert report["events_per_answer"] == {"http": 169, "websocket": 169}  # issue 39's answer length
