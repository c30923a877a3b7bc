"""Real Codex behind the gateway with a client key and a per-minute budget: its second turn is
answered 429 with `retry-after`, Codex waits the time given and resumes, and the turn is answered
(docs/team.md "Usage and budgets"; docs/codex.md "Errors and retries")."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from addon.team import clients_file as clients
from tests.support.codex_cli import (
    CUSTOM_KEY_ENV,
    LITE_MODEL,
    codex_mitmdump,
    custom_provider_setup,
    run_codex_exec,
)
from tests.support.fake_upstream import FakeUpstream, Reply, anthropic_text, empty_reply, refuse_everything

pytestmark = [pytest.mark.codex, pytest.mark.timeout(420)]

CODEX_KEY = clients.KEY_PREFIX + "codex-budget-0123456789"
UPSTREAM_KEY = "sk-ant-test-upstream-budget"
AGED = 45.0
"""Seconds the first turn's count is moved into the past, in the store the gateway counts a minute's
requests in (`gw_requests`, addon/state/store/budget.py): the minute then ends about 15 s after the
first turn, not 60 s, and Codex is still told to wait, and must."""


def _age_requests(store: Path, seconds: float) -> None:
    with contextlib.closing(sqlite3.connect(store)) as db, db:
        db.execute("UPDATE gw_requests SET at = at - ?", (seconds,))


def _answer(body: Any, _headers: Mapping[str, str], path: str) -> Reply:
    if not path.endswith("/v1/messages"):
        return empty_reply(404)
    return anthropic_text("Done here.", model=LITE_MODEL)


@pytest.fixture
def black_hole() -> Iterator[FakeUpstream]:
    with FakeUpstream(refuse_everything) as hole:
        yield hole


def test_codex_waits_on_retry_after_and_resumes_past_a_per_minute_budget(tmp_path: Path,
                                                                          black_hole: FakeUpstream) -> None:
    keys = tmp_path / "clients.toml"
    keys.write_text(clients.table(clients.Client("codex", clients.hash_key(CODEX_KEY),
                                                 requests_per_minute=1)))
    work = tmp_path / "work"
    work.mkdir()
    with FakeUpstream(_answer) as up, codex_mitmdump(
            tmp_path / "mitm", mode="reverse:https://api.openai.com",
            options={"gateway_upstream": "anthropic", "gateway_base_url": up.url, "gateway_model": LITE_MODEL,
                     "gateway_key_env": "ANTHROPIC_API_KEY", "gateway_clients": str(keys)},
            env={"ANTHROPIC_API_KEY": UPSTREAM_KEY}) as mitm:
        setup = custom_provider_setup(tmp_path / "codex", base_url=f"{mitm.url}/v1", proxy_url=black_hole.url)
        setup.env[CUSTOM_KEY_ENV] = CODEX_KEY
        first = run_codex_exec(setup, "say done", work, timeout=180)
        _age_requests(tmp_path / "mitm" / "gateway-store.sqlite", AGED)
        second = run_codex_exec(setup, "say done again", work, timeout=240)
        log = mitm.log
    context = f"{first.describe()}\n{second.describe()}\n--- mitmdump ---\n{log}"
    assert first.returncode == 0 and "Done here." in first.final_message, context
    assert second.returncode == 0 and "Done here." in second.final_message, context
    assert " 429 " in log or "<< 429" in log, context  # refused once, then resumed
    turns = [r for r in up.requests if r.path.endswith("/v1/messages")]
    assert len(turns) == 2, context
    assert all(CODEX_KEY not in repr(r.headers) for r in turns)
