"""Issue 35, cases 6 and 8, through real mitmdump with client keys.

- Case 8: a model name holding a newline, a fake timestamp and escape sequences writes nothing but
  itself on the console, on `/v1/responses` (refused or served), `/v1/messages` and the WebSocket
  (addon/observe/escape.py). Before: a forged console line.
- Case 6: a store fault is a 503 or a note, never a signal: the SQLite store keeps no memory-mapped
  `-shm` file (addon/state/store/sqlite.py). Before: with the `-shm` file cut short, the next
  write ended the proxy with SIGBUS.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from websockets.asyncio.client import connect as ws_connect

from tests.addon.e2e.upstream import Upstream
from tests.reliability.hostile import KEY, team, turn_body
from tests.support.mitmdump import MitmDump
from tests.support.wait import until

pytestmark = pytest.mark.timeout(120)
HEADERS = {"authorization": f"Bearer {KEY}", "content-type": "application/json"}
FORGED_LINE = "[12:34:56.789] [bob] gpt-5.5 -> anthropic claude | 200 | FORGED"
FORGED = [f"gpt-5.5\n{FORGED_LINE}\x1b[2K\x1b[31m",  # refused: control characters
          f"gpt-5.5\u2028{FORGED_LINE}\u202e"]  # served: no control character, still escaped


@pytest.fixture(scope="module")
def upstream() -> Iterator[Upstream]:
    with Upstream() as server:
        yield server


@pytest.fixture(scope="module")
def target() -> Iterator[Upstream]:
    with Upstream() as server:
        yield server


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("logs")


@pytest.fixture(scope="module")
def proxy(workdir: Path, target: Upstream, upstream: Upstream) -> Iterator[MitmDump]:
    with team(workdir, target, upstream) as proxy:
        yield proxy


def _forged(proxy: MitmDump) -> list[str]:
    return [line for line in proxy.log.splitlines() if line.startswith(FORGED_LINE[:20])]


@pytest.mark.parametrize("model", FORGED)
def test_a_forged_model_on_the_responses_path_writes_no_line_of_its_own(proxy: MitmDump, model: str) -> None:
    said = proxy.log.count("FORGED")
    httpx.post(f"{proxy.url}/v1/responses", content=turn_body(model=model), headers=HEADERS, timeout=30)
    until(lambda: proxy.log.count("FORGED") > said, "the flow's console line")
    assert not _forged(proxy) and "\x1b" not in proxy.log and "\u2028" not in proxy.log


@pytest.mark.parametrize("model", FORGED)
def test_a_forged_model_on_the_messages_path_writes_no_line_of_its_own(proxy: MitmDump, model: str) -> None:
    said = proxy.log.count("FORGED")
    body = json.dumps({"model": model, "max_tokens": 16, "messages": [{"role": "user", "content": "hi"}]})
    httpx.post(f"{proxy.url}/v1/messages", content=body, timeout=30,
               headers={"x-api-key": KEY, "anthropic-version": "2023-06-01",
                        "content-type": "application/json"})
    until(lambda: proxy.log.count("FORGED") > said, "the flow's console line")
    assert not _forged(proxy) and "\x1b" not in proxy.log and "\u2028" not in proxy.log


def test_a_forged_model_over_the_websocket_writes_no_line_of_its_own(proxy: MitmDump) -> None:
    said = proxy.log.count("FORGED")

    async def main() -> None:
        url = proxy.url.replace("http://", "ws://") + "/v1/responses"
        async with ws_connect(url, additional_headers={"authorization": f"Bearer {KEY}"}, proxy=None) as ws:
            for model in FORGED:
                await ws.send(json.dumps({"type": "response.create", "model": model, "input": "hi",
                                          "store": False}))
                while json.loads(await ws.recv())["type"] not in ("response.completed", "error",
                                                                  "response.failed"):
                    pass

    asyncio.run(asyncio.wait_for(main(), 60))
    until(lambda: proxy.log.count("FORGED") >= said + 2, "the requests' console lines")
    assert not _forged(proxy) and "\x1b" not in proxy.log and "\u2028" not in proxy.log


# -- case 6 ---------------------------------------------------------------------------------------
def _completed(answer: httpx.Response) -> dict[str, object]:
    for line in answer.text.splitlines():
        if line.startswith("data:") and '"response.completed"' in line:
            event: dict[str, object] = json.loads(line[5:])
            return event["response"]  # type: ignore[return-value]
    raise AssertionError(answer.text[:300])


def test_a_store_file_cut_short_under_the_proxy_is_no_signal(
        tmp_path: Path, target: Upstream, upstream: Upstream) -> None:
    with team(tmp_path, target, upstream) as proxy:
        first = _completed(httpx.post(f"{proxy.url}/v1/responses", content=turn_body(), headers=HEADERS,
                                      timeout=30))
        store = tmp_path / "store.sqlite"
        for each in tmp_path.glob("store.sqlite-*"):  # its -wal and -shm (WAL) or its -journal
            os.truncate(each, 0)
        answer = httpx.post(f"{proxy.url}/v1/responses", timeout=30, headers=HEADERS,
                            content=turn_body(text="again", previous_response_id=first["id"]))
        assert proxy.returncode is None, f"the proxy died (exit {proxy.returncode})"
        assert answer.status_code == 200
        # a journal that cannot be made: the next write fails, as a 503, and the proxy goes on
        journal = Path(f"{store}-journal")
        journal.unlink(missing_ok=True)
        journal.mkdir()
        deleted = httpx.delete(f"{proxy.url}/v1/responses/{first['id']}", headers=HEADERS, timeout=30)
        assert deleted.status_code == 503 and deleted.json()["error"]["code"] == "store_unavailable"
        assert proxy.returncode is None
        journal.rmdir()
        again = httpx.post(f"{proxy.url}/v1/responses", content=turn_body(), headers=HEADERS, timeout=30)
        assert again.status_code == 200
