"""The real Codex CLI with `web_search = "live"` through mitmdump + `addon/gateway.py` to a local
Anthropic upstream that answers with Claude's own web search and cited text (issue 19).

Codex declares its hosted `web_search` tool live; the gateway declares Anthropic's server-side web
search instead. The answer's search comes back to Codex as a `web_search_call` item (Codex's JSON
output lists a `web_search` item with the query) and the cited answer as its message. A second
`codex exec resume` turn sends the search back: Claude gets its own `server_tool_use` and
`web_search_tool_result` blocks (with the encrypted contents) ahead of the answer's text.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.support.codex_cli import (
    REPO_ROOT,
    MitmDump,
    codex_mitmdump,
    openai_provider_setup,
    run_codex_exec,
)
from tests.support.fake_upstream import (
    Cited,
    FakeUpstream,
    Reply,
    WebResult,
    anthropic_text,
    anthropic_web_search,
    empty_reply,
)

pytestmark = [pytest.mark.codex, pytest.mark.timeout(420)]

GATEWAY_ADDON = REPO_ROOT / "addon" / "gateway.py"
CLAUDE = "claude-sonnet-4-6"
QUERY = "lisbon population 2025"
RESULTS = [WebResult("https://example.org/lisbon", "Lisbon - Example", "EncLisbon" * 200, "2 days ago"),
           WebResult("https://stats.example.pt/pop", "Population 2025", "EncStats" * 200)]
ANSWER = [Cited("Lisbon "), Cited("has about 545,000 residents", (1,)), Cited(".")]
FOLLOW_UP = "Thanks, that is all."


def script(body: Any, _headers: Mapping[str, str], path: str) -> Reply:
    if path != "/v1/messages" or not isinstance(body, dict):
        return empty_reply(404)
    if len(body.get("messages") or []) > 1:
        return anthropic_text(FOLLOW_UP, model=CLAUDE)
    return anthropic_web_search(QUERY, RESULTS, ANSWER)


@pytest.fixture(scope="module")
def upstream() -> Iterator[FakeUpstream]:
    with FakeUpstream(script) as up:
        yield up


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory, upstream: FakeUpstream) -> Iterator[MitmDump]:
    here = tmp_path_factory.mktemp("web-search")
    env: dict[str, str | None] = {"ANTHROPIC_API_KEY": "sk-ant-web-search"}
    with codex_mitmdump(here / "mitm", scripts=[GATEWAY_ADDON], env=env,
                        options={"gateway_upstream": "anthropic", "gateway_base_url": upstream.url,
                                 "gateway_model": CLAUDE}) as mitm:
        yield mitm


def test_codex_shows_claudes_search_and_sends_it_back_next_turn(
        tmp_path: Path, gateway: MitmDump, upstream: FakeUpstream) -> None:
    work = tmp_path / "work"
    work.mkdir()
    setup = openai_provider_setup(tmp_path / "codex", proxy_url=gateway.url, ca_cert=gateway.ca_cert)
    config = setup.home / "config.toml"
    config.write_text('web_search = "live"\n' + config.read_text())
    since = len(upstream.requests)

    first = run_codex_exec(setup, "How many people live in Lisbon?", work, timeout=180)
    about = f"{first.describe()}\n--- mitmdump ---\n{gateway.log}\n--- upstream ---\n{upstream.errors}"
    assert first.returncode == 0, about
    (search,) = first.items("web_search")
    assert search["query"] == QUERY, about
    assert first.final_message == "".join(stretch.text for stretch in ANSWER), about
    (asked,) = [r.json for r in upstream.requests[since:] if r.path == "/v1/messages"]
    assert {"type": "web_search_20250305", "name": "web_search"}.items() <= asked["tools"][-1].items()

    second = run_codex_exec(setup, "Thanks.", work, timeout=180, extra_args=["resume", "--last"])
    about = f"{second.describe()}\n--- mitmdump ---\n{gateway.log}"
    assert second.returncode == 0, about
    assert second.final_message == FOLLOW_UP, about
    replayed = [r.json for r in upstream.requests[since:] if r.path == "/v1/messages"][-1]
    turn = replayed["messages"][1]
    assert turn["role"] == "assistant", replayed["messages"]
    kinds = [block["type"] for block in turn["content"]]
    assert kinds == ["text", "server_tool_use", "web_search_tool_result", "text"], kinds
    assert turn["content"][1]["input"] == {"query": QUERY}
    found = turn["content"][2]["content"]
    assert [r["encrypted_content"] for r in found] == [r.encrypted_content for r in RESULTS]
