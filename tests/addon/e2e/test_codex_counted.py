"""Real Codex through setup 3 (a custom `responses` provider pointed at the gateway in reverse mode,
over HTTP), with a client key, against an Anthropic upstream whose body ends 20 ms after its last
event, as real networks do (the API's `message_stop` is the stream's last event, docs.claude.com/
en/api/messages-streaming; the connection's end follows). Codex closes its connection once it has
`response.completed`, usually before that end: every turn must still be one answered attempt
(the client's answer ends at the translator's terminal event, not at the upstream's end of body,
docs/pools.md), counted once, whole, and no flow logged as an error (docs/team.md "Usage and
budgets")."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from mitmproxy import http, io

from addon.observe import flowinfo
from addon.team import clients_file as clients
from tests.support.codex_cli import (
    CUSTOM_KEY_ENV,
    LITE_MODEL,
    codex_mitmdump,
    custom_provider_setup,
    run_codex_exec,
)
from tests.support.fake_upstream import FakeUpstream, Reply, anthropic_text, empty_reply, refuse_everything
from tests.support.mitmdump import ROOT
from tests.support.wait import until

pytestmark = [pytest.mark.codex, pytest.mark.timeout(420)]

CODEX_KEY = clients.KEY_PREFIX + "codex-counted-0123456789"
UPSTREAM_KEY = "sk-ant-test-upstream-counted"


def _late_end(chunks: list[bytes]) -> Iterator[bytes]:
    yield from chunks
    time.sleep(0.02)  # the body ends after the last event
    yield b": end of body\n\n"


def _answer(body: Any, _headers: Mapping[str, str], path: str) -> Reply:
    if not path.endswith("/v1/messages"):
        return empty_reply(404)
    status, headers, chunks = anthropic_text("Done here.", model=LITE_MODEL, input_tokens=77)
    return status, headers, _late_end(list(chunks))


@pytest.fixture
def black_hole() -> Iterator[FakeUpstream]:
    with FakeUpstream(refuse_everything) as hole:
        yield hole


def test_every_codex_turn_is_counted_once_whoever_closes_first(tmp_path: Path,
                                                               black_hole: FakeUpstream) -> None:
    keys = tmp_path / "clients.toml"
    keys.write_text(clients.table(clients.Client("codex", clients.hash_key(CODEX_KEY))))
    work = tmp_path / "work"
    work.mkdir()
    saved = tmp_path / "flows"
    with FakeUpstream(_answer) as up, codex_mitmdump(
            tmp_path / "mitm", mode="reverse:https://api.openai.com", args=["-w", str(saved)],
            options={"gateway_upstream": "anthropic", "gateway_base_url": up.url, "gateway_model": LITE_MODEL,
                     "gateway_key_env": "ANTHROPIC_API_KEY", "gateway_clients": str(keys)},
            env={"ANTHROPIC_API_KEY": UPSTREAM_KEY}) as mitm:
        setup = custom_provider_setup(tmp_path / "codex", base_url=f"{mitm.url}/v1", proxy_url=black_hole.url)
        setup.env[CUSTOM_KEY_ENV] = CODEX_KEY
        runs = [run_codex_exec(setup, text, work, timeout=180) for text in ("say done", "say done again")]
        turns = [r for r in up.requests if r.path.endswith("/v1/messages")]
        store = tmp_path / "mitm" / "gateway-store.sqlite"

        def counted() -> dict[str, Any] | None:
            time.sleep(0.2)
            printed = subprocess.run([sys.executable, "-m", "addon", "usage", str(store), "--json"], cwd=ROOT,
                                     capture_output=True, text=True, check=True)
            totals = json.loads(printed.stdout)["totals"]
            return totals if totals["requests"] >= len(turns) else None

        totals = until(counted, "every turn to be counted", timeout=30)
        log = mitm.log
    context = "\n".join(r.describe() for r in runs) + f"\n--- mitmdump ---\n{log}"
    assert all(r.returncode == 0 and "Done here." in r.final_message for r in runs), context
    assert len(turns) == len(runs), context  # Codex asked once a run: nothing failed
    assert (totals["requests"], totals["partial_requests"]) == (len(turns), 0), (totals, context)
    assert totals["input_tokens"] == 77 * len(turns), (totals, context)
    with saved.open("rb") as f:
        flows = [flow for flow in io.FlowReader(f).stream()
                 if isinstance(flow, http.HTTPFlow) and flow.metadata.get(flowinfo.KEY, {}).get("usage")]
    records = [flow.metadata[flowinfo.KEY] for flow in flows]
    assert len(records) == len(turns), context
    assert not [r["error"] for r in records if r.get("error")], context
    # the client left after its answer ended, not before: no flow failed, each answered at once
    assert [(f.error, f.response and f.response.status_code) for f in flows] == [(None, 200)] * len(turns)
    assert [[a["outcome"] for a in r["attempts"]] for r in records] == [["answered"]] * len(turns), context
