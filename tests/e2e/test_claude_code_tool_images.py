"""The real Claude Code 2.1.328 reading a PNG with its Read tool through the gateway on each upstream
(docs/claude-code.md "Images a tool returns"): Claude Code sends the picture back as an image block
inside its `tool_result`, and each fake checks that it arrived as its own image block
(tests/e2e/tool_images.py). The Chat route names a vision model (DeepSeek's Chat takes no image)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.addon.e2e import sdk_turns
from tests.e2e.targets import TARGETS, Target, has_tool_result, is_turn, write_routes
from tests.e2e.tool_images import is_image, png, tool_images
from tests.support.claude_code_cli import run_claude
from tests.support.fake_upstream import FakeUpstream, Reply, empty_reply
from tests.support.mitmdump import MitmDump

pytestmark = pytest.mark.timeout(300)

SEEN = "a red-to-blue gradient"
VISION = [dataclasses.replace(t, model="qwen3-vl-plus") if t.dialect == "chat" else t for t in TARGETS]


@pytest.mark.parametrize("target", VISION, ids=str)
def test_a_png_it_reads_reaches_the_upstream_as_its_image_block(tmp_path: Path, target: Target) -> None:
    work = tmp_path / "work"
    work.mkdir()
    picture = work / "gradient.png"
    picture.write_bytes(png())
    turns: list[Any] = []

    def model(body: Any, headers: Mapping[str, str], _path: str) -> Reply:
        if not is_turn(body):
            return empty_reply(404)
        if not target.admits(headers):
            return empty_reply(403)
        turns.append(body)
        if has_tool_result(body):
            return sdk_turns.text(target.dialect, SEEN, stream=True)
        return sdk_turns.tool_call(target.dialect, "Read", {"file_path": str(picture)}, "read1", stream=True)

    with FakeUpstream(model) as up, FakeUpstream(lambda *_: empty_reply(500)) as anthropic_itself:
        routes = write_routes(tmp_path / "routes.toml", [
            {"model": "claude-*", "upstream": target.dialect, "base_url": up.url,
             "target_model": target.model, **target.route}])
        with MitmDump(tmp_path / "mitm", mode=f"reverse:{anthropic_itself.url}",
                      options={"gateway_config": str(routes), "gateway_capabilities": "table"},
                      env=dict(target.env)) as mitm:
            run = run_claude("describe gradient.png", base_url=mitm.url, home=tmp_path / "home", work=work)
        assert not anthropic_itself.requests
    context = f"{run.describe()}\n--- mitmdump ---\n{mitm.log[-3000:]}"
    assert run.returncode == 0, context
    assert run.result is not None and run.result["result"] == SEEN, context
    assert len(turns) == 2, context
    images = tool_images(target.dialect, turns[1])
    assert len(images) == 1, context
    media, data = images[0]
    assert media.startswith("image/") and is_image(data), (media, data[:16])
