"""Claude Code's model list through the gateway (issue 36; docs/claude-code.md "Models"): the real
Claude Code 2.1.328 with `CLAUDE_CODE_ENABLE_GATEWAY_MODEL_DISCOVERY=1` reads the gateway's
`GET /v1/models`, keeps the ids it shows (those naming `claude` or `anthropic`), and its `/model`
switches to a routed one, whose turn then goes to that route's upstream.

Routes: `claude-via-gemini` (a plain name) to a Gemini fake, `deepseek-chat` (a plain name Claude
Code does not show) and `claude-*` (a wildcard: Claude Code's own default, opus, sonnet, haiku and
fable names) to a Chat fake. The reverse target stands in for Anthropic itself and must see
nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.targets import write_routes
from tests.support.claude_code_cli import ClaudeRun, run_claude
from tests.support.fake_upstream import (
    FakeUpstream,
    Reply,
    chat_message,
    chat_text,
    empty_reply,
    gemini_message,
    gemini_text,
)
from tests.support.mitmdump import GATEWAY, MitmDump

pytestmark = pytest.mark.timeout(300)

DISCOVERY = {"CLAUDE_CODE_ENABLE_GATEWAY_MODEL_DISCOVERY": "1"}
CLAUDE_CODE_NAMES = ["claude-opus-5-5", "claude-sonnet-5-5", "claude-haiku-5-5", "claude-fable-5-2"]
"""The ids Claude Code 2.1.328 sends for its default model and its opus, sonnet, haiku and fable
aliases (docs/claude-code.md "Models")."""


class Fake:
    """An upstream fake that keeps each turn's path and body; a streamed turn gets `stream`, a
    whole one (Claude Code's `/model` check: `max_tokens: 1`, not streamed) gets `whole`."""

    def __init__(self, stream: Reply, whole: Reply, streams: str) -> None:
        self.stream, self.whole, self.streams = stream, whole, streams
        self.turns: list[tuple[str, Any]] = []

    def __call__(self, body: Any, _headers: Mapping[str, str], path: str) -> Reply:
        if not isinstance(body, dict):
            return empty_reply(404)
        self.turns.append((path, body))
        return self.stream if self.streams(path, body) else self.whole


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("claude_code_models")
    gemini = Fake(gemini_text("hi from gemini"), gemini_message("ok"),
                  lambda path, _body: ":streamGenerateContent" in path)
    chat = Fake(chat_text("hi from chat"), chat_message("ok"), lambda _path, body: bool(body.get("stream")))
    anthropic_itself = FakeUpstream(lambda body, headers, path: empty_reply(500))
    with anthropic_itself, FakeUpstream(gemini) as gemini_up, FakeUpstream(chat) as chat_up:
        write_routes(tmp / "routes.toml", [
            {"model": "claude-via-gemini", "upstream": "gemini", "base_url": gemini_up.url,
             "target_model": "gemini-3-flash-preview"},
            {"model": "deepseek-chat", "upstream": "chat", "base_url": chat_up.url,
             "target_model": "deepseek-chat"},
            {"model": "claude-*", "upstream": "chat", "base_url": chat_up.url,
             "target_model": "deepseek-chat"}])
        with MitmDump(tmp / "mitm", mode=f"reverse:{anthropic_itself.url}", scripts=(GATEWAY,),
                      options={"gateway_config": str(tmp / "routes.toml"),
                               "gateway_capabilities": "table"}) as mitm:
            yield {"mitm": mitm, "gemini": gemini, "chat": chat}
        assert not anthropic_itself.requests, "a request reached the stand-in for Anthropic"


def _claude(world: dict[str, Any], tmp_path: Path, prompt: str, *then: str) -> ClaudeRun:
    (tmp_path / "work").mkdir(exist_ok=True)
    run = run_claude(prompt, base_url=world["mitm"].url, home=tmp_path / "home", work=tmp_path / "work",
                     env=DISCOVERY, then=then)
    assert run.returncode == 0, f"{run.describe()}\n--- mitmdump ---\n{world['mitm'].log[-4000:]}"
    return run


def _listed(home: Path) -> dict[str, str]:
    """What Claude Code kept of the gateway's list (its cache of discovered models): id -> label."""
    cached = json.loads((home / ".claude" / "cache" / "gateway-models.json").read_text())
    return {model["id"]: model.get("display_name") for model in cached["models"]}


def _texts(run: ClaudeRun) -> list[str]:
    return [block["text"] for event in run.events if event.get("type") == "assistant"
            for block in event["message"]["content"] if block.get("type") == "text"]


def test_its_model_list_holds_every_routed_name_it_shows(world: dict[str, Any], tmp_path: Path) -> None:
    _claude(world, tmp_path, "say hi")
    assert _listed(tmp_path / "home") == {
        "claude-via-gemini": "claude-via-gemini (gemini: gemini-3-flash-preview)",
        **{name: f"{name} (chat: deepseek-chat)" for name in CLAUDE_CODE_NAMES},
    }  # `deepseek-chat` is listed too, and left out by Claude Code itself (no `claude` in it)


def test_model_switches_to_a_routed_model_and_its_turn_goes_to_that_route(world: dict[str, Any],
                                                                          tmp_path: Path) -> None:
    gemini, chat = world["gemini"], world["chat"]
    gemini.turns.clear()
    chat.turns.clear()
    run = _claude(world, tmp_path, "/model claude-via-gemini", "say hi")
    said = _texts(run)
    assert said[0].startswith("Set model to `claude-via-gemini (gemini: gemini-3-flash-preview)`"), said
    assert said[-1] == "hi from gemini"
    check, turn = gemini.turns  # `/model`'s check of the name, then the turn
    assert check[1]["generationConfig"]["maxOutputTokens"] == 1
    assert "say hi" in json.dumps(turn[1])
    assert chat.turns == []
