"""The real Codex 0.169 reading an image with its `view_image` tool through the gateway on each
upstream (docs/claude-code.md "Images a tool returns"): Codex answers the call with a
`function_call_output` holding an `input_image`, and each fake checks that the image arrived as its
own image block (tests/e2e/tool_images.py). The Chat route names a vision model: DeepSeek's Chat
takes no images at all (docs/chat.md)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.addon.e2e import sdk_turns
from tests.e2e.targets import TARGETS, Target, has_tool_result, is_turn, run_codex
from tests.e2e.tool_images import is_image, png, tool_images
from tests.support.fake_upstream import FakeUpstream, Reply, empty_reply, refuse_everything

pytestmark = [pytest.mark.codex, pytest.mark.timeout(300)]

SEEN = "the image is a red-to-blue gradient"
VISION = [dataclasses.replace(t, model="qwen3-vl-plus") if t.dialect == "chat" else t for t in TARGETS]


@pytest.fixture
def black_hole() -> Iterator[FakeUpstream]:
    with FakeUpstream(refuse_everything) as hole:
        yield hole


@pytest.mark.parametrize("target", VISION, ids=str)
def test_view_image_reaches_the_upstream_as_its_image_block(tmp_path: Path, black_hole: FakeUpstream,
                                                             target: Target) -> None:
    picture = tmp_path / "gradient.png"
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
        return sdk_turns.tool_call(target.dialect, "view_image", {"path": str(picture)}, "img1", stream=True)

    outcome = run_codex(tmp_path, "custom_provider", target, model, black_hole)
    assert outcome.run.returncode == 0, outcome.context()
    assert outcome.run.final_message == SEEN, outcome.context()
    assert len(turns) == 2, outcome.context()
    images = tool_images(target.dialect, turns[1])
    assert len(images) == 1, turns[1]
    media, data = images[0]
    assert media.startswith("image/") and is_image(data), (media, data[:16])
