"""The OpenAI Agents SDK's client-run tools, `ShellTool`, `ApplyPatchTool` and `ComputerTool`, through
real mitmdump + the addon (reverse mode) to a local upstream of each dialect (docs/agents-sdk.md
"Client-run tools").

The SDK declares them as `{"type": "shell", "environment": {"type": "local"}}` and
`{"type": "apply_patch"}` and runs their calls itself. Each upstream gets two ordinary functions;
its model calls `shell`, then `apply_patch`, then answers. The SDK must get `shell_call` and
`apply_patch_call` items it accepts, run them (a real command, a real file), and send their outputs
back; the upstream must read those outputs in the next turns.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from agents import (
    Agent,
    ApplyPatchTool,
    ComputerTool,
    OpenAIResponsesModel,
    Runner,
    ShellTool,
    set_tracing_disabled,
)
from agents.apply_diff import apply_diff
from agents.computer import Computer
from agents.editor import ApplyPatchOperation, ApplyPatchResult
from agents.tool import ShellCallOutcome, ShellCommandOutput, ShellCommandRequest, ShellResult
from openai import AsyncOpenAI

from tests.addon.e2e import sdk_targets, sdk_turns
from tests.addon.e2e.conftest import CLIENT_KEY, StartProxy
from tests.addon.e2e.sdk_targets import BEDROCK_CLAUDE, CLAUDE, GEMINI, QWEN
from tests.addon.e2e.upstream import Upstream
from tests.e2e.tool_images import is_image, png, tool_images
from tests.support.fake_upstream import Reply
from tests.support.mitmdump import MitmDump

pytestmark = pytest.mark.timeout(120)

ROUTES = {
    "tools-anthropic": ("anthropic", CLAUDE),
    "tools-chat": ("chat", QWEN),
    "tools-gemini": ("gemini", GEMINI),
    "tools-bedrock": ("bedrock", BEDROCK_CLAUDE),
}
COMMAND = "echo agents-shell-$((6*7))"
PRINTED = "agents-shell-42"
"""What the command prints: the shell ran it (the command's own text does not contain it)."""
PATCH = {"type": "create_file", "path": "notes.txt", "diff": "+written by the agent\n+through the gateway"}
PATCHED = "notes.txt created by the editor"
FINAL = "shell and patch done"


@pytest.fixture(scope="module", autouse=True)
def no_tracing() -> None:
    set_tracing_disabled(True)


@pytest.fixture(scope="module")
def proxy(start_proxy: StartProxy, module_dir: Path, upstream_server: Upstream) -> MitmDump:
    routes = sdk_targets.write_routes(module_dir / "client-tools-routes.toml", upstream_server.url, ROUTES)
    return sdk_targets.start(start_proxy, "client-tools", routes)


class Editor:
    """An `ApplyPatchEditor` writing into one folder with the SDK's own V4A diff reader."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def create_file(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        (self.root / operation.path).write_text(apply_diff("", operation.diff or "", mode="create"))
        return ApplyPatchResult(output=PATCHED)

    def update_file(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        path = self.root / operation.path
        path.write_text(apply_diff(path.read_text(), operation.diff or ""))
        return ApplyPatchResult(output=f"{operation.path} updated")

    def delete_file(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        (self.root / operation.path).unlink()
        return ApplyPatchResult(output=f"{operation.path} deleted")


def run_agent(proxy: MitmDump, client_model: str, work: Path, stream: bool) -> tuple[Any, list[list[str]]]:
    """One agent run with both tools; the result and the commands the shell was asked to run."""
    ran: list[list[str]] = []

    def shell(request: ShellCommandRequest) -> ShellResult:
        ran.append(list(request.data.action.commands))
        outputs = []
        for command in request.data.action.commands:
            done = subprocess.run(["bash", "-c", command], cwd=work, capture_output=True, text=True,
                                  timeout=10)
            outcome = ShellCallOutcome(type="exit", exit_code=done.returncode)
            outputs.append(ShellCommandOutput(stdout=done.stdout, stderr=done.stderr, command=command,
                                              outcome=outcome))
        return ShellResult(output=outputs)

    async def run() -> Any:
        client = AsyncOpenAI(base_url=f"{proxy.url}/v1", api_key=CLIENT_KEY, max_retries=0, timeout=15)
        agent = Agent(name="worker", instructions="Use the tools.",
                      model=OpenAIResponsesModel(model=client_model, openai_client=client),
                      tools=[ShellTool(executor=shell), ApplyPatchTool(editor=Editor(work))])
        if stream:
            result = Runner.run_streamed(agent, "run the command, then write notes.txt")
            async for _event in result.stream_events():
                pass
        else:
            result = await Runner.run(agent, "run the command, then write notes.txt")
        await client.close()
        return result

    return asyncio.run(run()), ran


def replies(dialect: str, stream: bool) -> list[Reply]:
    """The model's three turns: call `shell`, call `apply_patch`, answer."""
    return [sdk_turns.tool_call(dialect, "shell", {"commands": [COMMAND]}, "sh1", stream=stream),
            sdk_turns.tool_call(dialect, "apply_patch", PATCH, "ap1", stream=stream),
            sdk_turns.text(dialect, FINAL, stream=stream)]


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
@pytest.mark.parametrize("client_model", list(ROUTES))
def test_shell_and_apply_patch_complete_a_tool_loop(proxy: MitmDump, upstream: Upstream, tmp_path: Path,
                                                    client_model: str, stream: bool) -> None:
    dialect = ROUTES[client_model][0]
    for reply in replies(dialect, stream):
        upstream.plan(sdk_targets.planned(reply))
    result, ran = run_agent(proxy, client_model, tmp_path, stream)

    assert result.final_output == FINAL
    assert ran == [[COMMAND]]
    assert (tmp_path / "notes.txt").read_text() == "written by the agent\nthrough the gateway"
    first, second, third = (r.json for r in upstream.received)
    assert {"shell", "apply_patch"} <= set(sdk_turns.declared(first))
    # the upstream reads what the shell printed, then what the editor said
    assert PRINTED in json.dumps(second) and PRINTED not in json.dumps(first)
    assert "exit code 0" in json.dumps(second)
    assert PATCHED in json.dumps(third) and PATCHED not in json.dumps(second)
    # the SDK's own items, as it sent them back in its last request
    items = {item["type"]: item for item in result.to_input_list()
             if isinstance(item, dict) and "type" in item}
    assert items["shell_call"]["action"]["commands"] == [COMMAND]
    assert items["apply_patch_call"]["operation"] == PATCH
    assert items["apply_patch_call_output"]["status"] == "completed"


# -- computer use ------------------------------------------------------------------------------------

class Screen(Computer):
    """A computer that records what it is asked and shows a small picture."""

    def __init__(self) -> None:
        self.done: list[tuple[Any, ...]] = []

    @property
    def environment(self) -> Any:
        return "browser"

    @property
    def dimensions(self) -> tuple[int, int]:
        return (1024, 768)

    def screenshot(self) -> str:
        import base64
        return base64.b64encode(png()).decode()

    def click(self, x: int, y: int, button: Any) -> None:
        self.done.append(("click", x, y, button))

    def double_click(self, x: int, y: int) -> None:
        self.done.append(("double_click", x, y))

    def scroll(self, x: int, y: int, scroll_x: int, scroll_y: int) -> None:
        self.done.append(("scroll", x, y, scroll_x, scroll_y))

    def type(self, text: str) -> None:
        self.done.append(("type", text))

    def wait(self) -> None:
        self.done.append(("wait",))

    def move(self, x: int, y: int) -> None:
        self.done.append(("move", x, y))

    def keypress(self, keys: list[str]) -> None:
        self.done.append(("keypress", *keys))

    def drag(self, path: list[tuple[int, int]]) -> None:
        self.done.append(("drag", *path))


@pytest.mark.parametrize("client_model", list(ROUTES))
def test_computer_use_clicks_types_and_shows_the_upstream_its_screenshot(
        proxy: MitmDump, upstream: Upstream, client_model: str) -> None:
    dialect = ROUTES[client_model][0]
    actions = [{"type": "click", "x": 120, "y": 40, "button": "left"}, {"type": "type", "text": "gateway"}]
    upstream.plan(sdk_targets.planned(sdk_turns.tool_call(dialect, "computer", {"actions": actions}, "cu1",
                                                          stream=False)))
    upstream.plan(sdk_targets.planned(sdk_turns.text(dialect, "typed it", stream=False)))
    screen = Screen()

    async def run() -> Any:
        client = AsyncOpenAI(base_url=f"{proxy.url}/v1", api_key=CLIENT_KEY, max_retries=0, timeout=15)
        agent = Agent(name="operator", instructions="Use the computer.",
                      model=OpenAIResponsesModel(model=client_model, openai_client=client),
                      tools=[ComputerTool(computer=screen)])
        result = await Runner.run(agent, "type gateway into the search box")
        await client.close()
        return result

    result = asyncio.run(run())
    assert result.final_output == "typed it"
    assert screen.done == [("click", 120, 40, "left"), ("type", "gateway")]
    first, second = (r.json for r in upstream.received)
    assert "computer" in sdk_turns.declared(first)
    (image,) = tool_images(dialect, second)
    assert image[0] == "image/png" and is_image(image[1])
