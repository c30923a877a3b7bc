"""The real Claude Code 2.1.328 (`claude -p`, its plain output as a user sees it) through real
mitmdump to a Gemini fake that answers as Gemini 3 does: the answer's text, then a part holding only
its `thoughtSignature` (recorded: tests/data/gemini/text_with_trailing_signature_part.jsonl). Claude
Code prints the text (it printed an empty line when the signature's thinking block came last), and
its next turn (`--continue`) gives Gemini the signature back on that text part
(docs/claude-code.md "A signature after the text")."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.data import DATA
from tests.e2e.targets import write_routes
from tests.support.claude_code_cli import run_claude
from tests.support.fake_upstream import FakeUpstream, Reply, empty_reply, sse_reply
from tests.support.mitmdump import MitmDump

pytestmark = pytest.mark.timeout(300)

RECORDED = DATA / "gemini" / "text_with_trailing_signature_part.jsonl"
MODEL = "gemini-3-pro-preview"
ANSWER = 'There are **3** "r"s in strawberry.\n\nSt**r**awbe**rr**y'
SIGNATURE = json.loads(RECORDED.read_text().splitlines()[-1])["candidates"][0]["content"]["parts"][0][
    "thoughtSignature"]


def recorded() -> Reply:
    """The recording as Gemini streams it (`alt=sse`): one `data:` event per chunk."""
    return sse_reply([b"data: " + line.encode() + b"\n\n" for line in RECORDED.read_text().splitlines()])


def test_claude_code_prints_the_text_and_gives_the_signature_back(tmp_path: Path) -> None:
    turns: list[Any] = []

    def gemini(body: Any, _headers: Mapping[str, str], path: str) -> Reply:
        if not isinstance(body, dict) or ":streamGenerateContent" not in path:
            return empty_reply(404)
        turns.append(body)
        return recorded()

    with FakeUpstream(gemini) as up, FakeUpstream(lambda *_: empty_reply(500)) as anthropic_itself:
        routes = write_routes(tmp_path / "routes.toml", [
            {"model": "claude-*", "upstream": "gemini", "base_url": up.url, "target_model": MODEL,
             "key_env": "GEMINI_API_KEY"}])
        with MitmDump(tmp_path / "mitm", mode=f"reverse:{anthropic_itself.url}",
                      options={"gateway_config": str(routes)},
                      env={"GEMINI_API_KEY": "AIza-e2e-signature-0123456789"}) as mitm:
            work = tmp_path / "work"
            work.mkdir()
            first = run_claude("how many r in strawberry?", base_url=mitm.url, home=tmp_path / "home",
                               work=work, stream_json=False)
            second = run_claude("and in raspberry?", base_url=mitm.url, home=tmp_path / "home", work=work,
                                stream_json=False, args=["--continue"])
        assert not anthropic_itself.requests
    context = f"{first.describe()}\n{second.describe()}\n--- mitmdump ---\n{mitm.log[-3000:]}"
    assert first.returncode == 0 and second.returncode == 0, context
    assert first.stdout.strip() == ANSWER, context
    assert len(turns) == 2, context
    model_parts = [part for content in turns[1]["contents"] if content["role"] == "model"
                   for part in content["parts"]]
    assert model_parts == [{"text": ANSWER, "thoughtSignature": SIGNATURE}], model_parts
